//! Bounded fan-out over a slice with scoped threads, results in input order, and the
//! share of the cores each task may use for its own threads.

use std::cell::Cell;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

static LIMIT: OnceLock<usize> = OnceLock::new();

thread_local! {
    /// The threads a task running on this thread may use; `None` outside any fan-out.
    static SHARE: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Caps [`workers`] at `n` (`GW_THREADS`); the first call wins.
pub fn set_limit(n: Option<usize>) {
    if let Some(n) = n.filter(|n| *n > 0) {
        let _ = LIMIT.set(n);
    }
}

/// How many threads to use for CPU work: the number of cores, or `GW_THREADS`.
pub fn workers() -> usize {
    // Asking the OS reads cgroup files each time: ask once.
    static CORES: OnceLock<usize> = OnceLock::new();
    LIMIT.get().copied().unwrap_or_else(|| {
        *CORES.get_or_init(|| {
            std::thread::available_parallelism()
                .map(NonZeroUsize::get)
                .unwrap_or(2)
        })
    })
}

/// How many threads the task running on this thread may use for its own parallel work
/// (a status within one repository): the cores that the fan-out it runs in (if any) left to
/// each of its tasks, so one huge repository gets every core and twenty small ones get one
/// each, never more threads than cores in all.
pub fn share() -> usize {
    SHARE.with(Cell::get).unwrap_or_else(workers)
}

/// How many child processes to keep busy at once: more than cores, because a git
/// mutation mostly waits (on the file system and on the processes it starts itself).
/// Measured on two cores: ten `git worktree add`s took 0.86 of their sequential time two at
/// a time, and 0.53 ten at a time.
pub fn process_workers() -> usize {
    (workers() * 4).min(16)
}

/// Like [`map`] for work that runs child processes: up to [`process_workers`] at once.
pub fn map_processes<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    map_with(items, process_workers(), f)
}

/// Applies `f` to every item on up to [`workers`] threads; results come back in order.
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    map_with(items, workers(), f)
}

/// Like [`map`], consuming the items (each is handed to `f` by value).
pub fn map_owned<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let cells: Vec<Mutex<Option<T>>> = items.into_iter().map(|t| Mutex::new(Some(t))).collect();
    map(&cells, |cell| {
        let item = cell
            .lock()
            .expect("no worker panics while holding the lock")
            .take()
            .expect("each item is taken once");
        f(item)
    })
}

/// Like [`map`] with an explicit worker count.
pub fn map_with<T: Sync, R: Send>(
    items: &[T],
    workers: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let n = workers.clamp(1, items.len().max(1));
    if n == 1 || items.len() <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    let each = (share() / n).max(1);
    std::thread::scope(|s| {
        for _ in 0..n {
            s.spawn(|| {
                SHARE.with(|c| c.set(Some(each)));
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= items.len() {
                        break;
                    }
                    let r = f(&items[i]);
                    results
                        .lock()
                        .expect("no worker panics while holding the lock")[i] = Some(r);
                }
            });
        }
    });
    results
        .into_inner()
        .expect("no worker panicked")
        .into_iter()
        .map(|r| r.expect("every index was processed"))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_order() {
        let v: Vec<u32> = (0..100).collect();
        assert_eq!(
            super::map_with(&v, 4, |x| x * 2),
            v.iter().map(|x| x * 2).collect::<Vec<_>>()
        );
        assert_eq!(super::map(&Vec::<u32>::new(), |x| *x), Vec::<u32>::new());
    }

    #[test]
    fn tasks_share_the_threads_of_their_fan_out() {
        let all = super::share();
        // One item runs on the caller's thread, with the caller's share.
        assert_eq!(super::map_with(&[0], 4, |_| super::share()), [all]);
        let shares = super::map_with(&[0, 1, 2, 3], 2, |_| super::share());
        assert!(shares.iter().all(|s| *s == (all / 2).max(1)), "{shares:?}");
        let nested = super::map_with(&[0, 1], 2, |_| {
            super::map_with(&[0, 1], 2, |_| super::share())
        });
        assert!(
            nested.iter().flatten().all(|s| *s == 1 || *s == all / 4),
            "{nested:?}"
        );
    }
}
