//! Plugins: `gw foo …` runs `gw-foo` when there is no built-in `foo`; `gw plugin
//! list|remove|install|upgrade|search` manages the ones in `<GW_HOME>/plugins/`.
//!
//! A plugin is looked up in `<GW_HOME>/plugins/` first, then on `PATH`, and started
//! with `exec`, so it replaces `gw`: its output and exit code are the command's. It gets
//! `GROVE_DIR`, `GROVE_CONFIG`, `GROVE_STATE` and `GROVE_WORKSPACE` (the workspace the
//! current directory is in, or empty) in its environment, and reads grove's files itself.
//!
//! `install` takes a local executable or tarball (a path or a `file://` URL), an http(s) URL
//! of either, a GitHub `OWNER/REPO` whose latest release has an asset
//! `gw-<name>_<version>_<os>_<arch>.tar.gz`, or the bare name of a plugin in the registry
//! shipped in the binary ([`REGISTRY`], what `gw plugin search` lists). Where a plugin came
//! from is recorded next to it, in the Go grove's `plugins/.gw-<name>.json` (`{repo,
//! version}`, plus `source` for a path or URL), so `gw plugin upgrade` can install it again
//! from there; a plugin put in the directory by hand has no record and is skipped.
//! Downloads use `curl` and tarballs `tar` (through `proc::Cmd`), so grove carries no HTTP
//! or archive code. Before anything is installed the file is checked to be an executable
//! for this platform (an ELF or Mach-O binary for this OS and CPU, or a `#!` script), so
//! an HTML error page or another platform's binary is refused.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::action::NextAction;
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::ops::Ctx;
use crate::proc::Cmd;

/// Where a plugin was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// `<GW_HOME>/plugins/`.
    Installed,
    /// A directory on `PATH`.
    Path,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Plugin {
    pub name: String,
    pub path: PathBuf,
    pub source: Origin,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PluginListReport {
    pub plugins: Vec<Plugin>,
    pub count: usize,
}

/// What `plugin install` or `plugin remove` did.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PluginReport {
    pub name: String,
    pub path: PathBuf,
    pub outcome: PluginOutcome,
    /// What it was installed from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum PluginOutcome {
    Installed,
    /// An installed plugin of the same name was overwritten.
    Replaced,
    Removed,
}

impl PluginReport {
    pub fn next_actions(&self) -> Vec<NextAction> {
        vec![NextAction::read(
            "List plugins",
            &["gw", "plugin", "list", "--format", "json"],
        )]
    }
}

/// A plugin name becomes a file name `gw-<name>` and a command word, so it is one plain
/// word: letters, digits, `-`, `_` and `.`, not starting with `-` or `.`.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && !name.starts_with(['-', '.'])
        && !name.contains("..")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(Error::usage(format!("invalid plugin name {name:?}"))
            .with_fix("A plugin name is one word of letters, digits, `-`, `_` and `.`"))
    }
}

