//! One repository's sync: look at it, run its `pre_sync`, rebase it (journaled, so a rebase a
//! killed sync left in progress is aborted by recovery).

use super::*;

/// A repository that is behind its base, ready to be rebased.
pub(super) struct Behind {
    pub(super) out: RepoSync,
    pub(super) source: PathBuf,
    pub(super) config: Box<RepoConfig>,
    pub(super) base: String,
    pub(super) behind: usize,
}

/// Where a repository's sync stands.
pub(super) enum Stage {
    /// Finished (up to date, skipped or failed).
    Done(RepoSync),
    /// Behind its base: hooks and a rebase to go.
    Behind(Behind),
}

/// Fetches (when `fetch`) and inspects one worktree: finished when there is nothing to
/// rebase or it must be skipped, else behind its base. Never panics.
pub(super) fn inspect(ctx: &Ctx<'_>, r: &RepoEntry, fetch: bool) -> Stage {
    let mut out = RepoSync::new(r);
    let name = r.repo_name.as_str();
    if !r.worktree_path.is_dir() {
        out.actions.push(doctor_action());
        return Stage::Done(out.done(Outcome::Failed, "worktree directory is missing"));
    }
    if !r.source_repo.is_dir() {
        out.actions.push(doctor_action());
        return Stage::Done(out.done(Outcome::Failed, "source repository is missing"));
    }
    let has_origin = git::Repo::open(&r.source_repo)
        .ok()
        .and_then(|s| s.origin_url())
        .is_some();
    if fetch && has_origin {
        // Fetch writes refs; serialise with other gw processes working in this repository.
        let fetched = crate::ops::task(ctx, name, "fetching", |on| {
            tx::repo_lock(ctx, &r.source_repo)
                .and_then(|_lock| git::fetch(&r.source_repo, on).map_err(Error::from))
        });
        if let Err(e) = fetched {
            out.warnings.push(format!(
                "{name}: fetch failed, using local state: {}",
                e.message
            ));
        }
    }
    let done = |out: RepoSync, outcome, detail: String| Stage::Done(out.done(outcome, detail));
    let config = match RepoConfig::load(&r.source_repo) {
        Ok(c) => c,
        Err(e) => return done(out, Outcome::Failed, e.to_string()),
    };
    let repo = match git::Repo::open(&r.worktree_path) {
        Ok(repo) => repo,
        Err(e) => return done(out, Outcome::Failed, format!("status check failed: {e}")),
    };
    let head = match repo.head() {
        Ok(h) => h,
        Err(e) => return done(out, Outcome::Failed, format!("status check failed: {e}")),
    };
    if let Some(b) = &head.branch {
        out.result.branch = b.clone();
    }
    if let Some(op) = &head.in_progress {
        out.actions.push(out.status_action());
        let wt = crate::proc::shell_quote(&out.result.path.to_string_lossy());
        return done(
            out,
            Outcome::Skipped,
            format!(
                "a {op} is in progress: finish it (`git -C {wt} {op} --continue`) or undo it (`git -C {wt} {op} --abort`), then sync again"
            ),
        );
    }
    if head.detached {
        out.actions.push(out.status_action());
        return done(
            out,
            Outcome::Skipped,
            format!("HEAD is detached (`gw reset` puts it back on {})", r.branch),
        );
    }
    match repo.changes() {
        Ok(c) if c.is_clean() => {}
        Ok(c) => {
            out.actions.push(out.status_action());
            let n = c.count();
            return done(
                out,
                Outcome::Skipped,
                format!(
                    "dirty working tree ({n} uncommitted change{})",
                    if n == 1 { "" } else { "s" }
                ),
            );
        }
        Err(e) => return done(out, Outcome::Failed, format!("status check failed: {e}")),
    }
    let Some(base) = repo.resolve_base(config.base_branch.as_deref()) else {
        return done(
            out,
            Outcome::Skipped,
            "could not determine the base branch".into(),
        );
    };
    out.base = Some(base.name.clone());
    let Some(head_oid) = head.oid.as_deref() else {
        return done(
            out,
            Outcome::Skipped,
            "the branch has no commits yet".into(),
        );
    };
    let behind = match repo.ahead_behind(head_oid, &base.oid) {
        Ok((_, behind)) => behind,
        Err(e) => {
            return done(
                out,
                Outcome::Skipped,
                format!("cannot determine ahead/behind: {e}"),
            );
        }
    };
    if behind == 0 {
        out.commits = Some(0);
        let detail = format!("up to date with {}", base.name);
        return done(out, Outcome::UpToDate, detail);
    }
    Stage::Behind(Behind {
        out,
        source: r.source_repo.clone(),
        config: Box::new(config),
        base: base.name,
        behind,
    })
}

