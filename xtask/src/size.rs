//! `cargo xtask size`: how big the release binaries are, and which crates the bytes come from.
//!
//! Each measurement builds the shipped binaries (`gw`, and `gw-migrate` where the revision
//! has it) twice with the release profile: once exactly as shipped (stripped), for the file
//! size, and once with `CARGO_PROFILE_RELEASE_STRIP=false` into a separate target directory,
//! whose symbol table attributes the text section to crates the way cargo-bloat does (the
//! demangled path's first segment; for C code, the crate whose rlib defines the symbol).
//! Both builds are the same code: stripping only drops the symbol table.
//!
//! - `cargo xtask size [--label L]` measures the working tree and writes
//!   `size-reports/<L>.json` (cargo-bloat's shape per binary: `file-size`,
//!   `text-section-size`, `crates: [{name, size}]`, plus commit, toolchain, target, profile).
//! - `--baseline REV` also measures REV, checked out in a temporary git worktree with its own
//!   target directory, and prints a Markdown before/after table by crate on stdout.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cargo_metadata::{Message, MetadataCommand};
use serde_json::{Value, json};

use crate::util;

/// The binaries a release ships; a revision is measured for those it defines.
const SHIPPED: &[&str] = &["gw", "gw-migrate"];
const UNKNOWN: &str = "[Unknown]";

pub const USAGE: &str = "usage: cargo xtask size [--label LABEL] [--baseline REV]

  --label LABEL   write the working tree's report to size-reports/LABEL.json
                  (default without --baseline: the short commit hash)
  --baseline REV  also build REV in a temporary git worktree and print a Markdown
                  before/after table by crate on stdout";

struct Options {
    label: Option<String>,
    baseline: Option<String>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut opts = Options {
        label: None,
        baseline: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value\n\n{USAGE}"))
        };
        match a.as_str() {
            "--label" => opts.label = Some(value("--label")?),
            "--baseline" => opts.baseline = Some(value("--baseline")?),
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument `{other}`\n\n{USAGE}")),
        }
    }
    if let Some(l) = &opts.label
        && (l.is_empty() || l.contains(['/', '\\']) || l.starts_with('.'))
    {
        return Err(format!("invalid label `{l}`: use a plain file name"));
    }
    Ok(opts)
}

pub fn run(args: &[String]) -> Result<(), String> {
    let opts = parse(args)?;
    let root = util::project_root();
    let target_dir = target_dir(&root)?;
    let toolchain = toolchain()?;

    // The working tree first: it is what was asked for, and editing it while the slower
    // baseline builds must not change what is recorded.
    util::step("measuring the working tree");
    let commit = git(&root, &["rev-parse", "HEAD"])?;
    let dirty = is_dirty(&root)?;
    let after = measure(&root, &target_dir, &target_dir.join("size").join("symbols"))?;
    let before = match &opts.baseline {
        Some(rev) => Some(measure_rev(&root, rev, &target_dir)?),
        None => None,
    };
    let label = opts.label.clone().or_else(|| {
        opts.baseline.is_none().then(|| {
            let short = &commit[..commit.len().min(10)];
            if dirty {
                format!("{short}-dirty")
            } else {
                short.to_string()
            }
        })
    });
    let doc = report_json(label.as_deref(), &commit, dirty, &toolchain, &after);
    if let Some(label) = &label {
        let dir = root.join("size-reports");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let path = dir.join(format!("{label}.json"));
        let mut text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
        text.push('\n');
        #[allow(clippy::disallowed_methods)]
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    for b in &after {
        eprintln!(
            "{}: {} bytes (text section {} bytes, {} crates)",
            b.name,
            b.file_size,
            b.text_size,
            b.crates.len()
        );
    }
    if let Some((rev, before)) = before {
        let after = Measured {
            rev: short(&commit).to_string() + if dirty { "-dirty" } else { "" },
            bins: after,
        };
        print!("{}", markdown(&rev, &before, &after));
    }
    Ok(())
}

/// One measured binary.
struct BinSize {
    name: String,
    file_size: u64,
    text_size: u64,
    /// Crate (package) name → bytes of text attributed to it, largest first.
    crates: Vec<(String, u64)>,
}

struct Measured {
    rev: String,
    bins: Vec<BinSize>,
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}

/// Checks `rev` out in a temporary worktree, measures it, and removes the worktree.
fn measure_rev(root: &Path, rev: &str, target_dir: &Path) -> Result<(String, Measured), String> {
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
    )?;
    Ok((
        rev.to_string(),
        Measured {
            rev: short(&commit).to_string(),
            bins,
        },
    ))
}

