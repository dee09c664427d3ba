//! `cargo xtask dist`: a release of `gw` and `gw-migrate` for this machine's target.
//!
//! The binaries are the ones `cargo xtask size` builds and measures (`cargo build
//! --release -p PACKAGE --bin BIN`, as `cargo install --path` builds them), so the size
//! report beside the archive describes exactly the bytes in it. The archive is
//! reproducible: entries in a fixed order, owned by root, dated at the commit.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

use crate::{size, util};

pub const USAGE: &str = "usage: cargo xtask dist [--out DIR] [--allow-dirty]

Builds the release gw and gw-migrate and writes into DIR (default: dist/):

  gw-VERSION-TARGET.tar.gz              gw, gw-migrate, README.md, LICENSE and completions/
                                        (bash, zsh, fish, elvish, PowerShell, nushell)
  gw-VERSION-TARGET.size.json           the size report of that build (cargo xtask size),
  gw-VERSION-TARGET.size.BIN.bloat.json and cargo-bloat's crate-mode JSON per binary
  SHA256SUMS                            every other file in DIR (sha256sum -c SHA256SUMS)

Fails when a binary is over its budget in size-reports/budget.toml.

  --out DIR      where the release is written (default: dist/)
  --allow-dirty  build from a working tree with uncommitted changes";

/// Completion scripts in the archive: the shell `gw completions` takes, and the file name
/// each shell looks for.
const COMPLETIONS: &[(&str, &str)] = &[
    ("bash", "gw.bash"),
    ("zsh", "_gw"),
    ("fish", "gw.fish"),
    ("elvish", "gw.elv"),
    ("powershell", "_gw.ps1"),
    ("nushell", "gw.nu"),
];

#[derive(Debug, Default)]
pub struct Options {
    out: Option<PathBuf>,
    allow_dirty: bool,
}

/// Checks the arguments; does no work.
pub fn parse(args: &[String]) -> Result<Options, String> {
    let mut opts = Options::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--out" => {
                let dir = it
                    .next()
                    .ok_or_else(|| format!("--out needs a directory\n\n{USAGE}"))?;
                opts.out = Some(PathBuf::from(dir));
            }
            "--allow-dirty" => opts.allow_dirty = true,
            other => return Err(format!("unknown argument `{other}`\n\n{USAGE}")),
        }
    }
    Ok(opts)
}

pub fn run(args: &[String]) -> Result<(), String> {
    let opts = parse(args)?;
    let root = util::project_root();
    let meta = size::Meta::of(&root)?;
    if meta.dirty && !opts.allow_dirty {
        return Err(
            "the working tree has uncommitted changes: a release is built from a commit \
             (commit or stash them, or pass --allow-dirty)"
                .into(),
        );
    }
    let version = gw_version(&root)?;
    let name = format!("gw-{version}-{}", meta.target()?);
    let out = opts.out.unwrap_or_else(|| root.join("dist"));
    let budgets = size::budgets(&root)?;
    let target_dir = util::target_dir(&root)?;

    let bins = size::measure(&root, &target_dir, &target_dir.join("size").join("symbols"))?;
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    for path in size::write_reports(&out, &format!("{name}.size"), &meta, &bins)? {
        eprintln!("wrote {}", path.display());
    }
    size::check_budget(&budgets, &bins)?;

    util::step(&format!("{name}.tar.gz"));
    let mut files: Vec<(String, Vec<u8>, u32)> = Vec::new();
    for b in &bins {
        let data = std::fs::read(&b.exe).map_err(|e| format!("{}: {e}", b.exe.display()))?;
        files.push((b.name.clone(), data, 0o755));
    }
    for doc in ["README.md", "LICENSE"] {
        let path = root.join(doc);
        let data = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        files.push((doc.to_string(), data, 0o644));
    }
    let gw = &bins
        .iter()
        .find(|b| b.name == "gw")
        .ok_or("the workspace builds no gw")?
        .exe;
    for (shell, file) in COMPLETIONS {
        files.push((format!("completions/{file}"), completion(gw, shell)?, 0o644));
    }
    let mtime = commit_time(&root)?;
    let archive = out.join(format!("{name}.tar.gz"));
    let bytes = tar_gz(&name, &files, mtime)?;
    std::fs::write(&archive, &bytes).map_err(|e| format!("{}: {e}", archive.display()))?;
    eprintln!("wrote {} ({} bytes)", archive.display(), bytes.len());

    let sums = sha256sums(&out)?;
    eprintln!("wrote {}", sums.display());
    Ok(())
}

/// The `gw` package's version.
fn gw_version(root: &Path) -> Result<String, String> {
    let md = cargo_metadata::MetadataCommand::new()
        .manifest_path(root.join("Cargo.toml"))
        .no_deps()
        .exec()
        .map_err(|e| e.to_string())?;
    md.workspace_packages()
        .iter()
        .find(|p| p.name.as_str() == "gw")
        .map(|p| p.version.to_string())
        .ok_or_else(|| "the workspace has no gw package".into())
}

