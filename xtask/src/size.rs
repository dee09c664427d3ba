//! `cargo xtask size`: how big the release binaries are, and which crates the bytes come from.
//!
//! Each measurement builds the shipped binaries (`gw`, and `gw-migrate` where the revision
//! has it), each with `cargo build --release -p PACKAGE --bin BIN` as `cargo install --path`
//! does, twice: once exactly as shipped (stripped), for the file size, and once with
//! `CARGO_PROFILE_RELEASE_STRIP=false` into a separate target directory, exactly as
//! `cargo bloat --release -p PACKAGE --bin BIN` builds it. That binary's symbol table
//! attributes the text section to crates the way cargo-bloat 0.12 does (see [`Namer`]), so
//! the per-crate figures agree with `cargo bloat --crates` on the same binary (a test checks
//! it). Both builds are the same code: stripping only drops the symbol table.
//!
//! Reports (`--out`, default `size-reports/`):
//! - `LABEL.json`: commit, toolchain, target, profile, and per binary its shipped and
//!   unstripped file sizes, text section size and crates;
//! - `LABEL.BIN.bloat.json` per binary: exactly cargo-bloat's crate-mode JSON
//!   (`cargo bloat --crates -n 0 --message-format json`), read by anything that reads
//!   cargo-bloat's output. Its `file-size` is the shipped (stripped) binary's size, where
//!   cargo-bloat reports the unstripped build it analysed.
//!
//! `--baseline REV` also measures REV in a temporary git worktree and prints a Markdown
//! before/after table; `--compare A B` prints that table from two saved reports (ours, or
//! cargo-bloat's own output) without building.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cargo_metadata::{Message, MetadataCommand};
use serde_json::{Value, json};

use crate::util::{self, thousands};

/// The binaries a release ships; a revision is measured for those it defines.
pub const SHIPPED: &[&str] = &["gw", "gw-migrate"];
const UNKNOWN: &str = "[Unknown]";
/// The `format` of the reports this version writes. Reports without one (format 1) named
/// crates by package and did not fold the standard library's crates into `std`.
const FORMAT: u64 = 2;
/// cargo-bloat's default for `-n`.
const DEFAULT_CRATES: usize = 20;

pub const USAGE: &str = "usage: cargo xtask size [--label LABEL] [--out DIR] [--baseline REV] [--target TRIPLE] [--crates N] [--filter CRATE]
       cargo xtask size --rev REV --label LABEL [--out DIR] [--target TRIPLE]
       cargo xtask size --compare BEFORE.json AFTER.json [--crates N] [--filter CRATE]

Builds the release gw and gw-migrate, attributes each one's text section to crates as
`cargo bloat --crates` does, prints a Markdown table on stdout, and fails when a binary is
larger than size-reports/budget.toml allows.

  --label LABEL    write the working tree's report to DIR/LABEL.json and, per binary,
                   cargo-bloat's crate-mode JSON to DIR/LABEL.BIN.bloat.json
                   (default without --baseline: the short commit hash)
  --out DIR        where reports are written (default: size-reports/)
  --baseline REV   also build REV in a temporary git worktree and print a before/after
                   table by crate instead
  --rev REV        measure REV (a tag, branch or commit, built in a temporary git worktree
                   by this xtask) instead of the working tree, e.g. to give an old report
                   its cargo-bloat files
  --target TRIPLE  build for TRIPLE (`rustup target add` it first), e.g.
                   x86_64-unknown-linux-musl; default: this machine's
  --compare A B    print the before/after table of two saved reports (LABEL.json,
                   LABEL.BIN.bloat.json, or `cargo bloat --crates --message-format json`
                   output) without building
  --crates N       rows to show: the N largest crates (default 20), or in a before/after
                   table the N largest changes (default all); 0 shows all
  --filter CRATE   only CRATE: its N largest functions after a build (as
                   `cargo bloat --filter CRATE`), its row in a before/after table";

#[derive(Debug, Default)]
pub struct Options {
    label: Option<String>,
    out: Option<PathBuf>,
    baseline: Option<String>,
    rev: Option<String>,
    compare: Option<(PathBuf, PathBuf)>,
    target: Option<String>,
    crates: Option<usize>,
    filter: Option<String>,
}

/// Checks the arguments; does no work.
pub fn parse(args: &[String]) -> Result<Options, String> {
    let mut opts = Options::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |flag: &str| util::value(&mut it, flag, USAGE);
        match a.as_str() {
            "--label" => opts.label = Some(value("--label")?),
            "--out" => opts.out = Some(PathBuf::from(value("--out")?)),
            "--baseline" => opts.baseline = Some(value("--baseline")?),
            "--rev" => opts.rev = Some(value("--rev")?),
            "--target" => opts.target = Some(check_target(&value("--target")?)?),
            "--compare" => {
                let a = value("--compare")?;
                let b = it
                    .next()
                    .ok_or_else(|| format!("--compare needs two reports\n\n{USAGE}"))?;
                opts.compare = Some((PathBuf::from(a), PathBuf::from(b)));
            }
            "--crates" => {
                let n = value("--crates")?;
                opts.crates = Some(n.parse().map_err(|_| {
                    format!("--crates takes a number of rows (0 for all), not `{n}`")
                })?);
            }
            "--filter" => opts.filter = Some(value("--filter")?),
            other => return Err(format!("unknown argument `{other}`\n\n{USAGE}")),
        }
    }
    if let Some(l) = &opts.label
        && (l.is_empty() || l.contains(['/', '\\']) || l.starts_with('.'))
    {
        return Err(format!("invalid label `{l}`: use a plain file name"));
    }
    if opts.filter.as_deref() == Some("") {
        return Err("--filter needs a crate name".into());
    }
    if opts.rev.is_some() && (opts.baseline.is_some() || opts.label.is_none()) {
        return Err(
            "--rev writes the report of one revision: it takes a --label and no --baseline".into(),
        );
    }
    if opts.compare.is_some()
        && (opts.rev.is_some()
            || opts.label.is_some()
            || opts.baseline.is_some()
            || opts.out.is_some()
            || opts.target.is_some())
    {
        return Err(
            "--compare reads two saved reports; it builds nothing, so it takes no --rev, --label, --out, --baseline or --target"
                .into(),
        );
    }
    Ok(opts)
}

pub fn run(args: &[String]) -> Result<(), String> {
    let opts = parse(args)?;
    if let Some((a, b)) = &opts.compare {
        let before = load(a)?;
        let after = load(b)?;
        print!(
            "{}",
            comparison(&before, &after, &opts, &BTreeMap::new(), None)
        );
        return Ok(());
    }
    let root = util::project_root();
    let target_dir = util::target_dir(&root)?;
    let meta = Meta::of(&root, opts.target.as_deref())?;
    let budgets = budgets(&root)?;

    if let (Some(rev), Some(label)) = (&opts.rev, &opts.label) {
        let (commit, bins) = measure_commit(&root, rev, &target_dir, &meta)?;
        let meta = Meta {
            commit,
            dirty: false,
            ..meta
        };
        let dir = opts
            .out
            .clone()
            .unwrap_or_else(|| root.join("size-reports"));
        for path in write_reports(&dir, label, &meta, &bins)? {
            eprintln!("wrote {}", path.display());
        }
        print!("{}", measurement(&bins, &opts, &budgets)?);
        return Ok(());
    }

    // The working tree first: it is what was asked for, and editing it while the slower
    // baseline builds must not change what is recorded.
    util::step("measuring the working tree");
    let after = measure(
        &root,
        &target_dir,
        &target_dir.join("size").join("symbols"),
        &meta,
    )?;
    let before = match &opts.baseline {
        Some(rev) => Some(measure_rev(&root, rev, &target_dir, &meta)?),
        None => None,
    };
    let label = opts.label.clone().or_else(|| {
        opts.baseline
            .is_none()
            .then(|| meta.short_commit().to_string())
    });
    if let Some(label) = &label {
        let dir = opts
            .out
            .clone()
            .unwrap_or_else(|| root.join("size-reports"));
        for path in write_reports(&dir, label, &meta, &after)? {
            eprintln!("wrote {}", path.display());
        }
    }
    match before {
        Some((rev, before)) => {
            let after_side = Side {
                title: format!("working tree ({})", meta.short_commit()),
                legacy: false,
                single: false,
                bins: after.iter().map(BinSize::saved).collect(),
            };
            print!(
                "{}",
                comparison(&before, &after_side, &opts, &budgets, Some(&rev))
            );
        }
        None => print!("{}", measurement(&after, &opts, &budgets)?),
    }
    check_budget(&budgets, &after)
}