/// Builds and measures the shipped binaries of the workspace at `root`.
fn measure(root: &Path, stripped_dir: &Path, symbols_dir: &Path) -> Result<Vec<BinSize>, String> {
    let metadata = MetadataCommand::new()
        .manifest_path(root.join("Cargo.toml"))
        .no_deps()
        .exec()
        .map_err(|e| format!("cargo metadata in {}: {e}", root.display()))?;
    let bins: Vec<&str> = SHIPPED
        .iter()
        .copied()
        .filter(|b| {
            metadata
                .workspace_packages()
                .iter()
                .any(|p| p.targets.iter().any(|t| t.is_bin() && t.name == *b))
        })
        .collect();
    if bins.is_empty() {
        return Err(format!("{} defines none of {SHIPPED:?}", root.display()));
    }
    util::step(&format!("cargo build --release ({})", bins.join(", ")));
    let stripped = build(root, stripped_dir, &bins, &[])?;
    util::step("cargo build --release with symbols");
    let symbols = build(
        root,
        symbols_dir,
        &bins,
        &[
            ("CARGO_PROFILE_RELEASE_STRIP", "false"),
            ("CARGO_PROFILE_RELEASE_DEBUG", "false"),
        ],
    )?;
    let native = native_symbols(&symbols.rlibs);
    let mut out = Vec::new();
    for b in bins {
        let shipped = stripped
            .exes
            .get(b)
            .ok_or_else(|| format!("cargo reported no executable for {b}"))?;
        let file_size = std::fs::metadata(shipped)
            .map_err(|e| format!("{}: {e}", shipped.display()))?
            .len();
        let with_symbols = symbols
            .exes
            .get(b)
            .ok_or_else(|| format!("cargo reported no executable for {b}"))?;
        let (text_size, crates) = analyse(with_symbols, &symbols.lib_packages, &native)?;
        out.push(BinSize {
            name: b.to_string(),
            file_size,
            text_size,
            crates,
        });
    }
    Ok(out)
}

struct Built {
    exes: HashMap<String, PathBuf>,
    /// `(package name, rlib path)` of every library in the build.
    rlibs: Vec<(String, PathBuf)>,
    /// Crate name as it appears in symbols (libraries and binaries) → package name.
    lib_packages: HashMap<String, String>,
}

fn build(
    root: &Path,
    target_dir: &Path,
    bins: &[&str],
    env: &[(&str, &str)],
) -> Result<Built, String> {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args([
        "build",
        "--release",
        "--locked",
        "--message-format=json-render-diagnostics",
    ]);
    for b in bins {
        cmd.args(["--bin", b]);
    }
    cmd.current_dir(root)
        .env("CARGO_TARGET_DIR", target_dir)
        .stderr(Stdio::inherit());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().map_err(|e| format!("cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo build --release in {} failed",
            root.display()
        ));
    }
    let mut built = Built {
        exes: HashMap::new(),
        rlibs: Vec::new(),
        lib_packages: HashMap::new(),
    };
    for msg in Message::parse_stream(out.stdout.as_slice()) {
        let Ok(Message::CompilerArtifact(a)) = msg else {
            continue;
        };
        let package = package_name(&a.package_id.repr, &a.target.name);
        if let Some(exe) = a.executable {
            // A binary's own code is mangled under its crate name (`gw_migrate`).
            built
                .lib_packages
                .insert(a.target.name.replace('-', "_"), package.clone());
            built
                .exes
                .insert(a.target.name.clone(), exe.into_std_path_buf());
            continue;
        }
        if a.target.is_lib() || a.target.is_proc_macro() {
            built
                .lib_packages
                .insert(a.target.name.replace('-', "_"), package.clone());
        }
        for f in a.filenames {
            if f.extension() == Some("rlib") {
                built.rlibs.push((package.clone(), f.into_std_path_buf()));
            }
        }
    }
    Ok(built)
}

