//! `gw plugin install`: from a file, a URL or a GitHub release, checked to run on this platform.

use super::*;

#[derive(Debug, Clone)]
pub struct InstallOptions {
    /// A path, an http(s) URL, or `OWNER/REPO` (optionally `github.com/OWNER/REPO`).
    pub source: String,
    /// The plugin name; derived from the file name (`gw-<name>…`) when absent.
    pub name: Option<String>,
    /// Fetch and check everything as an install does, write nothing (the plugins directory
    /// not even for staging).
    pub dry_run: bool,
}

/// `gw plugin install PATH|URL|OWNER/REPO [--name NAME]`.
pub fn install(ctx: &Ctx<'_>, opts: InstallOptions) -> Result<PluginReport> {
    if let Some(n) = &opts.name {
        check_name(n)?;
    }
    let plugins = ctx.home.plugins();
    let staging = if opts.dry_run {
        let tmp = std::env::temp_dir();
        tempfile::Builder::new()
            .prefix("gw-plugin-")
            .tempdir_in(&tmp)
            .map_err(|e| fsx::Error::new("create a temporary directory in", &tmp, e))?
    } else {
        fsx::create_dir_all(&plugins)?;
        tempfile::Builder::new()
            .prefix(".install-")
            .tempdir_in(&plugins)
            .map_err(|e| fsx::Error::new("create a temporary directory in", &plugins, e))?
    };
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
    let unchanged = replaced && fsx::read_bytes(&dest).ok().as_deref() == Some(&bytes[..]);
    if !opts.dry_run {
        fsx::write_atomic_mode(&dest, &bytes, 0o755)?;
        // Where it came from, for `gw plugin upgrade`; a plugin works without it.
        let _ = record.save(&plugins, &name);
    }
    Ok(PluginReport {
        name,
        path: dest,
        outcome: if replaced {
            PluginOutcome::Replaced
        } else {
            PluginOutcome::Installed
        },
        source: Some(opts.source),
        dry_run: opts.dry_run,
        unchanged,
    })
}

pub(super) fn read_head(p: &Path) -> Result<Vec<u8>> {
    let mut bytes = fsx::read_bytes(p)?;
    bytes.truncate(64);
    Ok(bytes)
}

/// `gw-<name>` (goreleaser assets: `gw-<name>_<version>_<os>_<arch>`), with a script
/// extension dropped; any other file name is the name itself, minus its extension.
pub(super) fn name_from_file(p: &Path) -> Result<String> {
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
pub(super) fn find_in_archive(dir: &Path, name: Option<&str>) -> Result<PathBuf> {
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
pub(super) fn url_file_name(url: &str) -> Option<String> {
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
pub(super) fn github_repo(s: &str) -> Option<(String, String)> {
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

pub(super) fn download(url: &str, dest: &Path, cwd: &Path) -> Result<()> {
    Cmd::new("curl", cwd)
        .args(["--fail", "--silent", "--show-error", "--location"])
        .args(["--proto", "=https,http", "--max-time", "300", "--output"])
        .arg(dest)
        .arg(url)
        .check()
        .map_err(|e| download_error(url, e))?;
    Ok(())
}

pub(super) fn download_error(url: &str, e: crate::proc::Error) -> Error {
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
pub(super) fn download_release(
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
