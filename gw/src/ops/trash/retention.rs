//! Retention: a retained entry stays for `trash.keep`, and the oldest go first while the
//! trash holds more than `trash.max_size`. No daemon: every mutating command purges what
//! has expired, a bounded number of entries at a time ([`sweep`]), and a delete measures
//! its entry afterwards in a detached process ([`tidy`]). `gw trash empty` purges by
//! request; `gw doctor --fix` never does.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use serde::Serialize;

use super::kept::{self, Kept};
use crate::config::Retention;
use crate::error::Result;
use crate::fsx;
use crate::ops::Ctx;
use crate::ops::safety::{keep, remove};
use crate::state::trash::{KeptRef, Size, entry_refs};

/// The most entries one command purges on its way ([`sweep`]): the rest wait for the next.
pub const SWEEP_LIMIT: usize = 4;

/// The entries of `kept` (oldest first) that retention lets go at `now`: those older than
/// `keep`, then the oldest while the rest hold more than `max_size` — never the newest for
/// its size, so the last delete can always be undone. An entry not measured yet counts as
/// empty. Returns their indices, oldest first.
pub fn expired(kept: &[Kept], now: Timestamp, retention: Retention) -> Vec<usize> {
    let keep = jiff::SignedDuration::try_from(retention.keep).unwrap_or(jiff::SignedDuration::MAX);
    let mut out: Vec<usize> = kept
        .iter()
        .enumerate()
        .filter(|(_, k)| k.deleted.is_some_and(|d| now.duration_since(d) >= keep))
        .map(|(i, _)| i)
        .collect();
    let mut total: u64 = kept
        .iter()
        .enumerate()
        .filter(|(i, _)| !out.contains(i))
        .map(|(_, k)| k.size.map_or(0, |s| s.bytes))
        .fold(0u64, u64::saturating_add);
    // The newest entry stays whatever its size: the last delete can always be undone.
    let newest = kept.len().saturating_sub(1);
    for (i, k) in kept.iter().enumerate().take(newest) {
        if total <= retention.max_size {
            break;
        }
        if !out.contains(&i) {
            out.push(i);
            total = total.saturating_sub(k.size.map_or(0, |s| s.bytes));
        }
    }
    out.sort_unstable();
    out
}

/// The time retention is judged at: now, or `GW_TEST_NOW` in the tests of retention.
pub fn now(ctx: &Ctx<'_>) -> Timestamp {
    ctx.env
        .test_now
        .as_deref()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(Timestamp::now)
}

/// The source repositories grove knows (a workspace in state uses it, or it is in a
/// repository directory), with symlinks resolved: the only ones a record may make grove
/// act in.
pub fn known_sources(ctx: &Ctx<'_>) -> BTreeSet<PathBuf> {
    let (config, state) = (ctx.config().ok(), ctx.state().ok());
    crate::ops::repos::known_sources(ctx, config.as_ref(), state.as_ref())
        .iter()
        .filter_map(|p| fsx::canonical_lenient(p))
        .collect()
}

/// The references the entry `k` keeps, found under its prefix (`refs/grove/trash/<id>/`)
/// in each of its repositories that grove knows (`known`): a record naming another
/// repository makes grove act in none.
pub fn refs_of(k: &Kept, known: &BTreeSet<PathBuf>) -> Vec<KeptRef> {
    let Some(id) = k.layout().id() else {
        return Vec::new();
    };
    refs_in(
        &id,
        k.record
            .repos
            .iter()
            .map(|r| (r.repo.as_str(), r.source.as_path())),
        known,
    )
}

/// The references of the entry `id` in the repositories `sources` (name, path) that are in
/// `known`.
pub fn refs_in<'a>(
    id: &str,
    sources: impl Iterator<Item = (&'a str, &'a Path)>,
    known: &BTreeSet<PathBuf>,
) -> Vec<KeptRef> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (repo, source) in sources {
        let Some(canonical) = fsx::canonical_lenient(source) else {
            continue;
        };
        if !known.contains(&canonical) || !seen.insert(canonical) {
            continue;
        }
        let Ok(found) =
            crate::git::Repo::open(source).and_then(|g| g.references_under(&entry_refs(id)))
        else {
            continue;
        };
        out.extend(found.into_iter().map(|(name, oid)| KeptRef {
            repo: repo.to_string(),
            source: source.to_path_buf(),
            name,
            oid,
        }));
    }
    out
}

/// Purges an entry: its record first (it is no longer restorable), then the references
/// that kept its branches' tips, then its files — here, or in a detached process when
/// `background` (a large tree is not erased on a command's way). Under the lock of the
/// workspace's name, which a restore of it holds: `false` when it was restored (or
/// purged) meanwhile.
pub fn purge(ctx: &Ctx<'_>, k: &Kept, background: bool) -> Result<bool> {
    ctx.territory().check_trash_entry(&k.entry)?;
    let _lock = crate::ops::tx::workspace_lock(ctx, &k.record.name)?;
    if !kept::is_retained(&k.entry) {
        return Ok(false);
    }
    let refs = refs_of(k, &known_sources(ctx));
    fsx::remove_file(&k.layout().record())?;
    for r in refs {
        // A reference moved since is not the entry's any more; it stays.
        let _ = keep::kept_ref(ctx, &r.source, &r.name, &r.oid);
    }
    if background {
        super::unlink_in_background(ctx, &k.entry);
    } else {
        remove::trash(ctx, &k.entry)?;
    }
    Ok(true)
}