/// The package name in a package id: `registry+…#name@1.0`, `path+file://…/gw#0.1.0`
/// (the directory name), or the old `name 1.0 (source)` form.
fn package_name(id: &str, target: &str) -> String {
    if let Some((url, frag)) = id.rsplit_once('#') {
        return match frag.split_once('@') {
            Some((name, _)) => name.to_string(),
            None => url
                .rsplit('/')
                .next()
                .filter(|s| !s.is_empty())
                .unwrap_or(target)
                .to_string(),
        };
    }
    id.split_whitespace().next().unwrap_or(target).to_string()
}

/// Non-Rust symbols (C code compiled by build scripts and bundled into rlibs, such as
/// SQLite's) defined by each library, so they count for the crate that brought them in.
fn native_symbols(rlibs: &[(String, PathBuf)]) -> HashMap<String, String> {
    use object::read::archive::ArchiveFile;
    use object::{Object, ObjectSymbol};
    let mut map = HashMap::new();
    for (package, path) in rlibs {
        let Ok(data) = std::fs::read(path) else {
            continue;
        };
        let Ok(archive) = ArchiveFile::parse(data.as_slice()) else {
            continue;
        };
        for member in archive.members().flatten() {
            let Ok(bytes) = member.data(data.as_slice()) else {
                continue;
            };
            // Rust objects in an LTO build are bitcode and do not parse; that is fine,
            // their symbols are attributed by their mangled paths.
            let Ok(obj) = object::File::parse(bytes) else {
                continue;
            };
            for sym in obj.symbols() {
                if !sym.is_definition() {
                    continue;
                }
                let Ok(name) = sym.name() else { continue };
                if name.is_empty() || rustc_demangle::try_demangle(name).is_ok() {
                    continue;
                }
                map.entry(name.to_string())
                    .or_insert_with(|| package.clone());
            }
        }
    }
    map
}

/// The text section's size and its bytes per crate.
fn analyse(
    exe: &Path,
    lib_packages: &HashMap<String, String>,
    native: &HashMap<String, String>,
) -> Result<(u64, Vec<(String, u64)>), String> {
    use object::{Object, ObjectSection, ObjectSymbol};
    let data = std::fs::read(exe).map_err(|e| format!("{}: {e}", exe.display()))?;
    let file = object::File::parse(data.as_slice())
        .map_err(|e| format!("{}: {e} (only ELF binaries are analysed)", exe.display()))?;
    let text = file
        .section_by_name(".text")
        .ok_or_else(|| format!("{} has no .text section", exe.display()))?;
    let mut sizes: HashMap<String, u64> = HashMap::new();
    let mut seen = HashSet::new();
    for sym in file.symbols() {
        if sym.section_index() != Some(text.index()) || sym.size() == 0 {
            continue;
        }
        // Aliases share an address; count the bytes once.
        if !seen.insert(sym.address()) {
            continue;
        }
        let name = sym.name().unwrap_or("");
        let krate = crate_of(name, lib_packages, native);
        *sizes.entry(krate).or_default() += sym.size();
    }
    let mut crates: Vec<(String, u64)> = sizes.into_iter().collect();
    crates.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok((text.size(), crates))
}