/// One measured binary.
#[derive(Clone)]
pub struct BinSize {
    pub name: String,
    pub package: String,
    /// The shipped (stripped) executable.
    pub exe: PathBuf,
    pub file_size: u64,
    /// The same build with its symbol table, which the attribution reads.
    pub unstripped_size: u64,
    pub text_size: u64,
    /// Crate → bytes of text attributed to it, largest first.
    pub crates: Vec<(String, u64)>,
    /// `(crate, function, bytes)`, largest first.
    pub functions: Vec<(String, String, u64)>,
}

impl BinSize {
    fn saved(&self) -> Saved {
        Saved {
            name: Some(self.name.clone()),
            file_size: self.file_size,
            text_size: self.text_size,
            crates: self.crates.clone(),
        }
    }
}

/// What the reports record besides the binaries.
pub struct Meta {
    pub commit: String,
    pub dirty: bool,
    pub toolchain: BTreeMap<String, String>,
    /// The target triple built for: `--target`'s, else the host's.
    target: String,
    /// Whether `--target` was given (cargo then builds into `target/TRIPLE/`).
    cross: bool,
}

impl Meta {
    /// The checkout at `root`, built for `target` (`None`: this machine).
    pub fn of(root: &Path, target: Option<&str>) -> Result<Meta, String> {
        let toolchain = toolchain()?;
        let host = toolchain
            .get("host")
            .cloned()
            .ok_or("`rustc -vV` names no host")?;
        Ok(Meta {
            commit: git(root, &["rev-parse", "HEAD"])?,
            dirty: is_dirty(root)?,
            toolchain,
            target: target.map_or(host, str::to_string),
            cross: target.is_some(),
        })
    }

    fn short_commit(&self) -> String {
        let s = short(&self.commit);
        if self.dirty {
            format!("{s}-dirty")
        } else {
            s.to_string()
        }
    }

    /// The triple these builds target.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// `--target TRIPLE` for cargo when one was asked for.
    fn target_args(&self) -> Vec<&str> {
        if self.cross {
            vec!["--target", &self.target]
        } else {
            Vec::new()
        }
    }
}

/// A target triple as `--target` takes it: `ARCH-VENDOR-OS[-ENV]`, so that a typo is
/// refused before anything builds, and the triple is safe in a file name.
pub fn check_target(t: &str) -> Result<String, String> {
    let parts: Vec<&str> = t.split('-').collect();
    let ok = (3..=4).contains(&parts.len())
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'.')
        });
    if ok {
        Ok(t.to_string())
    } else {
        Err(format!(
            "`{t}` is not a target triple (e.g. x86_64-unknown-linux-musl; `rustup target list` names them)"
        ))
    }
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}

/// Writes `LABEL.json` and one `LABEL.BIN.bloat.json` per binary into `dir`; returns their
/// paths.
pub fn write_reports(
    dir: &Path,
    label: &str,
    meta: &Meta,
    bins: &[BinSize],
) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut written = Vec::new();
    let mut write = |name: String, doc: &Value| -> Result<(), String> {
        let path = dir.join(name);
        let mut text = serde_json::to_string_pretty(doc).map_err(|e| e.to_string())?;
        text.push('\n');
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        written.push(path);
        Ok(())
    };
    write(
        format!("{label}.json"),
        &report_json(label, meta, bins, |b| bloat_file_name(label, b)),
    )?;
    for b in bins {
        write(bloat_file_name(label, &b.name), &bloat_json(b))?;
    }
    Ok(written)
}

pub fn bloat_file_name(label: &str, bin: &str) -> String {
    format!("{label}.{bin}.bloat.json")
}

/// cargo-bloat's crate-mode JSON, key for key (`print_crates_json` in cargo-bloat 0.12).
pub fn bloat_json(b: &BinSize) -> Value {
    json!({
        "file-size": b.file_size,
        "text-section-size": b.text_size,
        "crates": crates_json(&b.crates),
    })
}

fn crates_json(crates: &[(String, u64)]) -> Vec<Value> {
    crates
        .iter()
        .map(|(n, s)| json!({"name": n, "size": s}))
        .collect()
}

fn report_json(
    label: &str,
    meta: &Meta,
    bins: &[BinSize],
    bloat_file: impl Fn(&str) -> String,
) -> Value {
    json!({
        "format": FORMAT,
        "label": label,
        "commit": meta.commit,
        "dirty": meta.dirty,
        "toolchain": meta.toolchain,
        "target": meta.target,
        "profile": "release",
        "attribution": "cargo-bloat 0.12 crate mode (std crates folded into std)",
        "binaries": bins.iter().map(|b| json!({
            "name": b.name,
            "package": b.package,
            "bloat": bloat_file(&b.name),
            "file-size": b.file_size,
            "unstripped-file-size": b.unstripped_size,
            "text-section-size": b.text_size,
            "crates": crates_json(&b.crates),
        })).collect::<Vec<_>>(),
    })
}

/// `rev` measured ([`measure_commit`]) as one side of a comparison.
fn measure_rev(
    root: &Path,
    rev: &str,
    target_dir: &Path,
    meta: &Meta,
) -> Result<(String, Side), String> {
    let (commit, bins) = measure_commit(root, rev, target_dir, meta)?;
    Ok((
        rev.to_string(),
        Side {
            title: format!("`{rev}` ({})", short(&commit)),
            legacy: false,
            single: false,
            bins: bins.iter().map(BinSize::saved).collect(),
        },
    ))
}

/// Checks `rev` out in a temporary worktree, measures it, and removes the worktree; the
/// full commit and its binaries.
fn measure_commit(
    root: &Path,
    rev: &str,
    target_dir: &Path,
    meta: &Meta,
) -> Result<(String, Vec<BinSize>), String> {
    let commit = git(
        root,
        &["rev-parse", "--verify", &format!("{rev}^{{commit}}")],
    )?;
    util::step(&format!("measuring {rev} ({})", short(&commit)));
    let tmp = tempfile::Builder::new()
        .prefix("grove-size.")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let tree = tmp.path().join(short(&commit));
    let tree_str = tree.to_str().ok_or("non-UTF-8 temp dir")?;
    git(
        root,
        &["worktree", "add", "--quiet", "--detach", tree_str, &commit],
    )?;
    // Removes the worktree registration even when the build fails.
    struct Worktree<'a>(&'a Path, &'a str);
    impl Drop for Worktree<'_> {
        fn drop(&mut self) {
            let _ = git(self.0, &["worktree", "remove", "--force", self.1]);
        }
    }
    let _guard = Worktree(root, tree_str);
    // Persistent target directories: a second run reuses the dependencies' artifacts.
    let base = target_dir.join("size");
    let bins = measure(
        &tree,
        &base.join("baseline"),
        &base.join("baseline-symbols"),
        meta,
    )?;
    Ok((commit, bins))
}

