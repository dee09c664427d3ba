//! A stop request shared by several supervised children (`gw run`).

use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use super::signals;

/// Between SIGTERM and SIGKILL when a [`Stop`] is requested: long enough for a dev server
/// to shut down cleanly (foreman and overmind wait 5 s too).
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// `SIGINT`, `SIGTERM`, … for a signal number.
pub fn signal_name(n: i32) -> String {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGKILL, SIGQUIT, SIGTERM};
    match n {
        SIGINT => "SIGINT".into(),
        SIGTERM => "SIGTERM".into(),
        SIGHUP => "SIGHUP".into(),
        SIGQUIT => "SIGQUIT".into(),
        SIGKILL => "SIGKILL".into(),
        n => format!("signal {n}"),
    }
}

/// Why a [`Stop`] was first requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// SIGINT (Ctrl-C) or SIGTERM; the signal number.
    Signal(i32),
    /// The deadline given to [`Stop::new`] passed.
    Timeout,
}

/// A stop request shared by every process of one run. Requests are counted: the first
/// ends the running processes gracefully, a further one kills what is still ending.
#[derive(Debug, Clone)]
pub struct Stop(Arc<StopState>);

#[derive(Debug)]
struct StopState {
    requests: AtomicUsize,
    reason: OnceLock<StopReason>,
    deadline: Option<Instant>,
    deadline_passed: AtomicBool,
    grace: Duration,
}

impl Stop {
    /// A stop with `grace` between SIGTERM and SIGKILL, requested by itself after
    /// `timeout` (unless something else asked first).
    pub fn new(grace: Duration, timeout: Option<Duration>) -> Stop {
        Stop(Arc::new(StopState {
            requests: AtomicUsize::new(0),
            reason: OnceLock::new(),
            deadline: timeout.map(|t| Instant::now() + t),
            deadline_passed: AtomicBool::new(false),
            grace,
        }))
    }

    pub fn request(&self, reason: StopReason) {
        let _ = self.0.reason.set(reason);
        self.0.requests.fetch_add(1, Ordering::SeqCst);
    }

    /// How many stops have been requested so far (a passed deadline counts once, and only
    /// when nothing was requested before it).
    pub fn requests(&self) -> usize {
        let s = &self.0;
        if let Some(d) = s.deadline
            && Instant::now() >= d
            && !s.deadline_passed.swap(true, Ordering::SeqCst)
            && s.requests.load(Ordering::SeqCst) == 0
        {
            self.request(StopReason::Timeout);
        }
        s.requests.load(Ordering::SeqCst)
    }

    /// Between SIGTERM and SIGKILL.
    pub(super) fn grace(&self) -> Duration {
        self.0.grace
    }

    /// Why the first stop was requested, if one was by the last [`Stop::requests`].
    pub fn reason(&self) -> Option<StopReason> {
        self.0.reason.get().copied()
    }

    /// Turns SIGINT, SIGTERM and SIGHUP ([`signals::stopping`]) into stop requests until the
    /// guard is dropped. A process
    /// group of its own keeps a child from seeing the terminal's Ctrl-C directly, so this
    /// is how it hears of it.
    pub fn on_signals(&self) -> io::Result<SignalGuard> {
        let mut signals = signal_hook::iterator::Signals::new(signals::stopping())?;
        let handle = signals.handle();
        let stop = self.clone();
        let thread = std::thread::spawn(move || {
            for sig in signals.forever() {
                stop.request(StopReason::Signal(sig));
            }
        });
        Ok(SignalGuard {
            handle,
            thread: Some(thread),
            _mode: signals::enter(signals::Mode::Delegate),
        })
    }
}

/// Keeps SIGINT and SIGTERM routed to a [`Stop`]. Dropping it stops listening; the
/// signals then stay caught (and ignored) for the rest of the process, which is about
/// to render its result and exit.
pub struct SignalGuard {
    handle: signal_hook::iterator::Handle,
    thread: Option<std::thread::JoinHandle<()>>,
    _mode: signals::ModeGuard,
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        self.handle.close();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use rustix::process::Pid;

    use super::*;
    use crate::proc::{Cmd, Error, Status, group_alive};

    fn tmp() -> std::path::PathBuf {
        std::env::temp_dir()
    }