/// The package a symbol belongs to: by its demangled Rust path, else by the rlib that
/// defines it, else `[Unknown]` (libc start-up code, compiler builtins).
fn crate_of(
    raw: &str,
    lib_packages: &HashMap<String, String>,
    native: &HashMap<String, String>,
) -> String {
    if let Ok(d) = rustc_demangle::try_demangle(raw) {
        let demangled = format!("{d:#}");
        return match crate_in_path(&demangled) {
            Some(c) => lib_packages
                .get(c)
                .cloned()
                .unwrap_or_else(|| c.to_string()),
            None => UNKNOWN.to_string(),
        };
    }
    native
        .get(raw)
        .cloned()
        .unwrap_or_else(|| UNKNOWN.to_string())
}

/// The crate a demangled symbol belongs to, as cargo-bloat decides it: the first segment
/// of its path; for `<A as B>::f`, the crate of the type `A`, or of the trait `B` when `A`
/// has no path (`<[u8] as core::fmt::Debug>::fmt` is `core`'s).
fn crate_in_path(sym: &str) -> Option<&str> {
    let Some(inner) = sym.strip_prefix('<') else {
        return first_segment(sym);
    };
    let mut depth = 0usize;
    let bytes = inner.as_bytes();
    let mut split = None;
    let mut end = inner.len();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'<' => depth += 1,
            b'>' if depth == 0 => {
                end = i;
                break;
            }
            b'>' => depth -= 1,
            b' ' if depth == 0 && split.is_none() && inner[i..].starts_with(" as ") => {
                split = Some(i)
            }
            _ => {}
        }
    }
    match split {
        Some(i) => first_segment(&inner[..i]).or_else(|| first_segment(&inner[i + 4..end])),
        None => first_segment(&inner[..end]),
    }
}

fn first_segment(path: &str) -> Option<&str> {
    let mut p = path.trim_start();
    loop {
        let before = p;
        p = p.trim_start_matches(['&', '*', '[', '(', '<']);
        for prefix in ["mut ", "const ", "dyn ", "unsafe ", "extern \"C\" "] {
            p = p.strip_prefix(prefix).unwrap_or(p);
        }
        if p == before {
            break;
        }
    }
    let (head, _) = p.split_once("::")?;
    let valid = !head.is_empty() && head.chars().all(|c| c.is_alphanumeric() || c == '_');
    valid.then_some(head)
}