/// Builds and measures the shipped binaries of the workspace at `root` for `meta`'s
/// target: the stripped builds into `shipped_dir`, the ones with symbols into
/// `symbols_dir`.
pub fn measure(
    root: &Path,
    shipped_dir: &Path,
    symbols_dir: &Path,
    meta: &Meta,
) -> Result<Vec<BinSize>, String> {
    let metadata = MetadataCommand::new()
        .manifest_path(root.join("Cargo.toml"))
        .no_deps()
        .exec()
        .map_err(|e| format!("cargo metadata in {}: {e}", root.display()))?;
    let bins: Vec<(&str, String)> = SHIPPED
        .iter()
        .filter_map(|b| {
            metadata
                .workspace_packages()
                .iter()
                .find(|p| p.targets.iter().any(|t| t.is_bin() && t.name == *b))
                .map(|p| (*b, p.name.to_string()))
        })
        .collect();
    if bins.is_empty() {
        return Err(format!("{} defines none of {SHIPPED:?}", root.display()));
    }
    let sysroot = sysroot_rlibs(meta.target())?;
    let target = meta.target_args();
    let mut out = Vec::new();
    for (bin, package) in bins {
        util::step(&format!("cargo build --release -p {package} --bin {bin}"));
        let shipped = build(root, shipped_dir, &package, bin, &target, &[])?;
        util::step(&format!(
            "the same with symbols, for the attribution ({bin})"
        ));
        let symbols = build(
            root,
            symbols_dir,
            &package,
            bin,
            &target,
            &[("CARGO_PROFILE_RELEASE_STRIP", "false")],
        )?;
        let file_size = file_len(&shipped.exe)?;
        let namer = Namer::new(&symbols, &sysroot);
        let analysed = analyse(&symbols.exe, &namer)?;
        out.push(BinSize {
            name: bin.to_string(),
            package,
            exe: shipped.exe,
            file_size,
            unstripped_size: file_len(&symbols.exe)?,
            text_size: analysed.text_size,
            crates: analysed.crates,
            functions: analysed.functions,
        });
    }
    Ok(out)
}

fn file_len(path: &Path) -> Result<u64, String> {
    Ok(std::fs::metadata(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .len())
}

struct Built {
    exe: PathBuf,
    /// The crate name of every artifact (cargo-bloat's `dep_crates`).
    crates: HashSet<String>,
    /// `(crate name, rlib)` of every library, in build order.
    rlibs: Vec<(String, PathBuf)>,
}

fn build(
    root: &Path,
    target_dir: &Path,
    package: &str,
    bin: &str,
    target: &[&str],
    env: &[(&str, &str)],
) -> Result<Built, String> {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args([
        "build",
        "--release",
        "--locked",
        "--message-format=json-render-diagnostics",
        "-p",
        package,
        "--bin",
        bin,
    ])
    .args(target)
    .current_dir(root)
    .env("CARGO_TARGET_DIR", target_dir)
    .stderr(Stdio::inherit());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().map_err(|e| format!("cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo build --release -p {package} --bin {bin} {} in {} failed",
            target.join(" "),
            root.display()
        ));
    }
    let mut exe = None;
    let mut crates = HashSet::new();
    let mut rlibs = Vec::new();
    for msg in Message::parse_stream(out.stdout.as_slice()) {
        let Ok(Message::CompilerArtifact(a)) = msg else {
            continue;
        };
        let name = a.target.name.replace('-', "_");
        if a.target.is_bin() && a.target.name == bin {
            exe = a.executable.map(|p| p.into_std_path_buf());
        }
        let kinds = a.target.crate_types.iter().map(|k| k.to_string());
        if kinds
            .clone()
            .any(|k| ["bin", "lib", "rlib", "dylib", "cdylib"].contains(&k.as_str()))
        {
            crates.insert(name.clone());
        }
        if kinds.clone().any(|k| k == "lib" || k == "rlib")
            && let Some(rlib) = a.filenames.iter().find(|f| f.extension() == Some("rlib"))
        {
            rlibs.push((name, rlib.clone().into_std_path_buf()));
        }
    }
    let exe = exe.ok_or_else(|| format!("cargo reported no executable for {bin}"))?;
    Ok(Built { exe, crates, rlibs })
}

/// The standard library's rlibs for `target` in the sysroot, `(crate name, path)` sorted
/// by name.
fn sysroot_rlibs(target: &str) -> Result<Vec<(String, PathBuf)>, String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| format!("{rustc}: {e}"))?;
    if !out.status.success() {
        return Err(format!("`{rustc} --print sysroot` failed"));
    }
    let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let dir = sysroot.join("lib/rustlib").join(target).join("lib");
    let entries = std::fs::read_dir(&dir).map_err(|e| {
        format!(
            "{}: {e} (is the target installed? `rustup target add {target}`)",
            dir.display()
        )
    })?;
    let mut libs = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().and_then(|e| e.to_str()) != Some("rlib") {
            continue;
        }
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let name = stem.split('-').next().unwrap_or(stem);
        if let Some(name) = name.strip_prefix("lib") {
            libs.push((name.to_string(), path));
        }
    }
    libs.sort();
    Ok(libs)
}

/// Names the crate of each symbol as cargo-bloat 0.12 does (`crate_name::from_sym`):
/// a symbol some rlib defines (by its archive index; the workspace's dependencies first,
/// then the standard library's) belongs to that rlib's crate; any other belongs to the first
/// crate in its demangled path (`<A as B>::f`: `A`'s, or `B`'s when `A` has no path; a v0
/// symbol: its first crate root); a symbol that is not Rust's is `[Unknown]`. Crates of the
/// standard library (the sysroot's rlibs that are not also dependencies) count as `std`.
pub(crate) struct Namer {
    /// A symbol's demangled name (with its hash) → the crate of the first rlib defining it.
    deps_symbols: HashMap<String, String>,
    std_crates: HashSet<String>,
    known: HashSet<String>,
}

impl Namer {
    fn new(build: &Built, sysroot: &[(String, PathBuf)]) -> Namer {
        use object::read::archive::ArchiveFile;
        let mut deps_symbols = HashMap::new();
        for (krate, path) in build.rlibs.iter().chain(sysroot) {
            let Ok(data) = std::fs::read(path) else {
                continue;
            };
            let Ok(archive) = ArchiveFile::parse(data.as_slice()) else {
                continue;
            };
            let Ok(Some(symbols)) = archive.symbols() else {
                continue;
            };
            for sym in symbols.flatten() {
                let Ok(name) = std::str::from_utf8(sym.name()) else {
                    continue;
                };
                deps_symbols
                    .entry(symbol_key(name))
                    .or_insert_with(|| krate.clone());
            }
        }
        let std_crates: HashSet<String> = sysroot
            .iter()
            .map(|(n, _)| n.clone())
            .filter(|n| !build.crates.contains(n))
            .collect();
        let known = build.crates.union(&std_crates).cloned().collect();
        Namer {
            deps_symbols,
            std_crates,
            known,
        }
    }

    fn crate_of(&self, raw: &str) -> String {
        let name = match self.deps_symbols.get(&symbol_key(raw)) {
            Some(c) => c.clone(),
            None => self.by_path(raw),
        };
        if self.std_crates.contains(&name) {
            "std".to_string()
        } else {
            name
        }
    }

    fn by_path(&self, raw: &str) -> String {
        let Ok(d) = rustc_demangle::try_demangle(raw) else {
            return UNKNOWN.to_string();
        };
        let bare = raw.trim_start_matches('_');
        if bare.starts_with("ZN") {
            return legacy_crate(&d.to_string());
        }
        if let Some(c) = v0_first_crate(bare) {
            return c;
        }
        // A v0 symbol whose first crate root is past what `v0_first_crate` reads: the first
        // segment of its demangled path, when that is a crate of the build.
        let c = crate_from_sym(&format!("{d:#}"));
        if self.known.contains(&c) {
            c
        } else {
            UNKNOWN.to_string()
        }
    }
}

/// The key cargo-bloat matches symbols by: the demangled name with its hash (so that
/// `.llvm.NNNN` suffixes do not matter), or the name itself when it is not Rust's.
fn symbol_key(raw: &str) -> String {
    match rustc_demangle::try_demangle(raw) {
        Ok(d) => d.to_string(),
        Err(_) => raw.to_string(),
    }
}