/// On a mutating command's way: purges up to [`SWEEP_LIMIT`] entries retention lets go,
/// their files in the background. Failures are left for the next command. Not when the
/// command started a [`tidy`], which purges all of them.
pub fn sweep(ctx: &Ctx<'_>) {
    if TIDY_STARTED.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let Ok(config) = ctx.config() else {
        return;
    };
    let contents = kept::contents(ctx);
    let now = now(ctx);
    for i in expired(&contents.kept, now, config.trash)
        .into_iter()
        .take(SWEEP_LIMIT)
    {
        let _ = purge(ctx, &contents.kept[i], true);
    }
}

/// How much the tree at `path` holds: bytes on disk and files, symbolic links not
/// followed.
pub fn measure(path: &Path) -> Size {
    use std::os::unix::fs::MetadataExt;
    let mut size = Size::default();
    for e in walkdir::WalkDir::new(path)
        .follow_links(false)
        .into_iter()
        .flatten()
    {
        if let Ok(m) = e.metadata() {
            size.bytes += m.blocks() * 512;
            if !m.is_dir() {
                size.files += 1;
            }
        }
    }
    size
}

/// `gw trash tidy` (hidden; started detached after a delete): measures `entry` when given,
/// then keeps the trash within its limits ([`sweep`], its files erased here).
pub fn tidy(ctx: &Ctx<'_>, entry: Option<&Path>) -> Result<TidyReport> {
    // Measuring walks every file of a workspace: never ahead of what the user does next.
    crate::proc::lower_priority();
    let mut report = TidyReport::default();
    if let Some(entry) = entry {
        ctx.territory().check_trash_entry(entry)?;
    }
    // The given entry, and any other not measured yet (its own tidy never ran, or was
    // killed): an entry counts against `max_size` once it is measured.
    let unmeasured: Vec<Kept> = kept::contents(ctx)
        .kept
        .into_iter()
        .filter(|k| k.size.is_none() || entry.is_some_and(|e| e == k.entry))
        .collect();
    for k in unmeasured {
        let size = measure(&k.entry);
        // Written under the lock a restore or purge of the entry holds, and only while it
        // is still retained: never into an entry on its way out.
        let _lock = crate::ops::tx::workspace_lock(ctx, &k.record.name)?;
        if kept::is_retained(&k.entry) {
            size.write(&k.layout())?;
            if entry.is_some_and(|e| e == k.entry) {
                report.measured = Some(size.bytes);
            }
        }
    }
    let config = ctx.config()?;
    let contents = kept::contents(ctx);
    for i in expired(&contents.kept, now(ctx), config.trash) {
        if purge(ctx, &contents.kept[i], false).unwrap_or(false) {
            report.purged += 1;
        }
    }
    Ok(report)
}

/// `gw trash tidy`'s result.
#[derive(Debug, Default, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct TidyReport {
    /// The bytes the entry measured.
    pub measured: Option<u64>,
    /// Entries purged.
    pub purged: usize,
}

