//! A real pseudo-terminal for tests of terminal behaviour: the program runs with the
//! terminal as its controlling terminal (`setsid --ctty`, so Ctrl-C is a real SIGINT where
//! the program has not turned that off), at a chosen size, and what it draws is read into a
//! terminal emulator (`vt100`) whose screen, colours and cursor the test inspects.

use std::fs::File;
use std::io::{Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
use rustix::termios::{Winsize, tcsetwinsize};

/// How long a test waits for something to appear before it fails (a deadline for broken
/// behaviour, not a measurement).
const PATIENCE: Duration = Duration::from_secs(60);

/// A program running in a pseudo-terminal.
pub struct Term {
    master: File,
    rx: Receiver<Vec<u8>>,
    parser: vt100::Parser,
    raw: Vec<u8>,
    child: Child,
    /// The program's stdout when it was sent to a pipe rather than the terminal.
    pub stdout: Option<std::process::ChildStdout>,
    what: String,
}

/// A new pseudo-terminal's master side, closed on exec (the child gets the terminal only
/// through the slave side it is handed).
#[cfg(target_os = "linux")]
fn open_master() -> rustix::fd::OwnedFd {
    openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)
        .expect("open a pseudo-terminal")
}

/// macOS's `posix_openpt` takes no `O_CLOEXEC`: the flag is set right after, before this
/// harness starts any child.
#[cfg(not(target_os = "linux"))]
fn open_master() -> rustix::fd::OwnedFd {
    use rustix::io::{FdFlags, fcntl_getfd, fcntl_setfd};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("open a pseudo-terminal");
    let flags = fcntl_getfd(&master).expect("F_GETFD");
    fcntl_setfd(&master, flags | FdFlags::CLOEXEC).expect("F_SETFD FD_CLOEXEC");
    master
}

/// Where the program's stdout goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stdout {
    Terminal,
    Pipe,
}

impl Term {
    /// Starts `cmd` (its environment already set) in a `cols`×`rows` terminal; stdin and
    /// stderr are the terminal, stdout is the terminal or a pipe.
    pub fn spawn(cmd: Command, cols: u16, rows: u16, stdout: Stdout) -> Term {
        let master = open_master();
        grantpt(&master).expect("grantpt");
        unlockpt(&master).expect("unlockpt");
        let name = ptsname(&master, Vec::new()).expect("ptsname");
        tcsetwinsize(
            &master,
            Winsize {
                ws_row: rows,
                ws_col: cols,
                ws_xpixel: 0,
                ws_ypixel: 0,
            },
        )
        .expect("set the terminal size");
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(name.to_str().expect("pty name"))
            .expect("open the terminal's slave side");
        let what = format!("{cmd:?}");
        // `setsid --ctty` makes the terminal (its stdin) the controlling terminal of a new
        // session, as a terminal emulator does for the shell it starts.
        let program = cmd.get_program().to_os_string();
        let args: Vec<_> = cmd.get_args().map(|a| a.to_os_string()).collect();
        let mut wrapped = Command::new("setsid");
        wrapped.arg("--ctty").arg("--wait").arg(program).args(args);
        wrapped.env_clear();
        for (k, v) in cmd.get_envs() {
            if let Some(v) = v {
                wrapped.env(k, v);
            }
        }
        if let Some(dir) = cmd.get_current_dir() {
            wrapped.current_dir(dir);
        }
        wrapped
            .stdin(Stdio::from(slave.try_clone().expect("dup")))
            .stderr(Stdio::from(slave.try_clone().expect("dup")));
        match stdout {
            Stdout::Terminal => wrapped.stdout(Stdio::from(slave)),
            Stdout::Pipe => {
                drop(slave);
                wrapped.stdout(Stdio::piped())
            }
        };
        let mut child = wrapped.spawn().expect("start the program in the terminal");
        drop(wrapped);
        let stdout = child.stdout.take();
        let master = File::from(master);
        let mut reader = master.try_clone().expect("dup");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            // Reading fails (EIO) once every program holding the terminal has exited.
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Term {
            master,
            rx,
            parser: vt100::Parser::new(rows, cols, 0),
            raw: Vec::new(),
            child,
            stdout,
            what,
        }
    }

    /// Types `keys` (`"\x1b"` is Esc, `"\x03"` Ctrl-C, `"\t"` Tab, `"\r"` Enter).
    pub fn send(&mut self, keys: &str) {
        self.master
            .write_all(keys.as_bytes())
            .expect("type into the terminal");
        self.master.flush().expect("flush");
    }

    /// Reads what has arrived so far.
    fn pump(&mut self, wait: Duration) -> bool {
        match self.rx.recv_timeout(wait) {
            Ok(bytes) => {
                self.parser.process(&bytes);
                self.raw.extend_from_slice(&bytes);
                while let Ok(more) = self.rx.try_recv() {
                    self.parser.process(&more);
                    self.raw.extend_from_slice(&more);
                }
                true
            }
            Err(_) => false,
        }
    }

    /// Waits until `done` holds for the screen, failing the test (with the screen) if it
    /// never does.
    pub fn wait_for(&mut self, what: &str, done: impl Fn(&vt100::Screen) -> bool) {
        let until = Instant::now() + PATIENCE;
        loop {
            if done(self.parser.screen()) {
                return;
            }
            if Instant::now() > until {
                panic!(
                    "{}: waited in vain for {what}; the screen:\n{}",
                    self.what,
                    self.text()
                );
            }
            self.pump(Duration::from_millis(50));
        }
    }

    /// Waits until the screen shows `text`.
    pub fn wait_for_text(&mut self, text: &str) {
        self.wait_for(&format!("`{text}`"), |s| s.contents().contains(text));
    }

    /// The screen as text, trailing spaces trimmed.
    pub fn text(&self) -> String {
        let screen = self.parser.screen();
        let (_, cols) = screen.size();
        let rows: Vec<String> = screen.rows(0, cols).collect();
        let lines: Vec<&str> = rows.iter().map(|r| r.trim_end()).collect();
        lines.join("\n").trim_end().to_string() + "\n"
    }

    /// How many rows of the screen are continued on the next (a line wider than the
    /// terminal, wrapped by it).
    pub fn wrapped_rows(&self) -> usize {
        let screen = self.parser.screen();
        (0..screen.size().0)
            .filter(|&r| screen.row_wrapped(r))
            .count()
    }

    /// The screen.
    pub fn screen(&self) -> &vt100::Screen {
        self.parser.screen()
    }

    /// Everything the program wrote to the terminal, escapes included.
    pub fn raw(&self) -> &[u8] {
        &self.raw
    }

    /// Waits for the program to exit and for its last output.
    pub fn finish(&mut self) -> ExitStatus {
        let until = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(st) = self.child.try_wait().expect("wait") {
                break st;
            }
            if Instant::now() > until {
                let _ = self.child.kill();
                panic!("{}: did not exit; the screen:\n{}", self.what, self.text());
            }
            self.pump(Duration::from_millis(20));
        };
        while self.pump(Duration::from_millis(200)) {}
        status
    }

    /// The piped stdout, read to the end.
    pub fn stdout_text(&mut self) -> String {
        let mut s = String::new();
        if let Some(out) = self.stdout.as_mut() {
            out.read_to_string(&mut s).expect("read stdout");
        }
        s
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