/// cargo-bloat's `parse_sym` for a demangled legacy symbol.
fn legacy_crate(sym: &str) -> String {
    match sym.split_once(" as ") {
        Some((a, rest)) => {
            let first = crate_from_sym(a);
            if first.is_empty() {
                crate_from_sym(rest.split(" as ").next().unwrap_or(rest))
            } else {
                first
            }
        }
        None => crate_from_sym(sym),
    }
}

/// cargo-bloat's `parse_crate_from_sym`: the first `::` segment, without leading `<` and
/// `&`, and its last word (`<&mut grove::X` is `grove`); empty when there is no `::`.
fn crate_from_sym(sym: &str) -> String {
    if !sym.contains("::") {
        return String::new();
    }
    let first = sym.split("::").next().unwrap_or(sym);
    if !first.starts_with('<') {
        return first.to_string();
    }
    first
        .trim_start_matches('<')
        .trim_start_matches('&')
        .split_whitespace()
        .last()
        .unwrap_or("")
        .to_string()
}

/// The first crate root of a v0 symbol (`_R…` without its underscores), in the order its
/// path is encoded: what cargo-bloat's demangler records as the symbol's crate. `None`
/// when a construct this reader skips comes first.
fn v0_first_crate(sym: &str) -> Option<String> {
    let s = sym.strip_prefix('R')?.as_bytes();
    let mut p = V0 { s, i: 0 };
    while p.peek().is_some_and(|b| b.is_ascii_digit()) {
        p.i += 1; // encoding version
    }
    p.path().ok().flatten()
}

/// A reader of the v0 mangling grammar (RFC 2603) that stops at the first crate root.
/// `Ok(None)`: read through without meeting one; `Err`: a construct it does not read.
struct V0<'a> {
    s: &'a [u8],
    i: usize,
}

type Found = Result<Option<String>, ()>;

macro_rules! found {
    ($e:expr) => {
        if let Some(c) = $e? {
            return Ok(Some(c));
        }
    };
}

impl V0<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn next(&mut self) -> Result<u8, ()> {
        let b = self.peek().ok_or(())?;
        self.i += 1;
        Ok(b)
    }

    fn eat(&mut self, b: u8) -> bool {
        let yes = self.peek() == Some(b);
        if yes {
            self.i += 1;
        }
        yes
    }

    fn base62(&mut self) -> Result<(), ()> {
        while self.next()? != b'_' {}
        Ok(())
    }

    fn disambiguator(&mut self) -> Result<(), ()> {
        if self.eat(b's') {
            self.base62()?;
        }
        Ok(())
    }

    fn ident(&mut self) -> Result<String, ()> {
        self.disambiguator()?;
        self.eat(b'u');
        let start = self.i;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.i += 1;
        }
        let len: usize = std::str::from_utf8(&self.s[start..self.i])
            .map_err(|_| ())?
            .parse()
            .map_err(|_| ())?;
        self.eat(b'_');
        let bytes = self.s.get(self.i..self.i + len).ok_or(())?;
        self.i += len;
        String::from_utf8(bytes.to_vec()).map_err(|_| ())
    }

    fn path(&mut self) -> Found {
        match self.next()? {
            b'C' => self.ident().map(Some),
            b'M' => {
                self.disambiguator()?;
                found!(self.path());
                self.ty()
            }
            b'X' => {
                self.disambiguator()?;
                found!(self.path());
                found!(self.ty());
                self.path()
            }
            b'Y' => {
                found!(self.ty());
                self.path()
            }
            b'N' => {
                self.next()?;
                found!(self.path());
                self.ident()?;
                Ok(None)
            }
            b'I' => {
                found!(self.path());
                while !self.eat(b'E') {
                    found!(self.generic_arg());
                }
                Ok(None)
            }
            // A back reference repeats something read before, which had no crate root.
            b'B' => self.base62().map(|()| None),
            _ => Err(()),
        }
    }

    fn generic_arg(&mut self) -> Found {
        match self.peek().ok_or(())? {
            b'L' => {
                self.i += 1;
                self.base62().map(|()| None)
            }
            b'K' => Err(()),
            _ => self.ty(),
        }
    }

    fn ty(&mut self) -> Found {
        match self.peek().ok_or(())? {
            b'a'..=b'z' => {
                self.i += 1;
                Ok(None)
            }
            b'C' | b'M' | b'X' | b'Y' | b'N' | b'I' | b'B' => self.path(),
            b'S' | b'P' | b'O' => {
                self.i += 1;
                self.ty()
            }
            b'R' | b'Q' => {
                self.i += 1;
                if self.eat(b'L') {
                    self.base62()?;
                }
                self.ty()
            }
            b'T' => {
                self.i += 1;
                while !self.eat(b'E') {
                    found!(self.ty());
                }
                Ok(None)
            }
            _ => Err(()),
        }
    }
}

struct Analysed {
    text_size: u64,
    crates: Vec<(String, u64)>,
    functions: Vec<(String, String, u64)>,
}

/// The text section's size and its bytes per crate and per function: cargo-bloat's
/// symbols (ELF: named `STT_FUNC` symbols of `.text` with a size; Mach-O: named symbols of
/// the first section, sized up to the next symbol), one per address.
fn analyse(exe: &Path, namer: &Namer) -> Result<Analysed, String> {
    use object::{Object, ObjectSection, ObjectSymbol, SymbolFlags};
    let data = std::fs::read(exe).map_err(|e| format!("{}: {e}", exe.display()))?;
    let file = object::File::parse(data.as_slice()).map_err(|e| {
        format!(
            "{}: {e} (ELF and Mach-O binaries are analysed)",
            exe.display()
        )
    })?;
    let text = file
        .section_by_name(".text")
        .ok_or_else(|| format!("{} has no text section", exe.display()))?;
    let mut syms: Vec<(u64, u64, &str)> = Vec::new();
    match file.format() {
        object::BinaryFormat::MachO => {
            let mut all: Vec<(u64, Option<object::SectionIndex>, &str)> = file
                .symbols()
                .filter(|s| s.address() != 0)
                .map(|s| (s.address(), s.section_index(), s.name().unwrap_or("")))
                .collect();
            all.sort_by_key(|s| s.0);
            let end = text.address() + text.size();
            for (i, (addr, section, name)) in all.iter().enumerate() {
                let next = all.get(i + 1).map_or(end, |s| s.0);
                if *section == Some(text.index()) && !name.is_empty() && next > *addr {
                    syms.push((*addr, next - addr, name));
                }
            }
        }
        _ => {
            for s in file.symbols() {
                let func = matches!(s.flags(), SymbolFlags::Elf { st_info, .. }
                    if st_info.st_type() == object::elf::STT_FUNC);
                let name = s.name().unwrap_or("");
                if func
                    && s.section_index() == Some(text.index())
                    && s.size() > 0
                    && !name.is_empty()
                {
                    syms.push((s.address(), s.size(), name));
                }
            }
        }
    }
    // Aliases share an address; count the bytes once, for the first.
    syms.sort_by_key(|s| s.0);
    syms.dedup_by_key(|s| s.0);
    let mut sizes: HashMap<String, u64> = HashMap::new();
    let mut functions = Vec::with_capacity(syms.len());
    for (_, size, name) in syms {
        let krate = namer.crate_of(name);
        *sizes.entry(krate.clone()).or_default() += size;
        let shown = match rustc_demangle::try_demangle(name) {
            Ok(d) => format!("{d:#}"),
            Err(_) => name.to_string(),
        };
        functions.push((krate, shown, size));
    }
    let mut crates: Vec<(String, u64)> = sizes.into_iter().collect();
    crates.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    functions.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.1.cmp(&b.1)));
    Ok(Analysed {
        text_size: text.size(),
        crates,
        functions,
    })
}

