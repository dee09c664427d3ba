//! `cargo xtask dist`: a release of `gw` and `gw-migrate` for one target.
//!
//! The binaries are the ones `cargo xtask size` builds and measures (`cargo build
//! --release -p PACKAGE --bin BIN [--target TRIPLE]`, as `cargo install --path` builds
//! them), so the size report beside the archive describes exactly the bytes in it. The
//! archive is reproducible: entries in a fixed order, owned by root, dated at the commit.
//! What goes beside the binaries (completions, man pages) is made in process from the same
//! source, so a target this machine cannot run is packaged the same way; when it can run
//! them, the archive is unpacked and both binaries are run from it, with no environment.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

use crate::{man, size, util};

pub const USAGE: &str = "usage: cargo xtask dist [--target TRIPLE] [--out DIR] [--allow-dirty]

Builds the release gw and gw-migrate and writes into DIR (default: dist/):

  gw-VERSION-TARGET.tar.gz              gw-VERSION-TARGET/ holding gw, gw-migrate,
                                        README.md, LICENSE, completions/ (bash, zsh,
                                        fish, elvish, PowerShell, nushell), man/man1/,
                                        schema/ (config.toml's and .grove.toml's),
                                        skills/grove/SKILL.md, and SHA256SUMS of them all
  gw-VERSION-TARGET.size.json           the size report of that build (cargo xtask size),
  gw-VERSION-TARGET.size.BIN.bloat.json and cargo-bloat's crate-mode JSON per binary
  config.schema.json                    the JSON Schemas of config.toml and .grove.toml
  grove-toml.schema.json                (the same in every target's release)
  SHA256SUMS                            every other file in DIR (sha256sum -c SHA256SUMS)

When this machine runs TARGET's binaries, the archive is unpacked into a temporary
directory and its gw and gw-migrate run there with an empty environment. Fails when a
binary is over its budget in size-reports/budget.toml.

  --target TRIPLE  build for TRIPLE, e.g. x86_64-unknown-linux-musl (a static binary;
                   `rustup target add` it first); default: this machine's
  --out DIR        where the release is written (default: dist/)
  --allow-dirty    build from a working tree with uncommitted changes";

/// Completion scripts in the archive: the shell `gw completions` takes, and the file name
/// each shell looks for.
const COMPLETIONS: &[(&str, &str)] = &[
    ("bash", "gw.bash"),
    ("zsh", "_gw"),
    ("fish", "gw.fish"),
    ("elvish", "gw.elv"),
    ("powershell", "_gw.ps1"),
    ("nu", "gw.nu"),
];

/// The checksums inside the archive, beside the files they cover.
const SUMS: &str = "SHA256SUMS";

/// The schemas of the files grove reads, for editors (`gw schema NAME`), and the file name
/// each has in the archive's `schema/` and beside it as a release asset, where a
/// `#:schema https://…/releases/latest/download/NAME` line finds it.
pub const EDITOR_SCHEMAS: &[(&str, &str)] = &[
    ("config", "config.schema.json"),
    ("grove-toml", "grove-toml.schema.json"),
];

/// The agent skill's place in the archive (`gw skill` prints the same file).
const SKILL: &str = "skills/grove/SKILL.md";

#[derive(Debug, Default)]
pub struct Options {
    out: Option<PathBuf>,
    allow_dirty: bool,
    target: Option<String>,
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
            "--target" => {
                let t = it
                    .next()
                    .ok_or_else(|| format!("--target needs a target triple\n\n{USAGE}"))?;
                opts.target = Some(size::check_target(t)?);
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
    let meta = size::Meta::of(&root, opts.target.as_deref())?;
    if meta.dirty && !opts.allow_dirty {
        return Err(
            "the working tree has uncommitted changes: a release is built from a commit \
             (commit or stash them, or pass --allow-dirty)"
                .into(),
        );
    }
    let version = gw_version(&root)?;
    let name = archive_dir(&version, meta.target());
    let out = opts.out.unwrap_or_else(|| root.join("dist"));
    let budgets = size::budgets(&root)?;
    let target_dir = util::target_dir(&root)?;

    let bins = size::measure(
        &root,
        &target_dir,
        &target_dir.join("size").join("symbols"),
        &meta,
    )?;
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    for path in size::write_reports(&out, &format!("{name}.size"), &meta, &bins)? {
        eprintln!("wrote {}", path.display());
    }
    size::check_budget(&budgets, &bins)?;

    util::step(&format!("{name}.tar.gz"));
    let files = contents(&root, &bins)?;
    let mtime = commit_time(&root)?;
    let archive = out.join(format!("{name}.tar.gz"));
    let bytes = tar_gz(&name, &files, mtime)?;
    std::fs::write(&archive, &bytes).map_err(|e| format!("{}: {e}", archive.display()))?;
    eprintln!("wrote {} ({} bytes)", archive.display(), bytes.len());

    for (name, file) in EDITOR_SCHEMAS {
        let path = out.join(file);
        std::fs::write(&path, editor_schema(name)?)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    let sums = sha256sums(&out)?;
    eprintln!("wrote {}", sums.display());

    let host = meta.toolchain.get("host").map_or("", String::as_str);
    if runs_on(meta.target(), host) {
        util::step(&format!(
            "{name}: gw and gw-migrate from the unpacked archive"
        ));
        for line in try_unpacked(&bytes, &name)? {
            eprintln!("{line}");
        }
    } else {
        eprintln!(
            "not run: {} binaries do not run on {host}; unpack the archive on such a machine \
             and run ./gw --version",
            meta.target()
        );
    }
    Ok(())
}

/// `gw-VERSION-TARGET`: the archive's name without `.tar.gz`, and its top directory.
pub fn archive_dir(version: &str, target: &str) -> String {
    format!("gw-{version}-{target}")
}

/// Whether binaries for `target` run on `host`: the same architecture and system (a
/// static musl binary runs on any Linux of its architecture).
fn runs_on(target: &str, host: &str) -> bool {
    let arch = |t: &str| t.split('-').next().unwrap_or("").to_string();
    let system = |t: &str| {
        ["linux", "darwin", "windows", "freebsd"]
            .into_iter()
            .find(|s| t.split('-').any(|p| p == *s))
    };
    arch(target) == arch(host) && system(target).is_some() && system(target) == system(host)
}

/// Everything in the archive but the directory entries: `(path, bytes, mode)`, its
/// `SHA256SUMS` (of every other file) last.
fn contents(root: &Path, bins: &[size::BinSize]) -> Result<Vec<(String, Vec<u8>, u32)>, String> {
    let mut files: Vec<(String, Vec<u8>, u32)> = Vec::new();
    for b in bins {
        let data = std::fs::read(&b.exe).map_err(|e| format!("{}: {e}", b.exe.display()))?;
        files.push((b.name.clone(), data, 0o755));
    }
    for doc in ["README.md", "LICENSE"] {
        let path = root.join(doc);
        let data = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        files.push((doc.to_string(), data, 0o644));
    }
    for (shell, file) in COMPLETIONS {
        files.push((format!("completions/{file}"), completion(shell)?, 0o644));
    }
    let pages = tempfile::tempdir().map_err(|e| e.to_string())?;
    for page in man::write(pages.path())? {
        let data = std::fs::read(&page).map_err(|e| format!("{}: {e}", page.display()))?;
        let file = page.file_name().unwrap_or_default().to_string_lossy();
        files.push((format!("man/man1/{file}"), data, 0o644));
    }
    for (name, file) in EDITOR_SCHEMAS {
        files.push((format!("schema/{file}"), editor_schema(name)?, 0o644));
    }
    files.push((
        SKILL.to_string(),
        grove::ops::skill::SKILL_MD.as_bytes().to_vec(),
        0o644,
    ));
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let sums = sums_text(files.iter().map(|(p, d, _)| (p.as_str(), d.as_slice())));
    files.push((SUMS.to_string(), sums.into_bytes(), 0o644));
    Ok(files)
}

/// The schema `gw schema NAME` prints: the published document.
fn editor_schema(name: &str) -> Result<Vec<u8>, String> {
    grove::schema::find(name)
        .map(|e| e.json.as_bytes().to_vec())
        .ok_or_else(|| format!("gw publishes no schema named `{name}`"))
}

/// The completion script `gw completions SHELL` prints when `gw` is run from the `PATH`,
/// as it is once installed: made in process by the same function, so that the script
/// calls `gw` rather than the path of the binary that was built.
fn completion(shell: &str) -> Result<Vec<u8>, String> {
    let completer = grove::cli::complete::shell(shell)
        .ok_or_else(|| format!("gw has no completion script for `{shell}`"))?;
    grove::cli::complete::script(completer, "gw")
        .map(String::into_bytes)
        .map_err(|e| format!("the {shell} completion script: {e}"))
}

/// Unpacks `archive` (a gzipped tar whose top directory is `top`) into a temporary
/// directory and runs its `gw --version` and `gw-migrate --version` there with an empty
/// environment; fails unless each prints its name and this build's version. Returns what
/// they printed.
fn try_unpacked(archive: &[u8], top: &str) -> Result<Vec<String>, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    tar::Archive::new(flate2::read::GzDecoder::new(archive))
        .unpack(dir.path())
        .map_err(|e| format!("unpacking the archive: {e}"))?;
    let unpacked = dir.path().join(top);
    let mut printed = Vec::new();
    for bin in ["gw", "gw-migrate"] {
        let out = Command::new(unpacked.join(bin))
            .arg("--version")
            .current_dir(dir.path())
            .env_clear()
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("{bin} from the archive: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let want = format!("{bin} {}", grove::VERSION);
        if !out.status.success() || text != want {
            return Err(format!(
                "{bin} --version from the unpacked archive printed `{text}` ({}), not `{want}`: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        printed.push(text);
    }
    Ok(printed)
}

/// The `gw` package's version.
pub fn gw_version(root: &Path) -> Result<String, String> {
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
        .filter(|n| n != SUMS)
        .collect();
    names.sort();
    let mut files = Vec::new();
    for n in names {
        let data = std::fs::read(dir.join(&n)).map_err(|e| format!("{n}: {e}"))?;
        files.push((n, data));
    }
    let text = sums_text(files.iter().map(|(n, d)| (n.as_str(), d.as_slice())));
    let path = dir.join(SUMS);
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// `sha256sum`'s lines (`HASH  NAME`) for `files`, in the order given.
pub fn sums_text<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> String {
    files
        .into_iter()
        .map(|(name, data)| format!("{}  {name}\n", hex(&Sha256::digest(data))))
        .collect()
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
        let o = parse(&["--target".into(), "x86_64-unknown-linux-musl".into()]).unwrap();
        assert_eq!(o.target.as_deref(), Some("x86_64-unknown-linux-musl"));
        for bad in [
            "x",
            "x86_64",
            "../x-y-z",
            "X86_64-unknown-linux-musl",
            "a-b-c-d-e",
        ] {
            let err = parse(&["--target".into(), bad.into()]).unwrap_err();
            assert!(err.contains("not a target triple"), "{bad}: {err}");
        }
        assert!(parse(&["--target".into()]).is_err());
    }

    #[test]
    fn which_binaries_run_here() {
        let linux = "x86_64-unknown-linux-gnu";
        assert!(runs_on(linux, linux));
        assert!(runs_on("x86_64-unknown-linux-musl", linux));
        assert!(!runs_on("aarch64-unknown-linux-musl", linux));
        assert!(!runs_on("x86_64-apple-darwin", linux));
        assert!(runs_on("aarch64-apple-darwin", "aarch64-apple-darwin"));
        assert!(!runs_on("x86_64-apple-darwin", "aarch64-apple-darwin"));
    }

    /// What goes beside the binaries, made without a release build: completion scripts
    /// that call `gw` from the `PATH` (never the path of the binary that was built), a man
    /// page per command, and checksums of all of it that `sha256sum -c` accepts.
    #[test]
    fn the_archive_holds_completions_man_pages_and_their_sums() {
        let tmp = tempfile::tempdir().unwrap();
        let exe = tmp.path().join("build/release/gw");
        std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
        std::fs::write(&exe, b"\x7fELF gw").unwrap();
        let bin = |name: &str| size::BinSize {
            name: name.into(),
            package: name.into(),
            exe: exe.clone(),
            file_size: 8,
            unstripped_size: 8,
            text_size: 0,
            crates: vec![],
            functions: vec![],
        };
        let files = contents(&util::project_root(), &[bin("gw"), bin("gw-migrate")]).unwrap();
        let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
        for want in [
            "gw",
            "gw-migrate",
            "README.md",
            "LICENSE",
            "completions/gw.bash",
            "completions/_gw",
            "completions/gw.fish",
            "completions/gw.elv",
            "completions/_gw.ps1",
            "completions/gw.nu",
            "man/man1/gw.1",
            "man/man1/gw-create.1",
            "schema/config.schema.json",
            "schema/grove-toml.schema.json",
            "skills/grove/SKILL.md",
            "SHA256SUMS",
        ] {
            assert!(names.contains(&want), "{want} is not in {names:?}");
        }
        assert_eq!(names.last(), Some(&"SHA256SUMS"));
        let mode = |n: &str| files.iter().find(|f| f.0 == n).unwrap().2;
        assert_eq!((mode("gw"), mode("README.md")), (0o755, 0o644));
        for (path, data, _) in files.iter().filter(|f| f.0.starts_with("completions/")) {
            let text = String::from_utf8_lossy(data);
            assert!(
                !text.contains("build/release"),
                "{path} calls the build: {text}"
            );
            assert!(
                !text.contains(&tmp.path().display().to_string()),
                "{path}: {text}"
            );
        }
        let bash = String::from_utf8_lossy(
            &files
                .iter()
                .find(|f| f.0 == "completions/gw.bash")
                .unwrap()
                .1,
        )
        .into_owned();
        assert_eq!(
            bash,
            grove::cli::complete::script(grove::cli::complete::shell("bash").unwrap(), "gw")
                .unwrap()
        );
        // The sums name every other file, by its path in the archive, and hold.
        let sums = String::from_utf8(files.last().unwrap().1.clone()).unwrap();
        let listed: Vec<&str> = sums
            .lines()
            .map(|l| l.split_once("  ").unwrap().1)
            .collect();
        assert_eq!(listed, names[..names.len() - 1]);
        for line in sums.lines() {
            let (hash, path) = line.split_once("  ").unwrap();
            let data = &files.iter().find(|f| f.0 == path).unwrap().1;
            assert_eq!(hash, hex(&Sha256::digest(data)), "{path}");
        }
    }

    /// `gw 0.1.0 (0123abcde 2026-12-03)`: what a build of this checkout's HEAD says.
    fn expected_version(root: &Path, bin: &str) -> String {
        let version = gw_version(root).unwrap();
        let line = size::git(
            root,
            &["log", "-1", "--no-show-signature", "--format=%H %cs"],
        )
        .unwrap();
        let (hash, date) = line.split_once(' ').unwrap();
        format!("{bin} {version} ({} {date})", &hash[..9])
    }

    /// Runs `program args` in `dir`, failing the test unless it succeeds; its stdout.
    fn run_in(dir: &Path, program: &str, args: &[&str]) -> String {
        let out = Command::new(program)
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap_or_else(|e| panic!("{program}: {e}"));
        assert!(
            out.status.success(),
            "{program} {args:?} in {}: {}{}",
            dir.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Whether `rustup target add TARGET` was done: its standard library is in the sysroot.
    fn target_installed(target: &str) -> bool {
        let out = Command::new("rustc")
            .args(["--print", "sysroot"])
            .output()
            .unwrap();
        let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        sysroot
            .join("lib/rustlib")
            .join(target)
            .join("lib")
            .is_dir()
    }

    /// `cargo xtask dist` for real, for what a release ships for this machine: on x86_64
    /// Linux the static `x86_64-unknown-linux-musl` build. The archive unpacks with the
    /// system's `tar`; its `gw --version` and `gw-migrate --version` run from a temporary
    /// directory under `env -i` (no `PATH`, so no Rust either) and name the commit; `ldd`
    /// calls them static and they have no interpreter or needed library; `sha256sum -c`
    /// accepts both SHA256SUMS.
    #[test]
    #[ignore = "builds the release binaries; run by `cargo xtask ci`"]
    fn dist_archive_runs_with_no_environment_and_its_sums_hold() {
        let root = util::project_root();
        let host = size::Meta::of(&root, None).unwrap().target().to_string();
        let musl = "x86_64-unknown-linux-musl";
        let target = (host == "x86_64-unknown-linux-gnu").then_some(musl);
        if let Some(t) = target
            && !target_installed(t)
        {
            e2e::skip(&format!(
                "the {t} target is not installed (.ci/run adds it: rustup target add {t})"
            ));
            return;
        }
        let out = tempfile::tempdir().unwrap();
        let mut args = vec![
            "--out".to_string(),
            out.path().to_str().unwrap().into(),
            "--allow-dirty".into(),
        ];
        if let Some(t) = target {
            args.extend(["--target".to_string(), t.to_string()]);
        }
        run(&args).unwrap();
        let version = gw_version(&root).unwrap();
        let name = archive_dir(&version, target.unwrap_or(&host));
        let archive = out.path().join(format!("{name}.tar.gz"));

        let sums = std::fs::read_to_string(out.path().join("SHA256SUMS")).unwrap();
        let listed: Vec<&str> = sums
            .lines()
            .map(|l| l.split_once("  ").unwrap().1)
            .collect();
        assert_eq!(
            listed,
            [
                "config.schema.json".to_string(),
                "grove-toml.schema.json".to_string(),
                format!("{name}.size.gw-migrate.bloat.json"),
                format!("{name}.size.gw.bloat.json"),
                format!("{name}.size.json"),
                format!("{name}.tar.gz"),
            ]
        );
        let sha256sum: &[&str] = if cfg!(target_os = "macos") {
            &["shasum", "-a", "256", "-c", "SHA256SUMS"]
        } else {
            &["sha256sum", "-c", "SHA256SUMS"]
        };
        run_in(out.path(), sha256sum[0], &sha256sum[1..]);

        let unpacked = tempfile::tempdir().unwrap();
        run_in(unpacked.path(), "tar", &["-xzf", archive.to_str().unwrap()]);
        let dir = unpacked.path().join(&name);
        let checked = run_in(&dir, sha256sum[0], &sha256sum[1..]);
        for f in [
            "gw",
            "gw-migrate",
            "README.md",
            "LICENSE",
            "completions/gw.bash",
            "completions/_gw",
            "completions/gw.fish",
            "completions/gw.nu",
            "man/man1/gw.1",
            "schema/config.schema.json",
            "skills/grove/SKILL.md",
        ] {
            assert!(
                checked.contains(&format!("{f}: OK")),
                "{f} not checked: {checked}"
            );
        }

        let elsewhere = tempfile::tempdir().unwrap();
        for bin in ["gw", "gw-migrate"] {
            let exe = dir.join(bin);
            let printed = run_in(
                elsewhere.path(),
                "env",
                &["-i", exe.to_str().unwrap(), "--version"],
            );
            assert_eq!(printed.trim(), expected_version(&root, bin));
            if target == Some(musl) {
                static_elf(&exe);
            }
        }
        // The size report is of the binaries in the archive.
        let report: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out.path().join(format!("{name}.size.json"))).unwrap(),
        )
        .unwrap();
        let gw_size = std::fs::metadata(dir.join("gw")).unwrap().len();
        assert_eq!(report["binaries"][0]["name"], "gw");
        assert_eq!(report["binaries"][0]["file-size"], gw_size);
        assert_eq!(report["target"], target.unwrap_or(&host));
    }

    /// `ldd` says `exe` is static, and the ELF file agrees: no program interpreter, no
    /// needed shared library.
    fn static_elf(exe: &Path) {
        use object::read::elf::{Dyn, ElfFile64, ProgramHeader};
        let out = Command::new("ldd").arg(exe).output().unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            said.contains("statically linked") || said.contains("not a dynamic executable"),
            "ldd {}: {said}",
            exe.display()
        );
        let data = std::fs::read(exe).unwrap();
        let elf = ElfFile64::<object::Endianness>::parse(data.as_slice()).unwrap();
        let endian = elf.endian();
        for ph in elf.elf_program_headers() {
            assert_ne!(
                ph.p_type(endian),
                object::elf::PT_INTERP,
                "{} asks for a program interpreter",
                exe.display()
            );
            if let Ok(Some(dynamic)) = ph.dynamic(endian, data.as_slice()) {
                for d in dynamic {
                    assert_ne!(
                        d.tag(endian),
                        object::elf::DT_NEEDED,
                        "{} needs a shared library",
                        exe.display()
                    );
                }
            }
        }
    }
}
