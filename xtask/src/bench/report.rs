//! A measured case, its budgets, the load it ran at, and the table and JSON that report it.

use std::fmt::Write as _;
use std::sync::Mutex;

use super::Measure;

/// One measured case.
pub struct Case {
    pub name: &'static str,
    pub baseline: &'static str,
    /// What must hold for the case to be within budget (all of them).
    pub budgets: Vec<Budget>,
    pub m: Measure,
    /// The floor's medians and gw's ratios to it (create only).
    pub floor: Option<Floor>,
    pub peak_rss_kib: Option<u64>,
    /// The load averages it may be judged at (those it ran at are in `m`).
    pub load: LoadRange,
}

/// A budget: the largest value allowed of one figure.
#[derive(Clone, Copy, Debug)]
pub enum Budget {
    /// gw's wall-clock time over the baseline's (median of the per-pair ratios).
    Wall(f64),
    /// gw's CPU time over the baseline's.
    Cpu(f64),
    /// gw's wall-clock time over the floor's.
    FloorWall(f64),
    /// gw's median wall-clock time, in milliseconds.
    Ms(f64),
}

impl Budget {
    fn holds(&self, c: &Case) -> bool {
        let floor = |f: fn(&Floor) -> f64| c.floor.as_ref().map_or(f64::NAN, f);
        match *self {
            Budget::Wall(max) => c.m.ratio <= max,
            Budget::Cpu(max) => c.m.cpu_ratio <= max,
            Budget::FloorWall(max) => floor(|f| f.ratio) <= max,
            Budget::Ms(max) => c.m.gw_ms <= max,
        }
    }

    fn text(&self) -> String {
        match self {
            Budget::Wall(max) => format!("wall ≤ {max}"),
            Budget::Cpu(max) => format!("CPU ≤ {max}"),
            Budget::FloorWall(max) => format!("wall ≤ {max}× floor"),
            Budget::Ms(max) => format!("≤ {max} ms"),
        }
    }

    fn json(&self) -> serde_json::Value {
        let (of, max) = match *self {
            Budget::Wall(m) => ("wall_ratio", m),
            Budget::Cpu(m) => ("cpu_ratio", m),
            Budget::FloorWall(m) => ("floor_wall_ratio", m),
            Budget::Ms(m) => ("gw_ms", m),
        };
        serde_json::json!({ "of": of, "max": max })
    }
}

/// The floor of a create case (see `floor.rs`), timed in the same rounds as gw and git.
#[derive(Clone, Copy, Debug)]
pub struct Floor {
    pub wall_ms: f64,
    pub cpu_ms: f64,
    /// gw's wall-clock time over the floor's, median of the per-round ratios.
    pub ratio: f64,
    pub cpu_ratio: f64,
    pub threads: usize,
}

/// The one-minute load averages a case may be judged at. Outside them it is reported and
/// marked, not judged: a budget holds on a machine that is as quiet (or as busy) as stated.
#[derive(Clone, Copy, Debug)]
pub struct LoadRange {
    pub min: f64,
    pub max: f64,
}

impl LoadRange {
    /// A quiet machine: the bench itself keeps about one core busy; at most one more core's
    /// worth of other work.
    pub fn quiet() -> LoadRange {
        LoadRange {
            min: 0.0,
            max: cores() + 1.0,
        }
    }

    /// Under load: every core busy besides the case (its own busy threads make that
    /// climb to about `cores + 2`), and not much beyond.
    pub fn busy() -> LoadRange {
        LoadRange {
            min: cores(),
            max: cores() + 3.0,
        }
    }
}

pub fn cores() -> f64 {
    std::thread::available_parallelism().map_or(2, |n| n.get()) as f64
}

/// The load averages seen while a case ran: at its start, after each timed run, at its end.
#[derive(Clone, Copy, Debug, Default)]
pub struct Seen {
    pub min: f64,
    pub max: f64,
}

static SAMPLES: Mutex<Vec<f64>> = Mutex::new(Vec::new());

/// The one-minute load average now (`NaN` when it cannot be read).
pub fn loadavg() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(f64::NAN)
}

/// Records the load average now, for the case running.
pub fn sample_load() {
    SAMPLES.lock().expect("not poisoned").push(loadavg());
}

/// Starts recording a case's load averages.
pub fn watch_load() {
    let mut s = SAMPLES.lock().expect("not poisoned");
    s.clear();
    s.push(loadavg());
}

/// The load averages recorded since [`watch_load`], and one now.
pub fn seen_load() -> Seen {
    sample_load();
    let s = SAMPLES.lock().expect("not poisoned");
    let ok = s.iter().copied().filter(|v| v.is_finite());
    Seen {
        min: ok.clone().fold(f64::INFINITY, f64::min),
        max: ok.fold(f64::NEG_INFINITY, f64::max),
    }
}

impl Case {
    pub fn new(
        name: &'static str,
        baseline: &'static str,
        budgets: Vec<Budget>,
        m: Measure,
    ) -> Case {
        Case {
            name,
            baseline,
            budgets,
            m,
            floor: None,
            peak_rss_kib: None,
            load: LoadRange::quiet(),
        }
    }