/// `size-reports/budget.toml`: `BIN_max_bytes = N` (`gw_max_bytes`, `gw_migrate_max_bytes`)
/// as binary name → bytes.
pub fn budgets(root: &Path) -> Result<BTreeMap<String, u64>, String> {
    let file = root.join("size-reports/budget.toml");
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut map = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let parsed = line.split_once('=').and_then(|(k, v)| {
            let bin = k.trim().strip_suffix("_max_bytes")?;
            let bytes = v.trim().replace('_', "").parse::<u64>().ok()?;
            Some((bin.replace('_', "-"), bytes))
        });
        let (bin, bytes) = parsed.ok_or_else(|| {
            format!(
                "{}:{}: expected `BIN_max_bytes = N` (e.g. gw_max_bytes = 5242880), found `{line}`",
                file.display(),
                n + 1
            )
        })?;
        map.insert(bin, bytes);
    }
    if !map.contains_key("gw") {
        return Err(format!("{}: no gw_max_bytes = N", file.display()));
    }
    Ok(map)
}

/// Fails when a binary is larger than its budget.
pub fn check_budget(budgets: &BTreeMap<String, u64>, bins: &[BinSize]) -> Result<(), String> {
    let over: Vec<String> = bins
        .iter()
        .filter_map(|b| {
            let max = *budgets.get(&b.name)?;
            (b.file_size > max).then(|| {
                format!(
                    "release {} is {} bytes ({}), over its budget of {} bytes ({}) in size-reports/budget.toml by {} bytes",
                    b.name,
                    thousands(b.file_size),
                    mib(b.file_size),
                    thousands(max),
                    mib(max),
                    thousands(b.file_size - max)
                )
            })
        })
        .collect();
    if over.is_empty() {
        Ok(())
    } else {
        Err(over.join("\n"))
    }
}

fn mib(b: u64) -> String {
    format!("{:.2} MiB", b as f64 / (1024.0 * 1024.0))
}

fn budget_line(budgets: &BTreeMap<String, u64>, bin: &str, size: u64) -> String {
    match budgets.get(bin) {
        Some(&max) if size > max => format!(
            "**Over budget**: {} bytes is {:.1}% of the {} bytes `size-reports/budget.toml` allows ({} bytes too many).\n",
            thousands(size),
            size as f64 * 100.0 / max as f64,
            thousands(max),
            thousands(size - max)
        ),
        Some(&max) => format!(
            "Within budget: {} bytes is {:.1}% of the {} bytes `size-reports/budget.toml` allows.\n",
            thousands(size),
            size as f64 * 100.0 / max as f64,
            thousands(max)
        ),
        None => String::new(),
    }
}

/// The Markdown after a measurement: per binary its sizes and its largest crates (or, with
/// `--filter`, that crate's largest functions), as cargo-bloat's tables show them.
fn measurement(
    bins: &[BinSize],
    opts: &Options,
    budgets: &BTreeMap<String, u64>,
) -> Result<String, String> {
    let n = opts.crates.unwrap_or(DEFAULT_CRATES);
    let mut s = String::from("# Release binary size\n");
    for b in bins {
        s += &format!(
            "\n## `{}`: {} bytes ({}), text section {} bytes\n",
            b.name,
            thousands(b.file_size),
            mib(b.file_size),
            thousands(b.text_size)
        );
        let budget = budget_line(budgets, &b.name, b.file_size);
        if !budget.is_empty() {
            s += &format!("\n{budget}");
        }
        let pct = |v: u64, of: u64| format!("{:.1}%", v as f64 * 100.0 / of.max(1) as f64);
        match &opts.filter {
            None => {
                s += "\n| crate | size | .text | file |\n|---|---:|---:|---:|\n";
                let shown = if n == 0 { b.crates.len() } else { n };
                for (c, size) in b.crates.iter().take(shown) {
                    s += &format!(
                        "| `{c}` | {} | {} | {} |\n",
                        thousands(*size),
                        pct(*size, b.text_size),
                        pct(*size, b.file_size)
                    );
                }
                let rest = &b.crates[shown.min(b.crates.len())..];
                if !rest.is_empty() {
                    let bytes: u64 = rest.iter().map(|c| c.1).sum();
                    s += &format!(
                        "| and {} more crates | {} | {} | {} |\n",
                        rest.len(),
                        thousands(bytes),
                        pct(bytes, b.text_size),
                        pct(bytes, b.file_size)
                    );
                }
            }
            Some(krate) => {
                let of: Vec<&(String, String, u64)> =
                    b.functions.iter().filter(|f| &f.0 == krate).collect();
                if of.is_empty() {
                    let names: Vec<&str> = b.crates.iter().map(|c| c.0.as_str()).collect();
                    return Err(format!(
                        "no function of `{krate}` in {}; its crates are: {}",
                        b.name,
                        names.join(", ")
                    ));
                }
                let total: u64 = of.iter().map(|f| f.2).sum();
                s += &format!(
                    "\n`{krate}`: {} bytes in {} functions ({} of .text).\n\n| function | size | .text |\n|---|---:|---:|\n",
                    thousands(total),
                    of.len(),
                    pct(total, b.text_size)
                );
                let shown = if n == 0 { of.len() } else { n };
                for (_, f, size) in of.iter().take(shown) {
                    s += &format!(
                        "| `{}` | {} | {} |\n",
                        f.replace('|', "\\|").replace('`', "'"),
                        thousands(*size),
                        pct(*size, b.text_size)
                    );
                }
                if of.len() > shown {
                    s += &format!("| and {} more functions | | |\n", of.len() - shown);
                }
            }
        }
    }
    Ok(s)
}

/// One binary as a saved report records it.
#[derive(Clone, Debug)]
struct Saved {
    /// `None` for a cargo-bloat file whose name says nothing of the binary.
    name: Option<String>,
    file_size: u64,
    text_size: u64,
    crates: Vec<(String, u64)>,
}

/// One side of a comparison.
#[derive(Debug)]
struct Side {
    title: String,
    /// Written before `format` 2: crates named by package, the standard library split.
    legacy: bool,
    /// Read from a cargo-bloat file: one binary.
    single: bool,
    bins: Vec<Saved>,
}

/// Reads a report: ours (`binaries[]`), or cargo-bloat's crate-mode JSON (ours or its own).
fn load(path: &Path) -> Result<Side, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
    let bad = |what: &str| {
        format!(
            "{}: {what}; expected a report of `cargo xtask size` or the output of `cargo bloat --crates --message-format json`",
            path.display()
        )
    };
    let one = |b: &Value| -> Result<Saved, String> {
        let num = |k: &str| b[k].as_u64().ok_or_else(|| bad(&format!("no `{k}`")));
        let crates = b["crates"]
            .as_array()
            .ok_or_else(|| bad("no `crates`"))?
            .iter()
            .map(|c| match (c["name"].as_str(), c["size"].as_u64()) {
                (Some(n), Some(s)) => Ok((n.to_string(), s)),
                _ => Err(bad("a crate without `name` and `size`")),
            })
            .collect::<Result<_, _>>()?;
        Ok(Saved {
            name: b["name"].as_str().map(str::to_string),
            file_size: num("file-size")?,
            text_size: num("text-section-size")?,
            crates,
        })
    };
    let title = format!(
        "`{}`",
        path.file_name()
            .unwrap_or(path.as_os_str())
            .to_string_lossy()
    );
    if let Some(bins) = v["binaries"].as_array() {
        return Ok(Side {
            title,
            legacy: v["format"].as_u64().is_none(),
            single: false,
            bins: bins.iter().map(one).collect::<Result<_, _>>()?,
        });
    }
    if v.get("functions").is_some() {
        return Err(bad(
            "this is cargo-bloat's function mode; run it with --crates",
        ));
    }
    let mut saved = one(&v)?;
    // `LABEL.BIN.bloat.json` names its binary.
    let file = path.file_name().and_then(|f| f.to_str()).unwrap_or("");
    saved.name = file
        .strip_suffix(".bloat.json")
        .and_then(|s| SHIPPED.iter().find(|b| s.ends_with(&format!(".{b}"))))
        .map(|b| b.to_string());
    Ok(Side {
        title,
        legacy: false,
        single: true,
        bins: vec![saved],
    })
}

