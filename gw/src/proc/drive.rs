//! Running a child to its end while reading its output line by line, and ending it (its
//! whole process group) on a deadline or a stop request.

use std::io::{self, BufRead, BufReader, Read};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

use super::{Cmd, Error, Status, Stop, Stream, signals};

/// After a child exits, how long to keep reading output that a background grandchild may
/// still be holding open before giving up on it.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(250);
/// Between SIGTERM and SIGKILL when a timeout fires.
const KILL_GRACE: Duration = Duration::from_millis(500);
/// How long to wait for SIGKILLed processes to be gone.
const KILL_SETTLE: Duration = Duration::from_secs(2);
/// How often a running child is checked (exit, deadline, stop request).
const TICK: Duration = Duration::from_millis(20);

impl Cmd {
    /// Runs the process, handing raw output lines (newline included) to `on_line`, and
    /// ends it (and its group) when `watch` says so.
    pub(super) fn drive(
        &self,
        watch: Watch<'_>,
        on_line: &mut dyn FnMut(Stream, &str),
    ) -> Result<Status, Error> {
        let mut child = self.spawn()?;
        let _tracked = signals::track(child.id(), !self.finish);
        let target = Target {
            pid: Pid::from_raw(child.id() as i32),
        };
        let (tx, rx) = mpsc::channel::<(Stream, String)>();
        let readers = [
            child
                .stdout
                .take()
                .map(|s| reader(Stream::Stdout, s, tx.clone(), self.split_cr)),
            child
                .stderr
                .take()
                .map(|s| reader(Stream::Stderr, s, tx.clone(), self.split_cr)),
        ];
        drop(tx);
        // Supervised children are also stopped when they end on their own but leave
        // something running in their group.
        let sweep = watch.stop.is_some();
        let mut open = true;
        let mut leader: Option<Status> = None;
        let mut phase = Phase::Running;
        let mut checked = Instant::now();
        let mut idle = Duration::from_micros(200);
        let status = loop {
            if open {
                match rx.recv_timeout(TICK) {
                    Ok((stream, line)) => {
                        on_line(stream, &line);
                        // A chatty child must not starve the checks below.
                        if checked.elapsed() < TICK {
                            continue;
                        }
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => open = false,
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                }
            } else if !matches!(phase, Phase::Done { .. }) {
                // The child closed its output but may still be running. It is usually
                // exiting (its pipes close as it exits): look again soon, then less often.
                // (A whole tick here made every git command of a create 0–20 ms longer.)
                std::thread::sleep(idle);
                idle = (idle * 2).min(TICK);
            }
            checked = Instant::now();
            if leader.is_none()
                && let Some(st) = child.try_wait().map_err(|e| self.spawn_error(e))?
            {
                leader = Some(Status::from_exit(st));
            }
            let now = Instant::now();
            phase = match phase {
                Phase::Running => {
                    if let Some(status) = leader {
                        if sweep && target.lingering() {
                            target.signal(Signal::TERM);
                            Phase::Ending {
                                status,
                                kill_at: now + watch.grace(),
                                seen: watch.requests(),
                            }
                        } else {
                            Phase::Done { status, at: now }
                        }
                    } else if watch.deadline.is_some_and(|d| now >= d) {
                        target.signal(Signal::TERM);
                        Phase::Ending {
                            status: Status::TimedOut,
                            kill_at: now + KILL_GRACE,
                            seen: watch.requests(),
                        }
                    } else if watch.stop_requested() {
                        target.signal(Signal::TERM);
                        Phase::Ending {
                            status: Status::Stopped,
                            kill_at: now + watch.grace(),
                            seen: watch.requests(),
                        }
                    } else {
                        Phase::Running
                    }
                }
                Phase::Ending {
                    status,
                    kill_at,
                    seen,
                } => {
                    if leader.is_some() && !target.lingering() {
                        Phase::Done { status, at: now }
                    } else if now >= kill_at || watch.requests() > seen {
                        target.signal(Signal::KILL);
                        if leader.is_none() {
                            let st = child.wait().map_err(|e| self.spawn_error(e))?;
                            leader = Some(Status::from_exit(st));
                        }
                        // SIGKILL is delivered asynchronously; once this returns, nothing
                        // of the group runs any more.
                        let until = Instant::now() + KILL_SETTLE;
                        while target.lingering() && Instant::now() < until {
                            std::thread::sleep(Duration::from_millis(5));
                        }
                        Phase::Done { status, at: now }
                    } else {
                        Phase::Ending {
                            status,
                            kill_at,
                            seen,
                        }
                    }
                }
                Phase::Done { status, at } => {
                    // A background process may still hold the pipes open; stop waiting
                    // for its output after a moment.
                    if !open || at.elapsed() >= DRAIN_AFTER_EXIT {
                        break status;
                    }
                    Phase::Done { status, at }
                }
            };
        };
        if !open {
            for r in readers.into_iter().flatten() {
                let _ = r.join();
            }
        }
        Ok(status)
    }
}

fn reader<R: Read + Send + 'static>(
    stream: Stream,
    r: R,
    tx: mpsc::Sender<(Stream, String)>,
    split_cr: bool,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut r = BufReader::new(r);
        let mut buf = Vec::new();
        let mut after_cr = false;
        loop {
            buf.clear();
            let read = if split_cr {
                read_until_eol(&mut r, &mut buf)
            } else {
                r.read_until(b'\n', &mut buf)
            };
            // The `\n` of a `\r\n` is not a line of its own.
            if split_cr && std::mem::replace(&mut after_cr, buf.ends_with(b"\r")) && buf == b"\n" {
                continue;
            }
            match read {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if tx
                        .send((stream, String::from_utf8_lossy(&buf).into_owned()))
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
    })
}

