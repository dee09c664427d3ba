//! `cargo xtask status-diff`: grove's status against git's on seeded random worktree states
//! (issue 26), as many as asked. Runs the `long_run` test of `gw/tests/status_diff.rs`
//! (which holds grove's side of the comparison) against the release `gw`, with the seeds
//! given in its environment; every seed is printed, and every disagreement with a script
//! that rebuilds it.

use crate::util;

pub const USAGE: &str =
    "usage: cargo xtask status-diff [--seeds N] [--seed S] [--states N] [--jobs N]

  --seeds N    seeds to run (default 100); seed i is S+i
  --seed S     the first seed (default: today's date as YYYYMMDD, printed)
  --states N   states per seed: each seed builds a world and changes it N times (default 10)
  --jobs N     seeds at once (default 2)

A disagreement prints its seed and state and a shell script that rebuilds the world and
shows both answers (run it with GW=/path/to/gw); the run fails.";

#[derive(Debug, PartialEq, Eq)]
pub struct Args {
    pub seeds: u64,
    pub seed: u64,
    pub states: u64,
    pub jobs: u64,
}

/// Today's date (UTC) as a number, YYYYMMDD.
pub fn date_seed() -> u64 {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y * 10_000 + m * 100 + d) as u64
}

pub fn parse(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        seeds: 100,
        seed: date_seed(),
        states: 10,
        jobs: 2,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut number = |name: &str| -> Result<u64, String> {
            let v = util::value(&mut it, name, USAGE)?;
            v.parse::<u64>()
                .map_err(|_| format!("{name}: `{v}` is not a number\n\n{USAGE}"))
        };
        match arg.as_str() {
            "--seeds" => a.seeds = number("--seeds")?,
            "--seed" => a.seed = number("--seed")?,
            "--states" => a.states = number("--states")?,
            "--jobs" => a.jobs = number("--jobs")?.max(1),
            other => return Err(format!("unknown argument `{other}`\n\n{USAGE}")),
        }
    }
    Ok(a)
}

pub fn run(args: &[String]) -> Result<(), String> {
    let a = parse(args)?;
    let root = util::project_root();
    let gw = util::build_release(&root, "gw")?;
    util::step(&format!(
        "status against git: seeds {}..{} ({} states each)",
        a.seed,
        a.seed + a.seeds,
        a.states
    ));
    println!(
        "replay with: cargo xtask status-diff --seed {} --seeds {} --states {}",
        a.seed, a.seeds, a.states
    );
    // `cargo test` rather than nextest: one test, its output as it comes.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = std::process::Command::new(cargo)
        .args([
            "test",
            "--locked",
            // The workspace, as the test run builds it: `-p gw` alone resolves other
            // features and rebuilds the dependencies.
            "--workspace",
            "--test",
            "status_diff",
            "--",
            "--ignored",
            "--exact",
            "long_run",
            "--nocapture",
        ])
        .current_dir(&root)
        .env("GW_BIN", &gw)
        .env("GW_STATUS_DIFF_SEED", a.seed.to_string())
        .env("GW_STATUS_DIFF_SEEDS", a.seeds.to_string())
        .env("GW_STATUS_DIFF_STATES", a.states.to_string())
        .env("GW_STATUS_DIFF_JOBS", a.jobs.to_string())
        .status()
        .map_err(|e| e.to_string())?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "grove disagreed with git (or the run failed); replay with \
             cargo xtask status-diff --seed {} --seeds {} --states {}",
            a.seed, a.seeds, a.states
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::words;

    #[test]
    fn arguments_are_read_and_checked() {
        let a = parse(&words("--seeds 5 --seed 7 --states 3 --jobs 0")).unwrap();
        assert_eq!(
            a,
            Args {
                seeds: 5,
                seed: 7,
                states: 3,
                jobs: 1
            }
        );
        assert!(parse(&words("--seeds")).is_err());
        assert!(parse(&words("--seeds x")).is_err());
        assert!(parse(&words("--fast")).is_err());
        let today = date_seed();
        assert!((20240101..22000101).contains(&today), "{today}");
        assert!((1..=12).contains(&(today / 100 % 100)) && (1..=31).contains(&(today % 100)));
    }
}