fn file_name(name: &str) -> String {
    format!("gw-{name}")
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

fn path_dirs(ctx: &Ctx<'_>) -> Vec<PathBuf> {
    ctx.env
        .path
        .as_deref()
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default()
}

/// The executable `gw-<name>`: in the plugins directory, else on `PATH`.
pub fn find(ctx: &Ctx<'_>, name: &str) -> Option<PathBuf> {
    if check_name(name).is_err() {
        return None;
    }
    std::iter::once(ctx.home.plugins())
        .chain(path_dirs(ctx))
        .map(|d| d.join(file_name(name)))
        .find(|p| is_executable(p))
}

/// Runs the plugin for `gw <name> <args…>`, replacing this process. Returns only when it
/// could not be started (or does not exist: then a `USAGE` error naming the nearest
/// built-in commands).
pub fn exec(
    ctx: &Ctx<'_>,
    name: &str,
    args: &[OsString],
    builtins: &[String],
    json: bool,
) -> Error {
    let Some(path) = find(ctx, name) else {
        return unknown_command(name, builtins);
    };
    let workspace = ctx
        .state()
        .ok()
        .and_then(|s| s.containing(&ctx.env.cwd).map(|w| w.name.clone()))
        .unwrap_or_default();
    let mut cmd = Cmd::new(&path, &ctx.env.cwd);
    cmd.args(args)
        .envs(ctx.home.child_env())
        .env("GROVE_WORKSPACE", workspace);
    if json {
        // `gw --format json foo` was parsed by gw; tell the plugin.
        cmd.env("GW_FORMAT", "json");
    }
    let e = cmd.exec();
    let code = match &e {
        crate::proc::Error::Spawn { source, .. }
            if source.kind() == std::io::ErrorKind::PermissionDenied =>
        {
            Code::PermissionDenied
        }
        _ => Code::Internal,
    };
    Error::new(code, format!("cannot run plugin `{}`: {e}", path.display()))
        .with_details(serde_json::json!({ "plugin": name, "path": path }))
}

/// `USAGE`: no built-in command and no plugin called `name`; names the closest built-ins.
pub fn unknown_command(name: &str, builtins: &[String]) -> Error {
    let suggestions = nearest(name, builtins);
    let mut fix = match suggestions.as_slice() {
        [] => String::new(),
        [one] => format!("Did you mean `gw {one}`? "),
        many => format!(
            "Did you mean one of: {}? ",
            many.iter()
                .map(|s| format!("`gw {s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    fix.push_str(&format!(
        "Run `gw --help` for every command; a plugin would be an executable `gw-{name}` in the plugins directory or on PATH"
    ));
    Error::usage(format!("unknown command `{name}`"))
        .with_fix(fix)
        .with_details(serde_json::json!({ "command": name, "suggestions": suggestions }))
}

/// The built-in commands closest to `word` by edit distance (at most three).
pub fn nearest(word: &str, candidates: &[String]) -> Vec<String> {
    let limit = (word.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &String)> = candidates
        .iter()
        .map(|c| {
            let d = levenshtein(word, c);
            let prefix = c.starts_with(word) || word.starts_with(c.as_str());
            (if prefix { d.min(1) } else { d }, c)
        })
        .filter(|(d, _)| *d <= limit)
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(3).map(|(_, c)| c.clone()).collect()
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// `gw plugin list`: installed plugins, then those on `PATH` (a name found twice is
/// listed once, where `gw` would run it from).
pub fn list(ctx: &Ctx<'_>) -> Result<PluginListReport> {
    let mut plugins: Vec<Plugin> = Vec::new();
    let dirs = std::iter::once((ctx.home.plugins(), Origin::Installed))
        .chain(path_dirs(ctx).into_iter().map(|d| (d, Origin::Path)));
    for (dir, origin) in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut found: Vec<Plugin> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let file = e.file_name().into_string().ok()?;
                let name = file.strip_prefix("gw-")?.to_string();
                (check_name(&name).is_ok() && is_executable(&e.path())).then(|| Plugin {
                    name,
                    path: e.path(),
                    source: origin,
                })
            })
            .filter(|p| !plugins.iter().any(|q| q.name == p.name))
            .collect();
        found.sort_by(|a, b| a.name.cmp(&b.name));
        plugins.extend(found);
    }
    plugins.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(PluginListReport {
        count: plugins.len(),
        plugins,
    })
}

/// `gw plugin remove NAME`: deletes an installed plugin.
pub fn remove(ctx: &Ctx<'_>, name: &str) -> Result<PluginReport> {
    check_name(name)?;
    let path = ctx.home.plugins().join(file_name(name));
    if !fsx::exists(&path) {
        let installed: Vec<String> = list(ctx)?
            .plugins
            .into_iter()
            .filter(|p| p.source == Origin::Installed)
            .map(|p| p.name)
            .collect();
        return Err(
            Error::usage(format!("no plugin named `{name}` is installed"))
                .with_fix(if installed.is_empty() {
                    "No plugins are installed".to_string()
                } else {
                    format!("Installed: {}", installed.join(", "))
                })
                .with_details(serde_json::json!({ "plugin": name, "installed": installed }))
                .with_action(NextAction::read(
                    "List plugins",
                    &["gw", "plugin", "list", "--format", "json"],
                )),
        );
    }
    fsx::remove_file(&path)?;
    let meta = meta_path(&ctx.home.plugins(), name);
    if fsx::exists(&meta) {
        fsx::remove_file(&meta)?;
    }
    Ok(PluginReport {
        name: name.to_string(),
        path,
        outcome: PluginOutcome::Removed,
        source: None,
    })
}

#[derive(Debug, Clone)]
pub struct InstallOptions {
    /// A path, an http(s) URL, or `OWNER/REPO` (optionally `github.com/OWNER/REPO`).
    pub source: String,
    /// The plugin name; derived from the file name (`gw-<name>…`) when absent.
    pub name: Option<String>,
}

/// `gw plugin install PATH|URL|OWNER/REPO [--name NAME]`.
pub fn install(ctx: &Ctx<'_>, opts: InstallOptions) -> Result<PluginReport> {
    if let Some(n) = &opts.name {
        check_name(n)?;
    }
    let plugins = ctx.home.plugins();
    fsx::create_dir_all(&plugins)?;
    let staging = tempfile::Builder::new()
        .prefix(".install-")
        .tempdir_in(&plugins)
        .map_err(|e| fsx::Error::new("create a temporary directory in", &plugins, e))?;
    let stage = staging.path();
    let path_source = opts.source.strip_prefix("file://").unwrap_or(&opts.source);
    let local = ctx.env.resolve_path(Path::new(path_source));
    let registered = find_registered(&opts.source);
    let mut record = Meta::default();
    let path_like = opts.source.starts_with(['/', '.', '~']) || opts.source.starts_with("file://");
    let (file, wanted) = if fsx::exists(&local) || path_like {
        if !local.is_file() {
            let what = if fsx::exists(&local) {
                "is not a file"
            } else {
                "does not exist"
            };
            return Err(Error::usage(format!("`{}` {what}", local.display())));
        }
        record.source = Some(local.to_string_lossy().into_owned());
        (local, opts.name.clone())
    } else if opts.source.starts_with("https://") || opts.source.starts_with("http://") {
        // Keep the URL's file name: the plugin is named after it (`…/gw-foo` is `foo`).
        let file = url_file_name(&opts.source).unwrap_or_else(|| "download".into());
        let dest = stage.join(file);
        download(&opts.source, &dest, stage)?;
        record.source = Some(opts.source.clone());
        (dest, opts.name.clone())
    } else if let Some((owner, repo)) = registered
        .map(|r| github_repo(r.repo).expect("registry entries are OWNER/REPO"))
        .or_else(|| github_repo(&opts.source))
    {
        let (dest, name, tag) = download_release(ctx, &owner, &repo, stage)?;
        record.repo = Some(format!("{owner}/{repo}"));
        record.version = Some(tag);
        let name = registered.map(|r| r.name.to_string()).unwrap_or(name);
        (dest, opts.name.clone().or(Some(name)))
    } else {
        return Err(Error::usage(format!(
            "`{}` is neither a file, an http(s) URL, OWNER/REPO nor a plugin in the registry",
            opts.source
        ))
        .with_fix("Pass the path of an executable or tarball, a URL, a GitHub OWNER/REPO, or a name from `gw plugin search`"));
    };

    let head = read_head(&file)?;
    let (executable, name) = if head.starts_with(&[0x1f, 0x8b]) {
        let dir = stage.join("unpacked");
        fsx::create_dir_all(&dir)?;
        Cmd::new("tar", stage)
            .arg("-xzf")
            .arg(&file)
            .arg("-C")
            .arg(&dir)
            .check()
            .map_err(|e| Error::usage(format!("cannot unpack `{}`: {e}", opts.source)))?;
        let found = find_in_archive(&dir, wanted.as_deref())?;
        let name = match wanted {
            Some(n) => n,
            None => name_from_file(&found)?,
        };
        (found, name)
    } else {
        let name = match wanted {
            Some(n) => n,
            None => name_from_file(&file)?,
        };
        (file, name)
    };
    check_name(&name)?;
    let bytes = fsx::read_bytes(&executable)?;
    check_platform(&bytes).map_err(|why| {
        Error::usage(format!(
            "`{}` is not an executable for this platform ({}/{}): {why}",
            opts.source,
            std::env::consts::OS,
            std::env::consts::ARCH
        ))
        .with_fix("Install a build of the plugin for this operating system and CPU")
    })?;
    let dest = plugins.join(file_name(&name));
    let replaced = fsx::exists(&dest);
    fsx::write_atomic_mode(&dest, &bytes, 0o755)?;
    // Where it came from, for `gw plugin upgrade`; a plugin works without it.
    let _ = record.save(&plugins, &name);
    Ok(PluginReport {
        name,
        path: dest,
        outcome: if replaced {
            PluginOutcome::Replaced
        } else {
            PluginOutcome::Installed
        },
        source: Some(opts.source),
    })
}

fn read_head(p: &Path) -> Result<Vec<u8>> {
    let mut bytes = fsx::read_bytes(p)?;
    bytes.truncate(64);
    Ok(bytes)
}

/// `gw-<name>` (goreleaser assets: `gw-<name>_<version>_<os>_<arch>`), with a script
/// extension dropped; any other file name is the name itself, minus its extension.
fn name_from_file(p: &Path) -> Result<String> {
    let file = p
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = file.strip_prefix("gw-").unwrap_or(&file);
    let base = base.split('_').next().unwrap_or(base);
    let base = [
        ".sh", ".bash", ".py", ".rb", ".pl", ".tar.gz", ".tgz", ".exe",
    ]
    .iter()
    .find_map(|ext| base.strip_suffix(ext))
    .unwrap_or(base);
    check_name(base).map_err(|e| {
        e.context(format!("cannot name a plugin after `{file}`"))
            .with_fix("Pass --name NAME")
    })?;
    Ok(base.to_string())
}

/// The plugin executable inside an unpacked archive: `gw-<name>` when the name is known,
/// else the only `gw-*` file.
fn find_in_archive(dir: &Path, name: Option<&str>) -> Result<PathBuf> {
    let files: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .max_depth(4)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect();
    let file_of = |p: &PathBuf| {
        p.file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let matching: Vec<&PathBuf> = match name {
        Some(n) => files
            .iter()
            .filter(|p| file_of(p) == file_name(n))
            .collect(),
        None => files
            .iter()
            .filter(|p| file_of(p).starts_with("gw-"))
            .collect(),
    };
    match matching.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(Error::usage(format!(
            "the archive holds no {}",
            name.map(|n| format!("`{}`", file_name(n)))
                .unwrap_or_else(|| "`gw-*` executable".into())
        ))),
        _ => Err(Error::usage("the archive holds several `gw-*` executables")
            .with_fix("Pass --name NAME to pick one")),
    }
}

/// Whether `bytes` can run here: a `#!` script, or an ELF/Mach-O binary for this OS and
/// CPU. The error says what it is instead.
pub fn check_platform(bytes: &[u8]) -> std::result::Result<(), String> {
    if bytes.starts_with(b"#!") {
        return Ok(());
    }
    let arch = std::env::consts::ARCH;
    let os = std::env::consts::OS;
    if bytes.starts_with(b"\x7fELF") {
        if os == "macos" {
            return Err("it is an ELF (Linux) binary".into());
        }
        let class = bytes.get(4).copied().unwrap_or(0);
        let machine = match (bytes.get(5), bytes.get(18..20)) {
            (Some(1), Some(m)) => u16::from_le_bytes([m[0], m[1]]),
            (Some(2), Some(m)) => u16::from_be_bytes([m[0], m[1]]),
            _ => return Err("it is a truncated ELF file".into()),
        };
        let want = match arch {
            "x86_64" => Some((2, 62)),
            "aarch64" => Some((2, 183)),
            "x86" => Some((1, 3)),
            "arm" => Some((1, 40)),
            "riscv64" => Some((2, 243)),
            "powerpc64" => Some((2, 21)),
            "s390x" => Some((2, 22)),
            _ => None,
        };
        return match want {
            Some(w) if w == (class, machine) => Ok(()),
            Some(_) => Err(format!(
                "it is an ELF binary for another CPU (machine {machine})"
            )),
            // An architecture this table does not know: trust the magic.
            None => Ok(()),
        };
    }
    let macho_cpu = |cpu: u32| match arch {
        "x86_64" => cpu == 0x0100_0007,
        "aarch64" => cpu == 0x0100_000c,
        _ => true,
    };
    if bytes.starts_with(&[0xcf, 0xfa, 0xed, 0xfe]) {
        if os != "macos" {
            return Err("it is a Mach-O (macOS) binary".into());
        }
        let cpu = bytes
            .get(4..8)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .unwrap_or(0);
        return if macho_cpu(cpu) {
            Ok(())
        } else {
            Err("it is a Mach-O binary for another CPU".into())
        };
    }
    if bytes.starts_with(&[0xca, 0xfe, 0xba, 0xbe]) && os == "macos" {
        // A universal binary: accept it if one of its slices is for this CPU.
        let n = bytes
            .get(4..8)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
            .unwrap_or(0) as usize;
        let ok = (0..n.min(8)).any(|i| {
            bytes
                .get(8 + i * 20..12 + i * 20)
                .map(|b| macho_cpu(u32::from_be_bytes([b[0], b[1], b[2], b[3]])))
                .unwrap_or(false)
        });
        return if ok {
            Ok(())
        } else {
            Err("it is a universal binary without a slice for this CPU".into())
        };
    }
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(16)]).to_lowercase();
    if text.contains("<!doctype") || text.contains("<html") {
        return Err("it is an HTML page, not a program".into());
    }
    Err("it is neither a binary for this platform nor a `#!` script".into())
}