/// Starts [`tidy`] in a detached process (`entry`: the one a delete just made), at the
/// lowest priority: the measuring walk must not slow whatever the user does next.
pub fn tidy_in_background(ctx: &Ctx<'_>, entry: Option<&Path>) {
    let Some(exe) = &ctx.env.exe else {
        return;
    };
    let mut cmd = crate::proc::Cmd::new(exe, ctx.home.root());
    cmd.args(["trash", "tidy"]);
    if let Some(entry) = entry {
        cmd.arg(entry);
    }
    if cmd.spawn_detached().is_ok() {
        TIDY_STARTED.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// This process started a [`tidy`].
static TIDY_STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// How long ago `t` was, as `3d`, `5h`, `12m` or `now`.
pub fn ago(now: Timestamp, t: Timestamp) -> String {
    let secs = now.duration_since(t).as_secs().max(0) as u64;
    crate::duration::format_age(Duration::from_secs(secs))
}

/// `gw trash empty`'s result.
#[derive(Debug, Default, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct EmptyReport {
    /// The entries erased (with `--dry-run`: that would be).
    pub purged: Vec<Purged>,
    /// `--dry-run`: nothing was erased.
    pub dry_run: bool,
    pub count: usize,
    /// The bytes they held, as measured (entries not measured yet count nothing).
    pub bytes: u64,
    #[serde(skip)]
    pub warnings: Vec<String>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Purged {
    pub id: String,
    pub name: String,
    pub bytes: Option<u64>,
}

/// `gw trash empty [--older-than D]`: erases every entry (that went longer than `older`
/// ago), each under its workspace's lock so a restore of it is never cut short.
pub fn empty(ctx: &Ctx<'_>, older: Option<Duration>, dry_run: bool) -> Result<EmptyReport> {
    let now = now(ctx);
    let contents = kept::contents(ctx);
    let mut report = EmptyReport {
        dry_run,
        ..EmptyReport::default()
    };
    for k in &contents.kept {
        if let Some(older) = older {
            let old_enough = k.deleted.is_some_and(|d| {
                jiff::SignedDuration::try_from(older).is_ok_and(|o| now.duration_since(d) >= o)
            });
            if !old_enough {
                continue;
            }
        }
        let purged = if dry_run {
            Ok(true)
        } else {
            purge(ctx, k, false)
        };
        match purged {
            Ok(true) => report.purged.push(Purged {
                id: k.id.clone(),
                name: k.record.name.clone(),
                bytes: k.size.map(|s| s.bytes),
            }),
            Ok(false) => {}
            Err(e) => report.warnings.push(format!("{}: {}", k.id, e.message)),
        }
    }
    report.count = report.purged.len();
    report.bytes = report
        .purged
        .iter()
        .filter_map(|p| p.bytes)
        .fold(0u64, u64::saturating_add);
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::trash::{Reason, Record, VERSION};

    fn kept(id: &str, deleted: &str, bytes: Option<u64>) -> Kept {
        let ws: crate::state::Workspace = serde_json::from_value(serde_json::json!({
            "name": id, "path": format!("/w/{id}"), "branch": "b",
            "created_at": "2026-12-01T10:00:00", "repos": []
        }))
        .unwrap();
        Kept {
            entry: format!("/w/.trash/{id}-1").into(),
            id: format!("{id}-1"),
            deleted: Some(deleted.parse().unwrap()),
            size: bytes.map(|bytes| Size { bytes, files: 1 }),
            record: Record {
                version: VERSION,
                name: id.into(),
                deleted_at: deleted.into(),
                reason: Reason::Delete,
                workspace: ws,
                repos: Vec::new(),
            },
        }
    }

    fn retention(keep_days: u64, max_size: u64) -> Retention {
        Retention {
            keep: Duration::from_secs(keep_days * 86_400),
            max_size,
        }
    }

    #[test]
    fn entries_past_keep_go_then_the_oldest_while_over_the_size() {
        let now: Timestamp = "2026-12-10T00:00:00Z".parse().unwrap();
        // Oldest first, as `contents` gives them.
        let trash = [
            kept("a", "2026-12-01T00:00:00Z", Some(100)),
            kept("b", "2026-12-04T00:00:00Z", Some(300)),
            kept("c", "2026-12-08T00:00:00Z", None),
            kept("d", "2026-12-09T23:59:59Z", Some(50)),
        ];
        // A week: only `a` (9 days) is past it; exactly the keep is past it too.
        assert_eq!(expired(&trash, now, retention(7, u64::MAX)), [0]);
        assert_eq!(expired(&trash, now, retention(6, u64::MAX)), [0, 1]);
        assert_eq!(
            expired(
                &trash,
                "2026-12-11T00:00:00Z".parse().unwrap(),
                retention(7, u64::MAX)
            ),
            [0, 1]
        );
        // Nothing is old enough; the size cap takes the oldest first, and an entry not
        // measured yet counts as empty.
        assert!(expired(&trash, now, retention(30, 450)).is_empty());
        assert_eq!(expired(&trash, now, retention(30, 449)), [0]);
        assert_eq!(expired(&trash, now, retention(30, 349)), [0, 1]);
        assert_eq!(expired(&trash, now, retention(30, 50)), [0, 1]);
        // Oldest first, measured or not, until what stays fits — but never the newest for
        // its size: the last delete can always be undone.
        assert_eq!(expired(&trash, now, retention(30, 49)), [0, 1, 2]);
        assert_eq!(expired(&trash, now, retention(30, 0)), [0, 1, 2]);
        // Both rules at once: what age lets go counts no more against the cap.
        assert_eq!(expired(&trash, now, retention(7, 350)), [0]);
        assert_eq!(expired(&trash, now, retention(7, 349)), [0, 1]);
        // keep = 0: everything goes.
        assert_eq!(expired(&trash, now, retention(0, u64::MAX)), [0, 1, 2, 3]);
        // An unreadable time never expires by age.
        let mut odd = kept("e", "2026-01-01T00:00:00Z", Some(1));
        odd.deleted = None;
        assert!(expired(&[odd], now, retention(1, u64::MAX)).is_empty());
    }

    #[test]
    fn ages_read_as_people_say_them() {
        let t: Timestamp = "2026-12-10T00:00:00Z".parse().unwrap();
        let before = |s: i64| t.checked_sub(jiff::SignedDuration::from_secs(s)).unwrap();
        assert_eq!(ago(t, before(5)), "now");
        assert_eq!(ago(t, before(125)), "2m");
        assert_eq!(ago(t, before(3 * 3600 + 5)), "3h");
        assert_eq!(ago(t, before(3 * 86_400)), "3d");
        // A clock set back says "now", not a negative age.
        assert_eq!(ago(before(60), t), "now");
    }
}