/// The binaries to compare, paired by name. A side read from a cargo-bloat file holds one
/// binary: only that one is compared, with the other side's binary of the same name, or
/// its first (`gw`) when the file does not say which binary it describes.
fn pairs<'a>(
    before: &'a Side,
    after: &'a Side,
) -> Vec<(String, Option<&'a Saved>, Option<&'a Saved>)> {
    let find = |s: &'a Side, n: &str| s.bins.iter().find(|b| b.name.as_deref() == Some(n));
    let single = |s: &'a Side| if s.single { s.bins.first() } else { None };
    if let Some(one) = single(before).or(single(after)) {
        let other = if before.single { after } else { before };
        let mate = match &one.name {
            Some(n) => find(other, n),
            None => other.bins.first(),
        };
        let name = one
            .name
            .clone()
            .or_else(|| mate.and_then(|m| m.name.clone()))
            .unwrap_or_else(|| "binary".into());
        return vec![if before.single {
            (name, Some(one), mate)
        } else {
            (name, mate, Some(one))
        }];
    }
    let mut names: Vec<String> = after.bins.iter().filter_map(|b| b.name.clone()).collect();
    for b in &before.bins {
        if let Some(n) = &b.name
            && !names.contains(n)
        {
            names.push(n.clone());
        }
    }
    names
        .into_iter()
        .map(|n| {
            let (b, a) = (find(before, &n), find(after, &n));
            (n, b, a)
        })
        .collect()
}

/// A Markdown comparison: per binary, the totals, the budget, and the crates whose size
/// changed (largest change first).
fn comparison(
    before: &Side,
    after: &Side,
    opts: &Options,
    budgets: &BTreeMap<String, u64>,
    baseline: Option<&str>,
) -> String {
    let mut s = format!(
        "# Release binary size: {} → {}\n",
        before.title, after.title
    );
    if before.legacy != after.legacy {
        s += "\n> One of these reports was written before crates were attributed as cargo-bloat does \
              (it names packages and splits the standard library): compare the file and text sizes, \
              not the crate rows.\n";
    }
    for (name, b, a) in pairs(before, after) {
        s += &format!("\n## `{name}`\n\n");
        if let Some(a) = a {
            s += &budget_line(budgets, &name, a.file_size);
            if budgets.contains_key(&name) {
                s += "\n";
            }
        }
        s += "| | before | after | Δ bytes | Δ % |\n|---|---:|---:|---:|---:|\n";
        s += &row("file size", b.map(|x| x.file_size), a.map(|x| x.file_size));
        s += &row(
            "text section",
            b.map(|x| x.text_size),
            a.map(|x| x.text_size),
        );
        let crates = |m: Option<&Saved>| -> BTreeMap<String, u64> {
            m.map(|x| x.crates.iter().cloned().collect())
                .unwrap_or_default()
        };
        let (cb, ca) = (crates(b), crates(a));
        let all: BTreeSet<&String> = cb.keys().chain(ca.keys()).collect();
        let total = all.len();
        let mut changed: Vec<(&String, Option<u64>, Option<u64>)> = all
            .into_iter()
            .filter(|c| opts.filter.as_ref().is_none_or(|f| f == *c))
            .map(|c| (c, cb.get(c).copied(), ca.get(c).copied()))
            .filter(|(_, x, y)| x != y || opts.filter.is_some())
            .collect();
        let delta = |x: Option<u64>, y: Option<u64>| y.unwrap_or(0) as i64 - x.unwrap_or(0) as i64;
        changed.sort_by_key(|(c, x, y)| (-(delta(*x, *y).abs()), (*c).clone()));
        let n_changed = changed.len();
        match &opts.filter {
            Some(f) => s += &format!("\nText section of `{f}`:\n\n"),
            None => {
                s +=
                    "\nText section by crate (crates whose size changed, largest change first):\n\n"
            }
        }
        if n_changed > 0 {
            s += "| crate | before | after | Δ bytes | Δ % |\n|---|---:|---:|---:|---:|\n";
        } else if opts.filter.is_some() {
            s += "No such crate in either report.\n";
        } else {
            s += "No crate changed size.\n";
        }
        let shown = match opts.crates {
            Some(0) | None => n_changed,
            Some(n) => n.min(n_changed),
        };
        for (c, x, y) in &changed[..shown] {
            s += &row(&format!("`{c}`"), *x, *y);
        }
        if shown < n_changed {
            let rest = &changed[shown..];
            let x: u64 = rest.iter().map(|r| r.1.unwrap_or(0)).sum();
            let y: u64 = rest.iter().map(|r| r.2.unwrap_or(0)).sum();
            s += &row(
                &format!("{} more changed crates", rest.len()),
                Some(x),
                Some(y),
            );
        }
        if opts.filter.is_none() {
            s += &format!("\n{} other crates are unchanged.\n", total - n_changed);
        }
    }
    s += &match baseline {
        Some(rev) => format!("\nProduced by `cargo xtask size --baseline {rev}`.\n"),
        None => "\nProduced by `cargo xtask size --compare`.\n".to_string(),
    };
    s
}

fn row(what: &str, before: Option<u64>, after: Option<u64>) -> String {
    let cell = |v: Option<u64>| v.map(thousands).unwrap_or_else(|| "—".into());
    let d = after.unwrap_or(0) as i64 - before.unwrap_or(0) as i64;
    let pct = match before {
        Some(_) if d == 0 => "0.0%".into(),
        Some(b) if b > 0 => format!("{:+.1}%", d as f64 * 100.0 / b as f64),
        _ => "new".into(),
    };
    let sign = if d > 0 {
        "+"
    } else if d < 0 {
        "-"
    } else {
        ""
    };
    format!(
        "| {what} | {} | {} | {sign}{} | {pct} |\n",
        cell(before),
        cell(after),
        thousands(d.unsigned_abs())
    )
}

/// `rustc -vV` as key → value (`release`, `host`, `commit-hash`, `LLVM version`, …) plus
/// its first line under `rustc`.
fn toolchain() -> Result<BTreeMap<String, String>, String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(&rustc)
        .arg("-vV")
        .output()
        .map_err(|e| format!("{rustc}: {e}"))?;
    if !out.status.success() {
        return Err(format!("`{rustc} -vV` failed"));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut map = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if i == 0 {
            map.insert("rustc".to_string(), line.trim().to_string());
        } else if let Some((k, v)) = line.split_once(':') {
            map.insert(k.trim().to_string(), v.trim().to_string());
        }
    }
    Ok(map)
}

