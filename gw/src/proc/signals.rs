//! What SIGINT (Ctrl-C), SIGTERM and SIGHUP (the terminal closed) do to a running `gw`.
//!
//! `gw` starts one watcher ([`watch`]) before it even parses its arguments, and gives it
//! the reporter ([`install`]) once it knows how to report. What a signal then
//! does depends on the [`Mode`] the command is in:
//!
//! - [`Mode::Exit`] (the default: nothing is half-done): grove's children get SIGTERM (but
//!   git, which finishes what it started) and the process ends at once with `CANCELLED`,
//!   reported by the function given to [`install`] (the output layer's).
//! - [`Mode::Interrupt`] (a transaction changing things): the request is recorded and the
//!   children get SIGTERM (but git: the step running finishes); the operation sees
//!   [`requested`], starts no further step, rolls back, and reports `CANCELLED`.
//! - [`Mode::Defer`] (undoing, or finishing past a commit point, or a rebase that must not
//!   be cut short): the request is only recorded; the operation finishes what it is doing.
//! - [`Mode::Delegate`] (`gw run`): a [`super::Stop`] handles the signals itself.
//!
//! Children are process-group leaders (see [`super::Cmd`]), so a Ctrl-C at the terminal
//! reaches grove alone; [`track`] lists them for the watcher.

use std::io;
use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, AtomicU8, Ordering};

/// How a signal is handled at the moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Mode {
    Exit = 0,
    Interrupt = 1,
    Defer = 2,
    Delegate = 3,
}

impl Mode {
    fn from_u8(v: u8) -> Mode {
        match v {
            1 => Mode::Interrupt,
            2 => Mode::Defer,
            3 => Mode::Delegate,
            _ => Mode::Exit,
        }
    }
}

static MODE: AtomicU8 = AtomicU8::new(Mode::Exit as u8);
/// Held to change the mode, and by the watcher from deciding to end the process until it
/// has: a command cannot enter a transaction (and write its journal) while the process is
/// being ended in `Exit` mode.
static TRANSITION: Mutex<()> = Mutex::new(());
/// The first signal received outside `Delegate` mode, or 0.
static FIRST: AtomicI32 = AtomicI32::new(0);
static EXIT: OnceLock<fn(i32)> = OnceLock::new();

/// Starts the watcher, once: from then on SIGINT and SIGTERM are grove's to handle. `gw`
/// calls it first thing, before it parses its arguments; a signal that comes before
/// [`install`] gives the reporter is recorded, and reported by `install`.
pub fn watch() -> io::Result<()> {
    static STARTED: OnceLock<Result<(), io::ErrorKind>> = OnceLock::new();
    let started = STARTED.get_or_init(|| {
        let mut signals = signal_hook::iterator::Signals::new(stopping()).map_err(|e| e.kind())?;
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                for sig in signals.forever() {
                    on_signal(sig);
                }
            })
            .map(drop)
            .map_err(|e| e.kind())
    });
    started.map_err(io::Error::from)
}

/// Gives the watcher (started here if it was not) the function that reports a
/// cancellation in `Exit` mode and ends the process. A signal that came before, while
/// nothing was half-done, is reported at once. The first call wins; later calls do
/// nothing.
pub fn install(exit: fn(i32)) -> io::Result<()> {
    watch()?;
    let _transition = TRANSITION.lock().unwrap_or_else(|p| p.into_inner());
    if EXIT.set(exit).is_err() {
        return Ok(());
    }
    if Mode::from_u8(MODE.load(Ordering::SeqCst)) == Mode::Exit
        && let Some(sig) = requested()
    {
        exit(sig);
    }
    Ok(())
}

/// The signals that ask `gw` to stop: SIGINT, SIGTERM and SIGHUP — a closed terminal or a
/// lost ssh connection is a cancellation too (the dev servers of `gw run` are stopped, a
/// transaction rolled back) —, but SIGHUP only when it was not ignored when `gw` started
/// (`nohup gw …` asks to outlive the terminal). Decided once, before any is caught.
pub fn stopping() -> &'static [i32] {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    static SET: OnceLock<Vec<i32>> = OnceLock::new();
    SET.get_or_init(|| {
        let mut set = vec![SIGINT, SIGTERM];
        if !ignored(SIGHUP) {
            set.push(SIGHUP);
        }
        set
    })
}