/// `gw completions SHELL`, run by the binary being shipped, away from any grove directory.
fn completion(gw: &Path, shell: &str) -> Result<Vec<u8>, String> {
    let home = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = Command::new(gw)
        .args(["completions", shell])
        .current_dir(home.path())
        .env("HOME", home.path())
        .env("GW_HOME", home.path().join("grove"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{}: {e}", gw.display()))?;
    if !out.status.success() || out.stdout.is_empty() {
        return Err(format!(
            "`gw completions {shell}` failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(out.stdout)
}

/// The commit's time (or `SOURCE_DATE_EPOCH`): every entry's date, so that the same commit
/// gives the same archive.
fn commit_time(root: &Path) -> Result<u64, String> {
    if let Ok(s) = std::env::var("SOURCE_DATE_EPOCH") {
        return s
            .trim()
            .parse()
            .map_err(|_| format!("SOURCE_DATE_EPOCH is not a number of seconds: `{s}`"));
    }
    let t = size::git(root, &["log", "-1", "--format=%ct", "HEAD"])?;
    t.parse()
        .map_err(|_| format!("`git log -1 --format=%ct` printed `{t}`"))
}

/// A gzipped tar of `files` (path, bytes, mode) under the directory `top`, with its
/// directories, in path order, owned by root and dated `mtime`.
fn tar_gz(top: &str, files: &[(String, Vec<u8>, u32)], mtime: u64) -> Result<Vec<u8>, String> {
    use flate2::{Compression, GzBuilder};
    let gz = GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), Compression::best());
    let mut tar = tar::Builder::new(gz);
    let mut entries: Vec<(String, Option<&[u8]>, u32)> = vec![(format!("{top}/"), None, 0o755)];
    for (path, data, mode) in files {
        if let Some((dir, _)) = path.rsplit_once('/') {
            let dir = format!("{top}/{dir}/");
            if !entries.iter().any(|e| e.0 == dir) {
                entries.push((dir, None, 0o755));
            }
        }
        entries.push((format!("{top}/{path}"), Some(data.as_slice()), *mode));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let err = |e: std::io::Error| format!("writing the archive: {e}");
    for (path, data, mode) in entries {
        let mut h = tar::Header::new_gnu();
        h.set_mode(mode);
        h.set_mtime(mtime);
        h.set_uid(0);
        h.set_gid(0);
        h.set_username("root").map_err(err)?;
        h.set_groupname("root").map_err(err)?;
        match data {
            Some(data) => {
                h.set_entry_type(tar::EntryType::Regular);
                h.set_size(data.len() as u64);
                tar.append_data(&mut h, &path, data).map_err(err)?;
            }
            None => {
                h.set_entry_type(tar::EntryType::Directory);
                h.set_size(0);
                tar.append_data(&mut h, &path, std::io::empty())
                    .map_err(err)?;
            }
        }
    }
    tar.into_inner().and_then(|gz| gz.finish()).map_err(err)
}

/// Writes `DIR/SHA256SUMS`: one `HASH  NAME` line per other file in `dir`, by name.
fn sha256sums(dir: &Path) -> Result<PathBuf, String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n != "SHA256SUMS")
        .collect();
    names.sort();
    let mut text = String::new();
    for n in names {
        let data = std::fs::read(dir.join(&n)).map_err(|e| format!("{n}: {e}"))?;
        text += &format!("{}  {n}\n", hex(&Sha256::digest(&data)));
    }
    let path = dir.join("SHA256SUMS");
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(bytes: &[u8]) -> Vec<(String, u32, u64, u64, Vec<u8>)> {
        use std::io::Read;
        let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
        ar.entries()
            .unwrap()
            .map(|e| {
                let mut e = e.unwrap();
                let h = e.header().clone();
                let mut data = Vec::new();
                e.read_to_end(&mut data).unwrap();
                (
                    e.path().unwrap().to_string_lossy().into_owned(),
                    h.mode().unwrap(),
                    h.mtime().unwrap(),
                    h.uid().unwrap(),
                    data,
                )
            })
            .collect()
    }

    #[test]
    fn archives_are_reproducible_and_ordered() {
        let files = vec![
            ("gw".to_string(), b"bin".to_vec(), 0o755),
            ("completions/_gw".to_string(), b"zsh".to_vec(), 0o644),
            ("README.md".to_string(), b"readme".to_vec(), 0o644),
        ];
        let a = tar_gz("gw-1.0.0-x", &files, 1_700_000_000).unwrap();
        let mut shuffled = files.clone();
        shuffled.reverse();
        assert_eq!(a, tar_gz("gw-1.0.0-x", &shuffled, 1_700_000_000).unwrap());
        let e = entries(&a);
        let paths: Vec<&str> = e.iter().map(|e| e.0.as_str()).collect();
        assert_eq!(
            paths,
            [
                "gw-1.0.0-x/",
                "gw-1.0.0-x/README.md",
                "gw-1.0.0-x/completions/",
                "gw-1.0.0-x/completions/_gw",
                "gw-1.0.0-x/gw"
            ]
        );
        let gw = e.iter().find(|e| e.0 == "gw-1.0.0-x/gw").unwrap();
        assert_eq!(
            (gw.1, gw.2, gw.3, gw.4.as_slice()),
            (0o755, 1_700_000_000, 0, &b"bin"[..])
        );
        assert_ne!(a, tar_gz("gw-1.0.0-x", &files, 1).unwrap());
    }

    #[test]
    fn sums_cover_every_other_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.tar.gz"), b"abc").unwrap();
        std::fs::write(dir.path().join("a.json"), b"").unwrap();
        std::fs::write(dir.path().join("SHA256SUMS"), b"old").unwrap();
        let sums = std::fs::read_to_string(sha256sums(dir.path()).unwrap()).unwrap();
        assert_eq!(
            sums,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  a.json\n\
             ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  b.tar.gz\n"
        );
    }

    #[test]
    fn arguments() {
        let o = parse(&["--out".into(), "d".into(), "--allow-dirty".into()]).unwrap();
        assert_eq!(o.out, Some(PathBuf::from("d")));
        assert!(o.allow_dirty);
        assert!(parse(&["--out".into()]).is_err());
        assert!(parse(&["--target".into(), "x".into()]).is_err());
    }

    /// `cargo xtask dist` for real: the archive unpacks with the system's `tar`, its `gw`
    /// and `gw-migrate` run from a temporary directory, and SHA256SUMS holds.
    #[test]
    #[ignore = "builds the release binaries; run by `cargo xtask ci`"]
    fn dist_archive_runs_gw_version_from_a_temp_dir() {
        let root = util::project_root();
        let out = tempfile::tempdir().unwrap();
        run(&[
            "--out".into(),
            out.path().to_str().unwrap().into(),
            "--allow-dirty".into(),
        ])
        .unwrap();
        let version = gw_version(&root).unwrap();
        let host = size::Meta::of(&root).unwrap().target().unwrap().to_string();
        let name = format!("gw-{version}-{host}");
        let archive = out.path().join(format!("{name}.tar.gz"));

        let sums = std::fs::read_to_string(out.path().join("SHA256SUMS")).unwrap();
        let listed: Vec<&str> = sums
            .lines()
            .map(|l| l.split_once("  ").unwrap().1)
            .collect();
        assert_eq!(
            listed,
            [
                format!("{name}.size.gw-migrate.bloat.json"),
                format!("{name}.size.gw.bloat.json"),
                format!("{name}.size.json"),
                format!("{name}.tar.gz"),
            ]
        );
        for line in sums.lines() {
            let (hash, file) = line.split_once("  ").unwrap();
            let data = std::fs::read(out.path().join(file)).unwrap();
            assert_eq!(hash, hex(&Sha256::digest(&data)), "{file}");
        }

        let unpacked = tempfile::tempdir().unwrap();
        let status = Command::new("tar")
            .arg("-xzf")
            .arg(&archive)
            .arg("-C")
            .arg(unpacked.path())
            .status()
            .unwrap();
        assert!(status.success(), "tar -xzf {}", archive.display());
        let dir = unpacked.path().join(&name);
        for f in [
            "README.md",
            "LICENSE",
            "completions/gw.bash",
            "completions/_gw",
            "completions/gw.fish",
        ] {
            let len = std::fs::metadata(dir.join(f)).unwrap().len();
            assert!(len > 0, "{f} is empty");
        }
        let bash = std::fs::read_to_string(dir.join("completions/gw.bash")).unwrap();
        // It registers a completion for `gw` (`complete [-o …] -F _clap_complete_gw gw`).
        assert!(
            bash.lines().any(|l| {
                let l = l.trim();
                l.starts_with("complete ") && l.contains(" -F ") && l.ends_with(" gw")
            }),
            "{bash}"
        );

        let elsewhere = tempfile::tempdir().unwrap();
        for (bin, expected) in [
            ("gw", format!("gw {version}")),
            ("gw-migrate", format!("gw-migrate {version}")),
        ] {
            let out = Command::new(dir.join(bin))
                .arg("--version")
                .current_dir(elsewhere.path())
                .env_clear()
                .env("HOME", elsewhere.path())
                .output()
                .unwrap();
            assert!(out.status.success(), "{bin} --version: {out:?}");
            assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), expected);
        }
        // The size report is of the binaries in the archive.
        let report: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out.path().join(format!("{name}.size.json"))).unwrap(),
        )
        .unwrap();
        let gw_size = std::fs::metadata(dir.join("gw")).unwrap().len();
        assert_eq!(report["binaries"][0]["name"], "gw");
        assert_eq!(report["binaries"][0]["file-size"], gw_size);
    }
}
