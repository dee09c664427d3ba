//! Cloning a repository given to `-r` as a git URL into the first repo dir.

use std::path::Path;
use std::time::Duration;

use crate::config::Config;
use crate::discover::Discovery;
use crate::error::{Error, Result};
use crate::fsx;
use crate::git;
use crate::ops::Ctx;
use crate::ops::repos::Chosen;

/// Attempts for a clone that fails with a transient (network) error.
const ATTEMPTS: u32 = 3;

/// Returns the local clone of `url`, cloning it into the first repo dir when needed. An
/// existing directory of the same name is reused only when its origin is `url`. A failed
/// clone leaves no directory behind.
pub fn ensure(ctx: &Ctx<'_>, config: &Config, url: &str, discovery: &Discovery) -> Result<Chosen> {
    let name = git::url::repo_name(url).ok_or_else(|| {
        Error::usage(format!("cannot name a repository after the URL `{url}`"))
            .with_fix("Clone it yourself and pass the repository name to -r")
    })?;
    let want = git::url::canonical(url);
    if let Some(existing) = discovery.find(&name) {
        let theirs = existing.remote.as_deref().map(git::url::canonical);
        return if theirs.as_deref() == Some(want.as_str()) {
            Ok(Chosen {
                name,
                path: existing.path.clone(),
                cloned: false,
            })
        } else {
            Err(conflict(
                &name,
                &existing.path,
                existing.remote.as_deref(),
                url,
            ))
        };
    }
    let Some(dir) = config.repo_dirs.first() else {
        return Err(Error::usage(format!("no repo dir to clone `{url}` into"))
            .with_fix("Run `gw add-dir <path>` first"));
    };
    let dest = dir.join(&name);
    if fsx::exists(&dest) {
        let origin = git::Repo::open(&dest).ok().and_then(|r| r.origin_url());
        return if origin.as_deref().map(git::url::canonical).as_deref() == Some(want.as_str()) {
            Ok(Chosen {
                name,
                path: dest,
                cloned: false,
            })
        } else {
            Err(conflict(&name, &dest, origin.as_deref(), url))
        };
    }
    fsx::create_dir_all(dir)?;
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".grove-clone-{name}-"))
        .tempdir_in(dir)
        .map_err(|e| fsx::Error::new("create a temporary directory in", dir, e))?;
    let staging = tmp.path().join(&name);
    let mut attempt = 0;
    loop {
        attempt += 1;
        ctx.events
            .progress(&format!("cloning {url} into {}", dest.display()));
        let cloned = crate::ops::task(ctx, &name, "cloning", |on| {
            git::clone(url, &staging, dir, on)
        });
        match cloned {
            Ok(()) => break,
            Err(e) if e.is_transient() && attempt < ATTEMPTS => {
                crate::ops::safety::remove::clone(ctx, &staging).map_err(Error::internal)?;
                std::thread::sleep(Duration::from_secs(1 << (attempt - 1)));
            }
            Err(e) => return Err(Error::from(e).context(format!("cannot clone `{url}`"))),
        }
    }
    fsx::rename(&staging, &dest)?;
    Ok(Chosen {
        name,
        path: dest,
        cloned: true,
    })
}

fn conflict(name: &str, path: &Path, origin: Option<&str>, url: &str) -> Error {
    Error::usage(format!(
        "repo name conflict: `{}` already exists and its origin is {}, not `{url}`",
        path.display(),
        origin
            .map(|o| format!("`{o}`"))
            .unwrap_or_else(|| "not set".into())
    ))
    .with_fix(format!(
        "Use `-r {name}` for the existing repository, or move it out of the way"
    ))
}