/// The last path segment of a URL, when it is a safe file name.
fn url_file_name(url: &str) -> Option<String> {
    let path = url.split(['?', '#']).next()?;
    let last = path.rsplit('/').next()?;
    let ok = !last.is_empty()
        && !last.starts_with('.')
        && last
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    ok.then(|| last.to_string())
}

/// `OWNER/REPO` or `github.com/OWNER/REPO`.
fn github_repo(s: &str) -> Option<(String, String)> {
    let s = s
        .strip_prefix("https://")
        .unwrap_or(s)
        .strip_prefix("github.com/")
        .unwrap_or(s)
        .trim_end_matches('/');
    let (owner, repo) = s.split_once('/')?;
    let word = |w: &str| {
        !w.is_empty()
            && !w.starts_with('.')
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    (word(owner) && word(repo)).then(|| (owner.to_string(), repo.to_string()))
}

fn download(url: &str, dest: &Path, cwd: &Path) -> Result<()> {
    Cmd::new("curl", cwd)
        .args(["--fail", "--silent", "--show-error", "--location"])
        .args(["--proto", "=https,http", "--max-time", "300", "--output"])
        .arg(dest)
        .arg(url)
        .check()
        .map_err(|e| download_error(url, e))?;
    Ok(())
}

fn download_error(url: &str, e: crate::proc::Error) -> Error {
    use crate::proc::{Error as P, Status};
    let message = format!("cannot download `{url}`: {e}");
    match &e {
        P::Spawn { .. } => Error::new(Code::Internal, message)
            .with_fix("grove downloads plugins with `curl`; install it, or download the file yourself and install it from its path"),
        // curl's "the server answered with an HTTP error" (404, 403, …): retrying will not help.
        P::Failed {
            status: Status::Exited(22),
            ..
        } => Error::usage(message).with_fix("Check the URL, or the repository's releases"),
        P::Failed { .. } => Error::new(Code::Transient, message)
            .with_fix("Check the network connection and retry"),
    }
}

/// Downloads the latest release asset of `owner/repo` for this platform. Returns the file,
/// the plugin name (the repository name without `gw-`) and the release tag.
fn download_release(
    ctx: &Ctx<'_>,
    owner: &str,
    repo: &str,
    stage: &Path,
) -> Result<(PathBuf, String, String)> {
    let latest = format!("https://github.com/{owner}/{repo}/releases/latest");
    ctx.events.progress(&format!("resolving {latest}"));
    // The public redirect names the tag without using the (rate-limited) API.
    let out = Cmd::new("curl", stage)
        .args(["--fail", "--silent", "--show-error", "--location", "--head"])
        .args(["--max-time", "60", "--output", "/dev/null"])
        .args(["--write-out", "%{url_effective}"])
        .arg(&latest)
        .check()
        .map_err(|e| download_error(&latest, e))?;
    let effective = out.stdout.trim();
    let tag = effective
        .rsplit_once("/releases/tag/")
        .map(|(_, t)| t.to_string())
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            Error::usage(format!("{owner}/{repo} has no published release"))
                .with_details(serde_json::json!({ "resolved": effective }))
        })?;
    let version = tag.strip_prefix('v').unwrap_or(&tag);
    let name = repo.strip_prefix("gw-").unwrap_or(repo).to_string();
    check_name(&name)?;
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    };
    let asset = format!("gw-{name}_{version}_{os}_{arch}.tar.gz");
    let url = format!("https://github.com/{owner}/{repo}/releases/download/{tag}/{asset}");
    let dest = stage.join(&asset);
    ctx.events.progress(&format!("downloading {url}"));
    download(&url, &dest, stage)?;
    Ok((dest, name, tag))
}