/// Runs a behind repository's `pre_sync` commands (outside any lock).
pub(super) fn pre_sync(ctx: &Ctx<'_>, b: Behind, vars: &Vars) -> Stage {
    let r = &b.out.result;
    match hooks::run_repo_commands(ctx, &r.repo, &b.config.pre_sync, &r.path, vars, false) {
        Ok(()) => Stage::Behind(b),
        Err(f) => Stage::Done(b.out.done(
            Outcome::Failed,
            format!("pre_sync failed, nothing was rebased: {}", f.summary()),
        )),
    }
}

/// Starts the journal of one rebase; its children keep its lock while the guard lives.
pub(super) fn journal_rebase(
    ctx: &Ctx<'_>,
    workspace: &str,
    repo: &str,
    worktree: &std::path::Path,
    onto: &str,
) -> Result<(Journal, crate::proc::InheritGuard)> {
    let mut journal = Journal::begin(&ctx.home, Kind::Sync, workspace, &[])?;
    let inherit = crate::proc::inherit_lock(journal.lock())
        .map_err(|e| Error::internal(format!("cannot share the journal's lock: {e}")))?;
    journal.intend(vec![Action::Rebase {
        repo: repo.to_string(),
        path: worktree.to_path_buf(),
        onto: onto.to_string(),
    }])?;
    Ok((journal, inherit))
}

/// Rebases a behind repository onto its base (under the workspace lock). Returns its
/// outcome and, when it was rebased, its configuration (for `post_sync`).
pub(super) fn rebase(ctx: &Ctx<'_>, workspace: &str, b: Behind) -> (RepoSync, Option<RepoConfig>) {
    let Behind {
        mut out,
        source,
        config,
        base,
        behind,
    } = b;
    let name = out.result.repo.clone();
    let worktree = out.result.path.clone();
    // A rebase is never cut short by Ctrl-C (it would be left in progress): one that has
    // started finishes or is aborted; one that has not does not start.
    let _defer = crate::proc::signals::enter(crate::proc::signals::Mode::Defer);
    if let Some(sig) = crate::proc::signals::requested() {
        let why = format!(
            "not rebased: interrupted by {}",
            crate::proc::signal_name(sig)
        );
        return (out.done(Outcome::Skipped, why), None);
    }
    // The rebase moves the branch ref (shared with the source repository): hold its lock.
    let lock = match tx::repo_lock(ctx, &source) {
        Ok(l) => l,
        Err(e) => return (out.done(Outcome::Failed, e.message.clone()), None),
    };
    // Recorded, so that a sync killed half way leaves a journal from which `gw doctor --fix`
    // aborts the rebase it left in progress (while it runs, git keeps the journal's lock).
    let journal = match journal_rebase(ctx, workspace, &name, &worktree, &base) {
        Ok(j) => j,
        Err(e) => return (out.done(Outcome::Failed, e.message.clone()), None),
    };
    let step = format!("rebasing onto {base}");
    let rebased = crate::ops::task(ctx, &name, &step, |on| git::rebase(&worktree, &base, on));
    let rebased = match rebased {
        // A rebase that stopped is aborted at once, still under the lock.
        Ok(Rebase::Stopped { conflicts, output }) => {
            let aborted = git::rebase_abort(&worktree);
            Ok((Rebase::Stopped { conflicts, output }, Some(aborted)))
        }
        other => other.map(|r| (r, None)),
    };
    let left = matches!(rebased, Ok((_, Some(Err(_)))) | Err(_));
    if !left {
        let (journal, _inherit) = journal;
        let _ = journal.finish();
    }
    drop(lock);
    match rebased {
        Ok((Rebase::Done, _)) => {
            out.commits = Some(behind);
            let detail = format!(
                "rebased onto {base} ({behind} new commit{})",
                if behind == 1 { "" } else { "s" }
            );
            (out.done(Outcome::Rebased, detail), Some(*config))
        }
        Ok((Rebase::Stopped { conflicts, output }, aborted)) => {
            let why = if conflicts.is_empty() {
                output.lines().last().unwrap_or("git stopped").to_string()
            } else {
                format!("conflicts in {}", conflicts.join(", "))
            };
            let path = worktree.to_string_lossy().into_owned();
            out.actions.push(out.status_action());
            out.actions.push(NextAction::write(
                format!(
                    "Rebase {name} by hand: resolve the conflicts, `git add` the files, then `git rebase --continue` (or `git rebase --abort` to give up)"
                ),
                &["git", "-C", &path, "rebase", &base],
            ));
            let out = match aborted.unwrap_or(Ok(())) {
                Ok(()) => out.done(
                    Outcome::Failed,
                    format!(
                        "rebase onto {base} failed and was aborted, the worktree is unchanged: {why}"
                    ),
                ),
                Err(e) => out.done(
                    Outcome::Failed,
                    format!(
                        "rebase onto {base} failed ({why}) and could not be aborted: {e}; run `git -C {} rebase --abort`",
                        shell_quote(&path)
                    ),
                ),
            };
            (out, None)
        }
        Err(e) => (
            out.done(Outcome::Failed, format!("cannot run git rebase: {e}")),
            None,
        ),
    }
}