/// Reads up to and including the next `\n` or `\r`.
fn read_until_eol(r: &mut impl BufRead, buf: &mut Vec<u8>) -> io::Result<usize> {
    let mut total = 0;
    loop {
        let available = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(total);
        }
        let (n, done) = match available.iter().position(|&b| b == b'\n' || b == b'\r') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        buf.extend_from_slice(&available[..n]);
        r.consume(n);
        total += n;
        if done {
            return Ok(total);
        }
    }
}

/// What ends a running child besides its own exit.
pub(super) struct Watch<'a> {
    /// Terminate it after this instant (`Status::TimedOut`).
    pub(super) deadline: Option<Instant>,
    /// Terminate it on a request beyond the first `usize` ones (`Status::Stopped`).
    pub(super) stop: Option<(&'a Stop, usize)>,
}

impl Watch<'_> {
    fn stop_requested(&self) -> bool {
        self.stop.is_some_and(|(s, after)| s.requests() > after)
    }

    fn requests(&self) -> usize {
        self.stop.map_or(0, |(s, _)| s.requests())
    }

    fn grace(&self) -> Duration {
        self.stop.map_or(KILL_GRACE, |(s, _)| s.grace())
    }
}

/// Where a running child is in its life.
#[derive(Clone, Copy)]
enum Phase {
    Running,
    /// SIGTERM was sent to the group; SIGKILL follows at `kill_at`, or at once when the
    /// stop gets a request beyond `seen`.
    Ending {
        status: Status,
        kill_at: Instant,
        seen: usize,
    },
    /// Ended; only draining what is left in the pipes.
    Done {
        status: Status,
        at: Instant,
    },
}

/// A child to signal: the process group it leads.
struct Target {
    pid: Option<Pid>,
}

impl Target {
    fn signal(&self, sig: Signal) {
        if let Some(pid) = self.pid {
            let _ = rustix::process::kill_process_group(pid, sig);
        }
    }

    /// Once the child itself has been reaped: whether anything it started is still
    /// running in its group.
    fn lingering(&self) -> bool {
        self.pid.is_some_and(group_alive)
    }
}

/// Whether process group `pgid` has a member that is not a zombie. Zombies count for
/// `kill(-pgid, 0)`, and where PID 1 does not reap orphans (some containers) they linger,
/// so on Linux the members are looked up in `/proc`.
pub fn group_alive(pgid: Pid) -> bool {
    if rustix::process::test_kill_process_group(pgid).is_err() {
        return false;
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return true;
    };
    let want = pgid.as_raw_nonzero().get();
    entries.flatten().any(|e| {
        let name = e.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        // `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses.
        let Ok(stat) = std::fs::read(e.path().join("stat")) else {
            return false;
        };
        let stat = String::from_utf8_lossy(&stat);
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            return false;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next();
        let pgrp = fields.nth(1).and_then(|f| f.parse::<i32>().ok());
        pgrp == Some(want) && state != Some("Z") && state != Some("X")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp() -> std::path::PathBuf {
        std::env::temp_dir()
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        // The command would run for ten minutes; a background child would outlive it.
        let out = Cmd::shell("echo $$; sleep 600 & sleep 600", &tmp())
            .timeout(Some(Duration::from_millis(200)))
            .run()
            .unwrap();
        assert_eq!(out.status, Status::TimedOut);
        let pgid: i32 = out.stdout.trim().parse().unwrap();
        assert!(
            !group_alive(Pid::from_raw(pgid).unwrap()),
            "the background child was killed with its group"
        );
    }

    #[test]
    fn background_child_holding_pipes_does_not_hang() {
        // The background sleep keeps stdout open for ten minutes; the run returns while it
        // is still there.
        let out = Cmd::shell("sleep 600 & echo $!", &tmp())
            .stream(&mut |_, _| {})
            .unwrap();
        assert!(out.success());
        let pid = Pid::from_raw(out.stdout.trim().parse().unwrap()).unwrap();
        assert!(
            rustix::process::test_kill_process(pid).is_ok(),
            "returned before the background child ended"
        );
        rustix::process::kill_process(pid, Signal::KILL).unwrap();
    }
}