fn report_json(
    label: Option<&str>,
    commit: &str,
    dirty: bool,
    toolchain: &BTreeMap<String, String>,
    bins: &[BinSize],
) -> Value {
    json!({
        "label": label,
        "commit": commit,
        "dirty": dirty,
        "toolchain": toolchain,
        "target": toolchain.get("host"),
        "profile": "release",
        "binaries": bins.iter().map(|b| json!({
            "name": b.name,
            "file-size": b.file_size,
            "text-section-size": b.text_size,
            "crates": b.crates.iter().map(|(n, s)| json!({"name": n, "size": s})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// A Markdown comparison: per binary, the totals and every crate whose size changed.
fn markdown(rev: &str, before: &Measured, after: &Measured) -> String {
    let mut s = format!(
        "# Release binary size: `{rev}` ({}) → working tree ({})\n",
        before.rev, after.rev
    );
    let mut names: Vec<&str> = after.bins.iter().map(|b| b.name.as_str()).collect();
    for b in &before.bins {
        if !names.contains(&b.name.as_str()) {
            names.push(&b.name);
        }
    }
    for name in names {
        let b = before.bins.iter().find(|x| x.name == name);
        let a = after.bins.iter().find(|x| x.name == name);
        s += &format!("\n## `{name}`\n\n");
        s += "| | before | after | Δ bytes | Δ % |\n|---|---:|---:|---:|---:|\n";
        s += &row("file size", b.map(|x| x.file_size), a.map(|x| x.file_size));
        s += &row(
            "text section",
            b.map(|x| x.text_size),
            a.map(|x| x.text_size),
        );
        let crates = |m: Option<&BinSize>| -> BTreeMap<String, u64> {
            m.map(|x| x.crates.iter().cloned().collect())
                .unwrap_or_default()
        };
        let (cb, ca) = (crates(b), crates(a));
        let mut all: Vec<&String> = cb.keys().chain(ca.keys()).collect();
        all.sort();
        all.dedup();
        let mut changed: Vec<(&String, Option<u64>, Option<u64>)> = all
            .into_iter()
            .map(|c| (c, cb.get(c).copied(), ca.get(c).copied()))
            .filter(|(_, x, y)| x != y)
            .collect();
        let delta = |x: Option<u64>, y: Option<u64>| y.unwrap_or(0) as i64 - x.unwrap_or(0) as i64;
        changed.sort_by_key(|(c, x, y)| (-(delta(*x, *y).abs()), (*c).clone()));
        let union = cb.keys().chain(ca.keys()).collect::<HashSet<_>>().len();
        let unchanged = union - changed.len();
        s += "\nText section by crate (crates whose size changed, largest change first):\n\n";
        s += "| crate | before | after | Δ bytes | Δ % |\n|---|---:|---:|---:|---:|\n";
        for (c, x, y) in &changed {
            s += &row(&format!("`{c}`"), *x, *y);
        }
        s += &format!("\n{unchanged} other crates are unchanged.\n");
    }
    s += &format!("\nProduced by `cargo xtask size --baseline {rev}`.\n");
    s
}

fn row(what: &str, before: Option<u64>, after: Option<u64>) -> String {
    let cell = |v: Option<u64>| v.map(thousands).unwrap_or_else(|| "—".into());
    let d = after.unwrap_or(0) as i64 - before.unwrap_or(0) as i64;
    let pct = match before {
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

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn target_dir(root: &Path) -> Result<PathBuf, String> {
    let md = MetadataCommand::new()
        .manifest_path(root.join("Cargo.toml"))
        .no_deps()
        .exec()
        .map_err(|e| e.to_string())?;
    Ok(md.target_directory.into_std_path_buf())
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

fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
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

    #[test]
    fn crate_of_demangled_paths() {
        assert_eq!(crate_in_path("gix::open::h123"), Some("gix"));
        assert_eq!(
            crate_in_path("<alloc::vec::Vec<u8> as core::ops::drop::Drop>::drop"),
            Some("alloc")
        );
        assert_eq!(
            crate_in_path("<[u8] as core::fmt::Debug>::fmt"),
            Some("core")
        );
        assert_eq!(
            crate_in_path("<&grove::state::Workspace as core::fmt::Debug>::fmt"),
            Some("grove")
        );
        assert_eq!(
            crate_in_path("core::ptr::drop_in_place<gix::Repository>"),
            Some("core")
        );
        assert_eq!(crate_in_path("<grove::Foo>::bar"), Some("grove"));
        assert_eq!(crate_in_path("main"), None);
    }

    #[test]
    fn symbols_map_to_packages() {
        let libs = HashMap::from([("grove".to_string(), "gw".to_string())]);
        let native = HashMap::from([("sqlite3_open".to_string(), "libsqlite3-sys".to_string())]);
        // `grove::cli::run` in the legacy mangling.
        assert_eq!(
            crate_of("_ZN5grove3cli3run17h0123456789abcdefE", &libs, &native),
            "gw"
        );
        assert_eq!(crate_of("sqlite3_open", &libs, &native), "libsqlite3-sys");
        assert_eq!(crate_of("_start", &libs, &native), UNKNOWN);
    }

    #[test]
    fn package_ids() {
        assert_eq!(
            package_name(
                "registry+https://github.com/rust-lang/crates.io-index#libsqlite3-sys@0.30.1",
                "libsqlite3_sys"
            ),
            "libsqlite3-sys"
        );
        assert_eq!(package_name("path+file:///w/gw#0.1.0", "grove"), "gw");
        assert_eq!(package_name("path+file:///w/x#gw@0.1.0", "grove"), "gw");
        assert_eq!(package_name("serde 1.0.0 (registry+…)", "serde"), "serde");
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