pub fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("git: {e}"))?;
    if !out.status.success() {
        return Err(format!("`git {}` failed", args.join(" ")));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Uncommitted changes that could affect the build (anything outside `size-reports/`).
fn is_dirty(root: &Path) -> Result<bool, String> {
    let status = git(root, &["status", "--porcelain"])?;
    Ok(status
        .lines()
        .any(|l| !l.get(3..).unwrap_or("").starts_with("size-reports/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn legacy_symbols_name_crates_as_cargo_bloat_does() {
        assert_eq!(legacy_crate("gix::open::h123"), "gix");
        assert_eq!(
            legacy_crate("<alloc::vec::Vec<u8> as core::ops::drop::Drop>::drop::h1"),
            "alloc"
        );
        assert_eq!(legacy_crate("<[u8] as core::fmt::Debug>::fmt::h1"), "core");
        assert_eq!(
            legacy_crate("<&mut grove::state::Workspace as core::fmt::Debug>::fmt::h1"),
            "grove"
        );
        assert_eq!(
            legacy_crate("core::ptr::drop_in_place<gix::Repository>::h1"),
            "core"
        );
        assert_eq!(legacy_crate("<T as core::fmt::Display>::fmt::h1"), "core");
        assert_eq!(legacy_crate("main"), "");
    }

    #[test]
    fn v0_symbols_name_their_first_crate_root() {
        // `<str>::trim_matches::<…>` instantiated in std: the impl lives in core.
        assert_eq!(
            v0_first_crate(
                "RINvMNtCsgEmfK2I1SDS_4core3stre12trim_matchesNvMNtNtB5_4char7methodsc13is_whitespaceECsjrHSEGnQ3l9_3std"
            )
            .as_deref(),
            Some("core")
        );
        assert_eq!(
            v0_first_crate("RNvNtCs1234_7gix_odb5store4open").as_deref(),
            Some("gix_odb")
        );
        // `<[u8] as core::fmt::Debug>::fmt`: the slice has no crate, the trait has.
        assert_eq!(
            v0_first_crate("RNvYShNtNtCs1_4core3fmt5Debug3fmt").as_deref(),
            Some("core")
        );
        assert_eq!(v0_first_crate("ZN4gix4open17h0123456789abcdefE"), None);
    }

    #[test]
    fn namer_prefers_the_rlib_that_defines_a_symbol_and_folds_std() {
        let n = Namer {
            deps_symbols: HashMap::from([
                (
                    symbol_key("_ZN4core3ptr13drop_in_place17h0123456789abcdefE"),
                    "gix".to_string(),
                ),
                ("sqlite3_open".to_string(), "libsqlite3_sys".to_string()),
            ]),
            std_crates: HashSet::from(["core".to_string(), "alloc".to_string()]),
            known: HashSet::from(["grove".to_string()]),
        };
        // Found in gix's rlib, though its path starts in core.
        assert_eq!(
            n.crate_of("_ZN4core3ptr13drop_in_place17h0123456789abcdefE"),
            "gix"
        );
        // The same, with an LLVM suffix.
        assert_eq!(
            n.crate_of("_ZN4core3ptr13drop_in_place17h0123456789abcdefE.llvm.12345"),
            "gix"
        );
        assert_eq!(n.crate_of("_ZN5grove3cli3run17h0123456789abcdefE"), "grove");
        assert_eq!(n.crate_of("_ZN5alloc3vec3new17h0123456789abcdefE"), "std");
        assert_eq!(n.crate_of("sqlite3_open"), "libsqlite3_sys");
        assert_eq!(n.crate_of("_start"), UNKNOWN);
    }

    #[test]
    fn arguments() {
        let o = parse(&args(&[
            "--baseline",
            "v0.1.0",
            "--crates",
            "5",
            "--filter",
            "gix",
        ]))
        .unwrap();
        assert_eq!(o.baseline.as_deref(), Some("v0.1.0"));
        assert_eq!(o.crates, Some(5));
        assert_eq!(o.filter.as_deref(), Some("gix"));
        let o = parse(&args(&["--rev", "1f8ea49", "--label", "before"])).unwrap();
        assert_eq!(o.rev.as_deref(), Some("1f8ea49"));
        let o = parse(&args(&["--compare", "a.json", "b.json"])).unwrap();
        assert_eq!(
            o.compare,
            Some((PathBuf::from("a.json"), PathBuf::from("b.json")))
        );
        for bad in [
            &["--crates", "x"][..],
            &["--compare", "a.json"],
            &["--compare", "a", "b", "--baseline", "main"],
            &["--compare", "a", "b", "--rev", "main"],
            &["--rev", "main"],
            &["--rev", "main", "--label", "x", "--baseline", "v1"],
            &["--label", "../x"],
            &["--frobnicate"],
            &["--filter", ""],
        ] {
            assert!(parse(&args(bad)).is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn budget_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("size-reports")).unwrap();
        let file = dir.path().join("size-reports/budget.toml");
        std::fs::write(
            &file,
            "# why\ngw_max_bytes = 5_242_880 # 5 MiB\ngw_migrate_max_bytes = 100\n",
        )
        .unwrap();
        let b = budgets(dir.path()).unwrap();
        assert_eq!(b["gw"], 5_242_880);
        assert_eq!(b["gw-migrate"], 100);
        let bin = |name: &str, file_size| BinSize {
            name: name.into(),
            package: name.into(),
            exe: PathBuf::new(),
            file_size,
            unstripped_size: file_size,
            text_size: 0,
            crates: vec![],
            functions: vec![],
        };
        assert!(check_budget(&b, &[bin("gw", 5_242_880)]).is_ok());
        let err = check_budget(&b, &[bin("gw", 10), bin("gw-migrate", 101)]).unwrap_err();
        assert!(err.contains("gw-migrate is 101 bytes"), "{err}");
        std::fs::write(&file, "gw_max = 5\n").unwrap();
        let err = budgets(dir.path()).unwrap_err();
        assert!(err.contains("budget.toml:1"), "{err}");
    }

    fn saved(name: Option<&str>, file: u64, crates: &[(&str, u64)]) -> Saved {
        Saved {
            name: name.map(str::to_string),
            file_size: file,
            text_size: crates.iter().map(|c| c.1).sum(),
            crates: crates.iter().map(|(n, s)| (n.to_string(), *s)).collect(),
        }
    }

    #[test]
    fn comparison_tables() {
        let before = Side {
            title: "a".into(),
            legacy: false,
            single: false,
            bins: vec![saved(
                Some("gw"),
                1000,
                &[("std", 500), ("gix", 300), ("x", 10)],
            )],
        };
        let after = Side {
            title: "b".into(),
            legacy: false,
            single: false,
            bins: vec![saved(
                Some("gw"),
                1200,
                &[("std", 500), ("gix", 450), ("y", 40)],
            )],
        };
        let budgets = BTreeMap::from([("gw".to_string(), 1100)]);
        let all = comparison(&before, &after, &Options::default(), &budgets, None);
        assert!(
            all.contains("| `gix` | 300 | 450 | +150 | +50.0% |"),
            "{all}"
        );
        assert!(all.contains("| `y` | — | 40 | +40 | new |"), "{all}");
        assert!(all.contains("| `x` | 10 | — | -10 | -100.0% |"), "{all}");
        assert!(all.contains("1 other crates are unchanged."), "{all}");
        assert!(all.contains("**Over budget**"), "{all}");
        let top = Options {
            crates: Some(1),
            ..Options::default()
        };
        let one = comparison(&before, &after, &top, &budgets, None);
        assert!(one.contains("`gix`"), "{one}");
        assert!(!one.contains("`y`"), "{one}");
        assert!(
            one.contains("| 2 more changed crates | 10 | 40 | +30 | +300.0% |"),
            "{one}"
        );
        let filtered = Options {
            filter: Some("std".into()),
            ..Options::default()
        };
        let f = comparison(&before, &after, &filtered, &budgets, None);
        assert!(f.contains("| `std` | 500 | 500 | 0 | 0.0% |"), "{f}");
        assert!(!f.contains("`gix`"), "{f}");
    }

    #[test]
    fn compare_reads_our_reports_and_cargo_bloats() {
        let dir = tempfile::tempdir().unwrap();
        let ours = dir.path().join("v1.json");
        let meta = Meta {
            commit: "0123456789abcdef".into(),
            dirty: false,
            toolchain: BTreeMap::from([("host".to_string(), "x86_64-unknown-linux-gnu".into())]),
            target: "x86_64-unknown-linux-musl".into(),
            cross: true,
        };
        let bin = BinSize {
            name: "gw".into(),
            package: "gw".into(),
            exe: PathBuf::new(),
            file_size: 1000,
            unstripped_size: 1500,
            text_size: 800,
            crates: vec![("std".into(), 500), ("grove".into(), 300)],
            functions: vec![],
        };
        let migrate = BinSize {
            name: "gw-migrate".into(),
            package: "migrate".into(),
            crates: vec![("std".into(), 100)],
            ..bin.clone()
        };
        let written = write_reports(dir.path(), "v1", &meta, &[bin, migrate]).unwrap();
        assert_eq!(
            written,
            [
                ours.clone(),
                dir.path().join("v1.gw.bloat.json"),
                dir.path().join("v1.gw-migrate.bloat.json")
            ]
        );
        // cargo-bloat's own output, as it prints it.
        let theirs = dir.path().join("main.json");
        std::fs::write(
            &theirs,
            r#"{"file-size":1600,"text-section-size":900,"crates":[{"name":"std","size":500},{"name":"grove","size":400}]}"#,
        )
        .unwrap();
        let a = load(&ours).unwrap();
        assert!(!a.legacy);
        let b = load(&theirs).unwrap();
        assert_eq!(b.bins[0].name, None);
        let t = comparison(&a, &b, &Options::default(), &BTreeMap::new(), None);
        assert!(t.contains("## `gw`"), "{t}");
        assert!(t.contains("| `grove` | 300 | 400 | +100 | +33.3% |"), "{t}");
        assert!(!t.contains("gw-migrate"), "{t}");
        // Our bloat file names its binary, and is compared with that one only.
        let c = load(&dir.path().join("v1.gw-migrate.bloat.json")).unwrap();
        assert_eq!(c.bins[0].name.as_deref(), Some("gw-migrate"));
        let t = comparison(&a, &c, &Options::default(), &BTreeMap::new(), None);
        assert!(t.contains("## `gw-migrate`"), "{t}");
        assert!(!t.contains("## `gw`"), "{t}");
        assert!(t.contains("No crate changed size."), "{t}");
        // The recorded reports of format 1 still load, marked as such.
        let legacy = load(&util::project_root().join("size-reports/panic-abort.json")).unwrap();
        assert!(legacy.legacy);
        let t = comparison(&legacy, &a, &Options::default(), &BTreeMap::new(), None);
        assert!(t.contains("compare the file and text sizes"), "{t}");
        let functions = dir.path().join("f.json");
        std::fs::write(
            &functions,
            r#"{"file-size":1,"text-section-size":1,"functions":[]}"#,
        )
        .unwrap();
        assert!(load(&functions).unwrap_err().contains("--crates"));
    }

    #[test]
    fn markdown_rows() {
        assert_eq!(thousands(13030674), "13,030,674");
        assert_eq!(thousands(0), "0");
        assert_eq!(
            row("x", Some(1000), Some(700)),
            "| x | 1,000 | 700 | -300 | -30.0% |\n"
        );
        assert_eq!(row("y", None, Some(5)), "| y | — | 5 | +5 | new |\n");
    }
}

/// Tests on the real release binaries: each builds them (once per target directory, then
/// cargo finds them fresh), so they are `#[ignore]`d in `cargo test` and run by
/// `cargo xtask ci`.
#[cfg(test)]
pub(crate) mod release_tests {
    use super::*;
    use serde::Deserialize;

    /// cargo-bloat's crate-mode JSON, field for field, and nothing else.
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct CargoBloatCrates {
        #[serde(rename = "file-size")]
        file_size: u64,
        #[serde(rename = "text-section-size")]
        text_section_size: u64,
        crates: Vec<CargoBloatCrate>,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct CargoBloatCrate {
        name: String,
        size: u64,
    }

    fn read_bloat(path: &Path) -> CargoBloatCrates {
        let text = std::fs::read_to_string(path).unwrap();
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{} is not cargo-bloat's crate JSON: {e}", path.display()))
    }

    /// `cargo xtask size --label t --out DIR`, for real.
    fn size_reports() -> tempfile::TempDir {
        let out = tempfile::tempdir().unwrap();
        run(&[
            "--label".into(),
            "t".into(),
            "--out".into(),
            out.path().to_str().unwrap().into(),
        ])
        .unwrap();
        out
    }

    #[test]
    #[ignore = "builds the release binaries; run by `cargo xtask ci`"]
    fn size_output_for_gw_is_cargo_bloat_json() {
        let out = size_reports();
        let bloat = read_bloat(&out.path().join("t.gw.bloat.json"));
        let report: Value =
            serde_json::from_str(&std::fs::read_to_string(out.path().join("t.json")).unwrap())
                .unwrap();
        let gw = &report["binaries"][0];
        assert_eq!(gw["name"], "gw");
        assert_eq!(gw["bloat"], "t.gw.bloat.json");
        assert_eq!(bloat.file_size, gw["file-size"].as_u64().unwrap());
        assert_eq!(
            bloat.text_section_size,
            gw["text-section-size"].as_u64().unwrap()
        );
        assert!(bloat.file_size > bloat.text_section_size);
        let attributed: u64 = bloat.crates.iter().map(|c| c.size).sum();
        assert!(
            attributed <= bloat.text_section_size && attributed > bloat.text_section_size / 2,
            "{attributed} of {} bytes attributed",
            bloat.text_section_size
        );
        for c in ["grove", "gw", "std", "gix"] {
            assert!(
                bloat.crates.iter().any(|k| k.name == c),
                "no crate `{c}` in {:?}",
                bloat.crates.iter().map(|k| &k.name).collect::<Vec<_>>()
            );
        }
        assert_eq!(report["format"], FORMAT);
        assert_eq!(report["profile"], "release");
        assert!(report["toolchain"]["rustc"].is_string());
        assert!(report["commit"].as_str().unwrap().len() >= 40);
        read_bloat(&out.path().join("t.gw-migrate.bloat.json"));
    }

    /// Our attribution against `cargo bloat --crates` on the same binary: every crate above
    /// 10 KiB within 1%. ELF only: that is where the attribution was checked.
    #[cfg(target_os = "linux")]
    #[test]
    #[ignore = "builds the release binaries; run by `cargo xtask ci`"]
    fn crate_attribution_matches_cargo_bloat() {
        let root = util::project_root();
        let have = Command::new("cargo")
            .args(["bloat", "--version"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !have {
            e2e::skip(
                "cargo-bloat is not installed (.ci/run installs it: cargo install --locked cargo-bloat)",
            );
            return;
        }
        let target = util::target_dir(&root).unwrap();
        let symbols = target.join("size").join("symbols");
        let meta = Meta::of(&root, None).unwrap();
        let ours = measure(&root, &target, &symbols, &meta).unwrap();
        for b in &ours {
            let out = Command::new("cargo")
                .args([
                    "bloat",
                    "--release",
                    "--locked",
                    "-p",
                    &b.package,
                    "--bin",
                    &b.name,
                ])
                .args([
                    "--crates",
                    "-n",
                    "0",
                    "--message-format",
                    "json",
                    "--target-dir",
                ])
                .arg(&symbols)
                .current_dir(&root)
                .stderr(Stdio::inherit())
                .output()
                .unwrap();
            assert!(out.status.success(), "cargo bloat failed for {}", b.name);
            let theirs: CargoBloatCrates = serde_json::from_slice(&out.stdout).unwrap();
            // The same binary: cargo-bloat's build is the one we analysed.
            assert_eq!(theirs.file_size, b.unstripped_size, "{}", b.name);
            assert_eq!(theirs.text_section_size, b.text_size, "{}", b.name);
            let theirs: BTreeMap<&str, u64> = theirs
                .crates
                .iter()
                .map(|c| (c.name.as_str(), c.size))
                .collect();
            let ours: BTreeMap<&str, u64> =
                b.crates.iter().map(|(n, s)| (n.as_str(), *s)).collect();
            let names: BTreeSet<&str> = theirs.keys().chain(ours.keys()).copied().collect();
            let mut table = String::new();
            let mut off = Vec::new();
            for n in names {
                let (t, o) = (
                    theirs.get(n).copied().unwrap_or(0),
                    ours.get(n).copied().unwrap_or(0),
                );
                if t.max(o) <= 10 * 1024 {
                    continue;
                }
                let diff = t.abs_diff(o);
                table += &format!("{n:>24} cargo-bloat {t:>9} ours {o:>9} diff {diff}\n");
                if diff as f64 > t as f64 * 0.01 {
                    off.push(n);
                }
            }
            eprintln!("{}:\n{table}", b.name);
            assert!(
                off.is_empty(),
                "{}: more than 1% off cargo-bloat for {off:?}\n{table}",
                b.name
            );
        }
    }
}