/// Where an installed plugin came from: the Go grove's `plugins/.gw-<name>.json`
/// (`{repo, version}` for a GitHub release), with `source` added for a path or URL.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Deserialize, Serialize)]
pub struct Meta {
    /// `OWNER/REPO` of a GitHub release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// The release tag installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// An absolute path or a URL (grove's addition; the Go grove only knew `repo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

fn meta_path(plugins: &Path, name: &str) -> PathBuf {
    plugins.join(format!(".gw-{name}.json"))
}

impl Meta {
    /// The recorded source of plugin `name`; `Ok(None)` when there is none (installed by
    /// hand), an error when the record cannot be read.
    pub fn load(plugins: &Path, name: &str) -> Result<Option<Meta>> {
        let path = meta_path(plugins, name);
        let Some(text) = fsx::read_optional(&path)? else {
            return Ok(None);
        };
        let meta: Meta = serde_json::from_str(&text).map_err(|e| {
            Error::usage(format!("cannot read `{}`: {e}", path.display())).with_fix(format!(
                "Install the plugin again: `gw plugin install SOURCE --name {name}`"
            ))
        })?;
        Ok((meta.source.is_some() || meta.repo.is_some()).then_some(meta))
    }

    fn save(&self, plugins: &Path, name: &str) -> Result<()> {
        let text = serde_json::to_string(self).expect("metadata serialises");
        fsx::write_atomic(&meta_path(plugins, name), text.as_bytes())?;
        Ok(())
    }