    /// Supervises `script` on a thread; returns its status and, once `ready` appeared in
    /// its output, the group id it printed first (`echo $$`). Every line after that is
    /// sent on too.
    fn supervised(
        script: &str,
        stop: &Stop,
        ready: &'static str,
    ) -> (
        std::thread::JoinHandle<Result<Status, Error>>,
        mpsc::Receiver<i32>,
        mpsc::Receiver<String>,
    ) {
        let (tx, rx) = mpsc::channel();
        let (lines_tx, lines) = mpsc::channel();
        let cmd = Cmd::shell(&format!("echo $$; {script}"), &tmp());
        let stop = stop.clone();
        let handle = std::thread::spawn(move || {
            let mut pgid = None;
            let mut up = false;
            cmd.supervise(&stop, 0, &mut |_, line| match pgid {
                None => pgid = line.parse::<i32>().ok(),
                Some(id) if line == ready && !up => {
                    up = true;
                    let _ = tx.send(id);
                }
                Some(_) => {
                    let _ = lines_tx.send(line.to_string());
                }
            })
        });
        (handle, rx, lines)
    }

    fn gone(pgid: i32) -> bool {
        !group_alive(Pid::from_raw(pgid).unwrap())
    }

    #[test]
    fn a_stop_ends_the_whole_group() {
        let stop = Stop::new(Duration::from_secs(30), None);
        let (h, rx, _) = supervised("sleep 100 & echo up; sleep 100", &stop, "up");
        let pgid = rx.recv().unwrap();
        assert!(!gone(pgid));
        stop.request(StopReason::Signal(15));
        assert_eq!(h.join().unwrap().unwrap(), Status::Stopped);
        assert!(gone(pgid), "the background sleep went with its group");
        assert_eq!(stop.reason(), Some(StopReason::Signal(15)));
        // A command supervised after the request does not start.
        let st = Cmd::shell("exit 1", &tmp()).supervise(&stop, 0, &mut |_, _| {});
        assert_eq!(st.unwrap(), Status::Stopped);
        // One that only heeds later requests does.
        let st = Cmd::shell("exit 1", &tmp()).supervise(&stop, 1, &mut |_, _| {});
        assert_eq!(st.unwrap(), Status::Exited(1));
    }

    #[test]
    fn a_group_ignoring_sigterm_is_killed_on_a_second_request() {
        // The grace period is far longer than the test may take: only the second request
        // can end the group this soon.
        let stop = Stop::new(Duration::from_secs(600), None);
        let (h, rx, lines) = supervised(
            "trap 'echo got-term' TERM; echo up; while :; do sleep 1; done",
            &stop,
            "up",
        );
        let pgid = rx.recv().unwrap();
        stop.request(StopReason::Signal(2));
        while lines.recv().unwrap() != "got-term" {}
        assert!(
            !h.is_finished(),
            "SIGTERM was caught and ignored, so it is still ending"
        );
        stop.request(StopReason::Signal(2));
        assert_eq!(h.join().unwrap().unwrap(), Status::Stopped);
        assert!(gone(pgid));
    }

    #[test]
    fn leftovers_are_swept_when_the_leader_exits() {
        let stop = Stop::new(Duration::from_secs(30), None);
        let (h, rx, _) = supervised("sleep 100 & echo up", &stop, "up");
        let pgid = rx.recv().unwrap();
        assert_eq!(h.join().unwrap().unwrap(), Status::Exited(0));
        assert!(
            gone(pgid),
            "the background sleep did not outlive its leader"
        );
        assert_eq!(stop.requests(), 0);
    }

    #[test]
    fn a_deadline_is_one_request_and_a_chatty_child_still_meets_it() {
        let stop = Stop::new(Duration::from_secs(30), Some(Duration::from_millis(300)));
        let mut lines = 0usize;
        let st = Cmd::shell("while :; do echo line; done", &tmp())
            .supervise(&stop, 0, &mut |_, _| lines += 1)
            .unwrap();
        assert_eq!(st, Status::Stopped);
        assert!(lines > 0);
        assert_eq!(stop.reason(), Some(StopReason::Timeout));
        assert_eq!(stop.requests(), 1);
        // A deadline passing after another request adds nothing.
        let stop = Stop::new(Duration::from_secs(30), Some(Duration::from_millis(1)));
        stop.request(StopReason::Signal(2));
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(stop.requests(), 1);
        assert_eq!(stop.reason(), Some(StopReason::Signal(2)));
    }
}