/// Whether `sig` is ignored (`SIG_IGN`) at the moment.
#[allow(unsafe_code)]
fn ignored(sig: i32) -> bool {
    // SAFETY: `sigaction` with no new action only writes the current one into `old`, a
    // plain C struct for which all zeroes is a valid value.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

fn on_signal(sig: i32) {
    let transition = TRANSITION.lock().unwrap_or_else(|p| p.into_inner());
    let mode = Mode::from_u8(MODE.load(Ordering::SeqCst));
    if mode == Mode::Delegate {
        return;
    }
    let _ = FIRST.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
    match mode {
        Mode::Exit => {
            terminate_children();
            // Ends the process, still holding `transition`; before `install`, the signal
            // is only recorded, and `install` reports it.
            if let Some(exit) = EXIT.get() {
                exit(sig);
            }
        }
        Mode::Interrupt => terminate_children(),
        Mode::Defer | Mode::Delegate => {}
    }
    drop(transition);
}

/// The signal that asked this process to stop, if one did (outside `Delegate` mode).
pub fn requested() -> Option<i32> {
    match FIRST.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

/// Switches to `mode` until the guard is dropped, which restores the mode before it. A
/// signal that came while interrupting was not allowed is not replayed: [`requested`]
/// says it came.
pub fn enter(mode: Mode) -> ModeGuard {
    let _transition = TRANSITION.lock().unwrap_or_else(|p| p.into_inner());
    let previous = MODE.swap(mode as u8, Ordering::SeqCst);
    ModeGuard { previous }
}

#[must_use]
pub struct ModeGuard {
    previous: u8,
}

impl ModeGuard {
    /// Switches to `mode`; dropping the guard still restores the mode from before it.
    /// (Assigning a new guard over this one would not do: dropping the old one would
    /// restore that mode at once, over the new one.)
    pub fn switch(&mut self, mode: Mode) {
        let _transition = TRANSITION.lock().unwrap_or_else(|p| p.into_inner());
        MODE.store(mode as u8, Ordering::SeqCst);
    }
}

impl Drop for ModeGuard {
    fn drop(&mut self) {
        let _transition = TRANSITION.lock().unwrap_or_else(|p| p.into_inner());
        MODE.store(self.previous, Ordering::SeqCst);
    }
}

fn children() -> std::sync::MutexGuard<'static, Vec<u32>> {
    static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());
    CHILDREN.lock().unwrap_or_else(|p| p.into_inner())
}

/// Lists a running child (a process-group leader) until the guard is dropped; only one
/// that may be stopped half way (`terminate`: hooks, not git) is ever signalled.
pub(super) fn track(pid: u32, terminate: bool) -> Tracked {
    if terminate {
        children().push(pid);
    }
    Tracked(pid)
}

pub(super) struct Tracked(u32);

impl Drop for Tracked {
    fn drop(&mut self) {
        let mut c = children();
        if let Some(i) = c.iter().position(|p| *p == self.0) {
            c.swap_remove(i);
        }
    }
}

/// SIGTERM to the process group of every running child that may be stopped half way
/// (hooks and commands, never git, which finishes its step).
fn terminate_children() {
    for pid in children().iter() {
        if let Some(pid) = rustix::process::Pid::from_raw(*pid as i32) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::TERM);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    const CHILD: &str = "GROVE_SIGNALS_TEST_CHILD";
    const NAME: &str = "proc::signals::tests::a_signal_before_the_reporter_is_reported_by_install";

    /// A SIGINT that comes after [`watch`] and before [`install`] gives the reporter (while
    /// `gw` parses its arguments) neither ends the process as the OS would nor is lost:
    /// `install` reports it. Run in a child process of this test binary, since it changes
    /// what the whole process does on SIGINT.
    #[test]
    // The child is this test binary itself, told by its environment which part it plays.
    #[allow(clippy::disallowed_methods)]
    fn a_signal_before_the_reporter_is_reported_by_install() {
        if std::env::var_os(CHILD).is_some() {
            watch().expect("the watcher starts");
            let me = rustix::process::getpid();
            rustix::process::kill_process(me, rustix::process::Signal::INT).expect("SIGINT");
            let deadline = Instant::now() + Duration::from_secs(60);
            while requested().is_none() {
                assert!(Instant::now() < deadline, "the SIGINT was never recorded");
                std::thread::sleep(Duration::from_millis(1));
            }
            install(|sig| std::process::exit(100 + sig)).expect("the reporter is given");
            // `install` did not report the signal.
            std::process::exit(1);
        }
        let exe = std::env::current_exe().expect("the test binary");
        let out = std::process::Command::new(exe)
            .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .output()
            .expect("the test binary runs");
        assert_eq!(
            out.status.code(),
            Some(100 + 2),
            "the child ended {:?}\nstdout: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