    pub fn within(&self) -> bool {
        self.budgets.iter().all(|b| b.holds(self))
    }

    /// Whether the load stayed in the case's range (an unreadable load average is out).
    pub fn load_ok(&self) -> bool {
        self.m.seen.min >= self.load.min && self.m.seen.max <= self.load.max
    }

    /// Whether the budgets are judged: a full run, at a load in range.
    pub fn judged(&self, quick: bool) -> bool {
        !quick && self.load_ok()
    }

    fn verdict(&self, quick: bool) -> String {
        let budgets = self
            .budgets
            .iter()
            .map(Budget::text)
            .collect::<Vec<_>>()
            .join(", ");
        if quick {
            return format!("{budgets} (not judged: --quick)");
        }
        if !self.load_ok() {
            return format!(
                "{budgets} (not judged: load {:.2}–{:.2} outside {}–{})",
                self.m.seen.min, self.m.seen.max, self.load.min, self.load.max
            );
        }
        let over: Vec<String> = self
            .budgets
            .iter()
            .filter(|b| !b.holds(self))
            .map(Budget::text)
            .collect();
        if over.is_empty() {
            format!("{budgets} ✓")
        } else {
            format!("{budgets} ✗ over: {}", over.join(", "))
        }
    }

    pub fn json(&self, quick: bool) -> serde_json::Value {
        let m = &self.m;
        serde_json::json!({
            "case": self.name, "baseline": self.baseline, "gw_ms": m.gw_ms,
            "baseline_ms": m.base_ms, "ratio": m.ratio, "gw_cpu_ms": m.gw_cpu_ms,
            "baseline_cpu_ms": m.base_cpu_ms, "cpu_ratio": m.cpu_ratio,
            "floor": self.floor.map(|f| serde_json::json!({
                "wall_ms": f.wall_ms, "cpu_ms": f.cpu_ms, "ratio": f.ratio,
                "cpu_ratio": f.cpu_ratio, "threads": f.threads,
            })),
            "budgets": self.budgets.iter().map(Budget::json).collect::<Vec<_>>(),
            "within_budget": self.within(), "judged": self.judged(quick),
            "load": { "min": self.m.seen.min, "max": self.m.seen.max,
                      "range": [self.load.min, self.load.max] },
            "peak_rss_kib": self.peak_rss_kib,
        })
    }
}

/// The table of every case, as markdown.
pub fn table(cases: &[Case], quick: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n| case | gw (median) | baseline (median) | ratio, wall (median of pairs) | ratio, CPU | floor (median) | gw / floor, wall, CPU | budget | load | peak RSS |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|---|");
    for c in cases {
        let m = &c.m;
        let judged_by_ratio = c.budgets.iter().any(|b| matches!(b, Budget::Wall(_)));
        let _ = writeln!(
            out,
            "| {} | {:.1} ms, CPU {:.1} ms | {:.1} ms, CPU {:.1} ms ({}) | {} | {:.3} | {} | {} | {} | {:.2}–{:.2} | {} |",
            c.name,
            m.gw_ms,
            m.gw_cpu_ms,
            m.base_ms,
            m.base_cpu_ms,
            c.baseline,
            if judged_by_ratio && !quick {
                format!("**{:.3}**", m.ratio)
            } else {
                format!("{:.3}", m.ratio)
            },
            m.cpu_ratio,
            c.floor.map_or("-".into(), |f| format!(
                "{:.1} ms, CPU {:.1} ms ({} threads)",
                f.wall_ms, f.cpu_ms, f.threads
            )),
            c.floor.map_or("-".into(), |f| format!(
                "**{:.3}**, {:.3}",
                f.ratio, f.cpu_ratio
            )),
            c.verdict(quick),
            c.m.seen.min,
            c.m.seen.max,
            c.peak_rss_kib
                .map(|k| format!("{:.1} MiB", k as f64 / 1024.0))
                .unwrap_or_else(|| "-".into()),
        );
    }
    out
}

/// The closing line's verdict: how many cases are over budget, and how many were not
/// judged for their load.
pub fn verdict(cases: &[Case], quick: bool) -> String {
    if quick {
        // Fixtures this small measure start-up, not the work the budgets are about.
        return "every case works (budgets are judged at full scale only)".to_string();
    }
    let unjudged = cases.iter().filter(|c| !c.load_ok()).count();
    let over = cases.iter().filter(|c| c.load_ok() && !c.within()).count();
    let judged = cases.len() - unjudged;
    let mut text = match (judged, over) {
        (0, _) => "no case judged".to_string(),
        (_, 0) => format!("every case judged ({judged}) within budget"),
        (_, n) => format!("{n} of the {judged} judged over budget"),
    };
    if unjudged > 0 {
        let _ = write!(
            text,
            "; {unjudged} not judged (load out of range: run again on a quieter machine)"
        );
    }
    text
}