    /// What `install` is given to install it again.
    fn install_source(&self) -> Option<&str> {
        self.source.as_deref().or(self.repo.as_deref())
    }
}

/// A plugin `gw plugin search` knows and `gw plugin install NAME` resolves.
#[derive(Debug, Clone, Copy, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Registered {
    pub name: &'static str,
    /// `OWNER/REPO` on GitHub, whose releases carry the plugin.
    pub repo: &'static str,
    pub description: &'static str,
}

/// The plugin registry shipped in the binary (the Go grove's, as of its 1.1.18 release).
pub const REGISTRY: &[Registered] = &[
    Registered {
        name: "code",
        repo: "igor-kupczynski/gw-code",
        description: "Open a workspace in VS Code (or a compatible editor) as one multi-root editor workspace",
    },
    Registered {
        name: "dispatch",
        repo: "nicksenap/gw-dispatch",
        description: "Create a workspace and start a coding agent in it with a first prompt",
    },
];

/// The registry entry for a bare plugin name (`code`, `gw-code`).
fn find_registered(name: &str) -> Option<&'static Registered> {
    let bare = name.strip_prefix("gw-").unwrap_or(name);
    REGISTRY.iter().find(|r| r.name == bare)
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SearchHit {
    pub name: &'static str,
    pub repo: &'static str,
    pub description: &'static str,
    /// A plugin of this name is installed.
    pub installed: bool,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PluginSearchReport {
    /// What was searched for (`null`: everything).
    pub term: Option<String>,
    pub plugins: Vec<SearchHit>,
    pub count: usize,
}

impl PluginSearchReport {
    pub fn next_actions(&self) -> Vec<NextAction> {
        self.plugins
            .iter()
            .filter(|p| !p.installed)
            .take(1)
            .map(|p| {
                NextAction::write(
                    format!("Install {}", p.name),
                    &["gw", "plugin", "install", p.name, "--format", "json"],
                )
            })
            .collect()
    }
}

/// `gw plugin search [TERM]`: the registry entries whose name, repository or description
/// contains `term` (any case); offline.
pub fn search(ctx: &Ctx<'_>, term: Option<&str>) -> Result<PluginSearchReport> {
    let needle = term.map(str::to_lowercase).filter(|t| !t.trim().is_empty());
    let plugins: Vec<SearchHit> = REGISTRY
        .iter()
        .filter(|r| {
            needle.as_deref().is_none_or(|n| {
                [r.name, r.repo, r.description]
                    .iter()
                    .any(|f| f.to_lowercase().contains(n))
            })
        })
        .map(|r| SearchHit {
            name: r.name,
            repo: r.repo,
            description: r.description,
            installed: fsx::exists(&ctx.home.plugins().join(file_name(r.name))),
        })
        .collect();
    Ok(PluginSearchReport {
        term: needle,
        count: plugins.len(),
        plugins,
    })
}

/// What `gw plugin upgrade` did to one plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum UpgradeOutcome {
    /// Installed again from its source, and it changed.
    Upgraded,
    /// Installed again from its source; it was already the same.
    UpToDate,
    /// No recorded source (put in the plugins directory by hand).
    Skipped,
    Failed,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Upgrade {
    pub name: String,
    pub path: PathBuf,
    pub outcome: UpgradeOutcome,
    /// Where it was installed from again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PluginUpgradeReport {
    pub plugins: Vec<Upgrade>,
    pub count: usize,
    /// How many changed.
    pub upgraded: usize,
    /// Set when a plugin failed to upgrade (the others were still tried).
    #[serde(skip)]
    pub failure: Option<Error>,
}

/// `gw plugin upgrade [NAME]`: installs each installed plugin (or the one named) again from
/// where it was installed from. Plugins without a record are skipped; a failure does not stop
/// the others.
pub fn upgrade(ctx: &Ctx<'_>, name: Option<&str>) -> Result<PluginUpgradeReport> {
    let plugins_dir = ctx.home.plugins();
    let installed: Vec<Plugin> = list(ctx)?
        .plugins
        .into_iter()
        .filter(|p| p.source == Origin::Installed)
        .collect();
    let chosen: Vec<&Plugin> = match name {
        None => installed.iter().collect(),
        Some(n) => {
            check_name(n)?;
            match installed.iter().find(|p| p.name == n) {
                Some(p) => vec![p],
                None => {
                    let names: Vec<&str> = installed.iter().map(|p| p.name.as_str()).collect();
                    return Err(Error::usage(format!("no plugin named `{n}` is installed"))
                        .with_fix(if names.is_empty() {
                            "No plugins are installed; install one with `gw plugin install`"
                                .to_string()
                        } else {
                            format!("Installed: {}", names.join(", "))
                        })
                        .with_details(serde_json::json!({ "plugin": n, "installed": names })));
                }
            }
        }
    };
    let mut report = PluginUpgradeReport {
        plugins: Vec::new(),
        count: 0,
        upgraded: 0,
        failure: None,
    };
    let mut failed: Vec<(String, Error)> = Vec::new();
    for p in chosen {
        let meta = match Meta::load(&plugins_dir, &p.name) {
            Ok(Some(m)) => m,
            Ok(None) => {
                report.plugins.push(Upgrade {
                    name: p.name.clone(),
                    path: p.path.clone(),
                    outcome: UpgradeOutcome::Skipped,
                    source: None,
                    detail: Some("installed by hand: no recorded source to upgrade from".into()),
                });
                continue;
            }
            Err(e) => {
                report.plugins.push(Upgrade {
                    name: p.name.clone(),
                    path: p.path.clone(),
                    outcome: UpgradeOutcome::Failed,
                    source: None,
                    detail: Some(e.message.clone()),
                });
                failed.push((p.name.clone(), e));
                continue;
            }
        };
        let source = meta.install_source().unwrap_or_default().to_string();
        ctx.events
            .progress(&format!("upgrading {} from {source}", p.name));
        let before = fsx::read_bytes(&p.path).ok();
        let result = install(
            ctx,
            InstallOptions {
                source: source.clone(),
                name: Some(p.name.clone()),
            },
        );
        let (outcome, detail) = match result {
            Ok(_) if fsx::read_bytes(&p.path).ok() == before => (UpgradeOutcome::UpToDate, None),
            Ok(_) => {
                report.upgraded += 1;
                (UpgradeOutcome::Upgraded, None)
            }
            Err(e) => {
                let detail = Some(e.message.clone());
                failed.push((p.name.clone(), e));
                (UpgradeOutcome::Failed, detail)
            }
        };
        report.plugins.push(Upgrade {
            name: p.name.clone(),
            path: p.path.clone(),
            outcome,
            source: Some(source),
            detail,
        });
    }
    report.count = report.plugins.len();
    if let Some((_, first)) = failed.first() {
        // The first failure's code (a network failure is TRANSIENT, a missing file USAGE).
        let all: Vec<String> = failed
            .iter()
            .map(|(n, e)| format!("{n}: {}", e.message))
            .collect();
        report.failure = Some(
            Error::new(
                first.code,
                format!(
                    "could not upgrade {} of {} plugins: {}",
                    failed.len(),
                    report.count,
                    all.join("; ")
                ),
            )
            .with_fix("Check the source named for each failed plugin, or install it again with `gw plugin install`"),
        );
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["hello", "my-tool", "x_1", "v1.2"] {
            check_name(ok).unwrap();
        }
        for bad in ["", "a/b", "..", "../x", "-x", ".x", "a b", "a\\b"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        let n = |f: &str| name_from_file(Path::new(f)).unwrap();
        assert_eq!(n("/x/gw-hello"), "hello");
        assert_eq!(n("/x/gw-code_1.2.0_linux_amd64"), "code");
        assert_eq!(n("/x/gw-tool.sh"), "tool");
        assert_eq!(n("/x/deploy"), "deploy");
    }

    #[test]
    fn suggestions() {
        let b: Vec<String> = ["sync", "status", "create", "delete", "doctor", "reset"]
            .map(String::from)
            .to_vec();
        assert_eq!(nearest("sinc", &b), ["sync"]);
        assert_eq!(nearest("stat", &b)[0], "status");
        assert!(nearest("zzzzzzzz", &b).is_empty());
        let e = unknown_command("sinc", &b);
        assert_eq!(e.code, Code::Usage);
        assert!(e.fix.as_deref().unwrap().contains("gw sync"));
    }

    #[test]
    fn platform_check() {
        assert!(check_platform(b"#!/bin/sh\necho hi\n").is_ok());
        assert!(
            check_platform(b"<!DOCTYPE html><html>")
                .unwrap_err()
                .contains("HTML")
        );
        assert!(check_platform(b"hello").is_err());
        // This test binary itself is an executable for this platform.
        let me = std::env::current_exe().unwrap();
        let head = read_head(&me).unwrap();
        check_platform(&head).unwrap();
        // The same header claiming another CPU is refused.
        if head.starts_with(b"\x7fELF") {
            let mut other = head.clone();
            other[18] = other[18].wrapping_add(1);
            assert!(check_platform(&other).is_err());
        }
    }

    #[test]
    fn github_sources() {
        assert_eq!(
            github_repo("acme/gw-code"),
            Some(("acme".into(), "gw-code".into()))
        );
        assert_eq!(
            github_repo("github.com/acme/gw-code"),
            Some(("acme".into(), "gw-code".into()))
        );
        assert_eq!(github_repo("a/b/c"), None);
        assert_eq!(
            url_file_name("https://example.com/dl/gw-foo?x=1").as_deref(),
            Some("gw-foo")
        );
        assert_eq!(url_file_name("https://example.com/"), None);
        assert_eq!(github_repo("nope"), None);
    }
}
