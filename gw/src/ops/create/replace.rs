//! `gw create --replace`: which workspace is replaced, and what replacing it does — the
//! removal, described by the code that describes (and runs) `gw delete`, then the creation.

use crate::config::Config;
use crate::error::{Error, Result};
use crate::ops::plan::Described;
use crate::ops::safety::Remover;
use crate::ops::{Ctx, delete, resolve};
use crate::state::{State, Workspace};

use super::{CreateOptions, CreatePlan};

/// The workspace `--replace` replaces, if any: the one a plan recorded (`replacing`), else
/// the one the current directory is in. A recorded one is refused from inside another
/// workspace: `--replace` means the workspace you are in, and there the plan would mean a
/// different one.
pub(super) fn replaced(
    ctx: &Ctx<'_>,
    state: &State,
    opts: &CreateOptions,
) -> Result<Option<Workspace>> {
    if !opts.replace {
        return Ok(None);
    }
    let here = state.containing(&ctx.env.cwd);
    if let Some(name) = &opts.replacing {
        if let Some(here) = here.filter(|w| w.name != *name) {
            return Err(Error::usage(format!(
                "the plan replaces workspace `{name}`, but the current directory is in workspace `{}`",
                here.name
            ))
            .with_fix(format!(
                "Apply it from inside `{name}` or from outside any workspace, or make a new plan here"
            ))
            .with_details(serde_json::json!({ "replacing": name, "current": here.name })));
        }
        return Ok(Some(resolve::by_name(state, name)?.clone()));
    }
    let current = resolve::workspace(state, None, &ctx.env.cwd).map_err(|e| {
        Error::usage("--replace must be run from inside the workspace to replace")
            .with_fix("cd into the workspace you want to replace")
            .with_details(serde_json::json!({ "cause": e.message }))
    })?;
    Ok(Some(current.clone()))
}

/// What the create of `plan` does, replacing `old` first when given: the removal of `old`
/// as `gw create --replace` deletes it (each change and fact labelled with its name), then
/// the creation. Refuses as that delete would (uncommitted work without `force`).
pub(super) fn describe(
    ctx: &Ctx<'_>,
    config: &Config,
    old: Option<&Workspace>,
    force: bool,
    plan: &CreatePlan,
) -> Result<Described> {
    let made = super::describe(ctx, config, plan);
    let Some(old) = old else {
        return Ok(made);
    };
    let removal = delete::describe_after(
        ctx,
        config,
        std::slice::from_ref(&old.name),
        force,
        delete::keeps(config, false),
        Remover::CreateReplace,
        &mut Vec::new(),
    )?;
    let mut d = removal.under(&old.name);
    d.workspace = made.workspace;
    d.changes.extend(made.changes);
    d.facts.extend(made.facts);
    d.warnings.extend(made.warnings);
    Ok(d)
}
