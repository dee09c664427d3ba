//! The chaos suites of issue 13, as a library `cargo xtask chaos` drives: [`kill`] kills
//! `gw` at seeded moments of its mutating commands and audits the world after recovery;
//! [`race`] runs sixteen mixed commands at once and audits the world after them.
//!
//! Both run the binary they are given (the xtask builds the release `gw`), rebuild their
//! world from a template at the same absolute path for every trial (so each trial starts
//! from the same disk, and the paths recorded inside it stay true), and return findings
//! instead of panicking, so one run reports every failure with the seed that replays it.
//! A trial is fully determined by its seed (command, signal, moment, jobs); what cannot be
//! replayed bit for bit is the operating system's scheduling around the moment.
#![allow(clippy::disallowed_methods)]

pub mod kill;
pub mod race;
mod world;

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::audit::Violation;

/// SplitMix64: small, seedable, the same on every platform.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// A number in `[0, 1)`.
    pub fn fraction(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// A seed from the clock, for a run that was given none (it is printed, so it replays).
pub fn clock_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    // Small enough to type; consecutive trials add one each.
    nanos % 1_000_000_000
}

/// One thing wrong with a trial: a kind (an auditor [`crate::audit::Kind`] or one of the
/// harness's own, such as `sigint_not_handled`) and what exactly.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    pub kind: String,
    pub detail: String,
}

impl Finding {
    pub fn new(kind: &str, detail: impl Into<String>) -> Finding {
        Finding {
            kind: kind.to_string(),
            detail: detail.into(),
        }
    }
}

impl From<Violation> for Finding {
    fn from(v: Violation) -> Finding {
        Finding {
            kind: v.kind.as_str().to_string(),
            detail: v.detail,
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.detail)
    }
}

/// The exit class of each error code, read from the table in `docs/agent-cli.md` (the
/// contract), so the suites judge exit codes by the document, not by a copy of it.
pub fn exit_class(code: &str) -> Option<i32> {
    static TABLE: OnceLock<BTreeMap<String, i32>> = OnceLock::new();
    TABLE
        .get_or_init(|| {
            let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/agent-cli.md");
            let text = std::fs::read_to_string(&doc)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", doc.display()));
            let mut table = BTreeMap::new();
            for line in text.lines() {
                let cells: Vec<&str> = line.split('|').map(str::trim).collect();
                let Some(exit) = cells.get(1).and_then(|c| c.parse::<i32>().ok()) else {
                    continue;
                };
                let Some(codes) = cells.get(3) else { continue };
                // Codes are the backticked UPPER_SNAKE words of the third column.
                for (i, part) in codes.split('`').enumerate() {
                    if i % 2 == 1
                        && !part.is_empty()
                        && part.chars().all(|c| c.is_ascii_uppercase() || c == '_')
                    {
                        table.insert(part.to_string(), exit);
                    }
                }
            }
            assert!(
                table.len() >= 20,
                "docs/agent-cli.md: the error-code table was not found ({table:?})"
            );
            table
        })
        .get(code)
        .copied()
}

/// What a `gw --format json` run printed, judged: `Ok(None)` for nothing at all (a process
/// killed before it printed), `Ok(Some(envelope))` for exactly one JSON document that is a
/// valid envelope (`docs/schema/envelope.json`) whose exit code matches its error's class,
/// else `Err` saying why.
pub fn judge_output(stdout: &str, exit: Option<i32>) -> Result<Option<Value>, String> {
    if stdout.trim().is_empty() {
        return Ok(None);
    }
    let value: Value = serde_json::from_str(stdout).map_err(|e| {
        format!(
            "stdout is not one JSON document ({e}): {}",
            clip(stdout, 300)
        )
    })?;
    let errors = crate::schema::errors("envelope", &value);
    if !errors.is_empty() {
        return Err(format!(
            "not a valid envelope: {}: {}",
            errors.join("; "),
            clip(stdout, 300)
        ));
    }
    if let Some(exit) = exit {
        let want = if value["ok"] == true {
            Some(0)
        } else {
            value["error"]["code"].as_str().and_then(exit_class)
        };
        // A partial failure's exit is its error's class too.
        if want != Some(exit) {
            return Err(format!(
                "exit {exit} but the envelope says {} (class {want:?})",
                error_code(&value).unwrap_or("ok")
            ));
        }
    }
    Ok(Some(value))
}

/// The envelope's `error.code`, when it is an error.
pub fn error_code(envelope: &Value) -> Option<&str> {
    envelope["error"]["code"].as_str()
}

/// At most `n` characters of `s`, on one line.
pub fn clip(s: &str, n: usize) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= n {
        one
    } else {
        format!("{}…", one.chars().take(n).collect::<String>())
    }
}

/// The environment variable that marks every process a trial starts (gw passes its
/// environment to git, hooks and `gw unlink-trash`), so the harness can find them all —
/// including the orphans of a killed gw — by reading `/proc/<pid>/environ`.
pub const MARK_VAR: &str = "GW_CHAOS_MARK";

/// Live processes (not zombies) whose environment carries `GW_CHAOS_MARK=<mark>`, with
/// their command lines.
pub fn marked_processes(mark: &str) -> Vec<(i32, String)> {
    let needle = format!("{MARK_VAR}={mark}\0");
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in entries.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(environ) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        if !environ
            .windows(needle.len())
            .any(|w| w == needle.as_bytes())
        {
            continue;
        }
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let state = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next())
            .unwrap_or("?");
        if matches!(state, "Z" | "X") {
            continue;
        }
        let cmdline = std::fs::read(e.path().join("cmdline"))
            .map(|b| {
                String::from_utf8_lossy(&b)
                    .replace('\0', " ")
                    .trim()
                    .to_string()
            })
            .unwrap_or_default();
        out.push((pid, cmdline));
    }
    out
}

/// Waits until no process carries `mark`; `Err` with the ones left after `timeout`.
pub fn wait_unmarked(mark: &str, timeout: Duration) -> Result<(), Vec<(i32, String)>> {
    let deadline = Instant::now() + timeout;
    loop {
        let live = marked_processes(mark);
        if live.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(live);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (up to two minutes) until every process a trial started has ended; those still
/// running then are a finding (`processes_linger`, after `when`) and are killed.
pub fn settle(mark: &str, when: &str) -> Option<Finding> {
    let left = wait_unmarked(mark, Duration::from_secs(120)).err()?;
    kill_marked(mark);
    Some(Finding::new(
        "processes_linger",
        format!("still running 120 s after {when}: {left:?}"),
    ))
}

/// SIGKILLs, one by one by pid, the processes a trial started that are still running.
pub fn kill_marked(mark: &str) {
    for (pid, _) in marked_processes(mark) {
        if let Some(p) = rustix::process::Pid::from_raw(pid) {
            let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
        }
    }
}

/// Whether `/proc` can be read (the suites find orphaned processes through it).
pub fn have_proc() -> bool {
    Path::new("/proc/self/environ").exists()
}
