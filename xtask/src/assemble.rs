//! `cargo xtask assemble`: one release out of the `cargo xtask dist` directories of every
//! target, as the release workflow publishes it.
//!
//! Each directory's `SHA256SUMS` is checked first (a file it does not list, or one whose
//! bytes changed on the way between jobs, stops everything); the files are gathered into
//! one directory (a name two targets share, the config schemas, must be the same bytes in
//! both); the Homebrew formula is written from the archives' checksums; one `SHA256SUMS`
//! covers everything. The tag must be the workspace's version, and `CHANGELOG.md` must have
//! a section for it: that section becomes the release notes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::dist::{self, archive_dir};
use crate::util;

pub const USAGE: &str =
    "usage: cargo xtask assemble --tag vVERSION --out DIR [--notes FILE] DIST_DIR...

Gathers the `cargo xtask dist` output of every release target (one DIST_DIR each) into DIR,
after checking each one's SHA256SUMS, and writes beside the archives:

  gw.rb       the Homebrew formula: the macOS and Linux archives of this release, by URL
              (the workspace's `repository`/releases/download/TAG/…) and SHA-256
  SHA256SUMS  every other file in DIR

Refuses a TAG that is not v<the workspace's version>, a release without an archive for
each of x86_64/aarch64 Linux (musl) and macOS, and a CHANGELOG.md without a section for
the version.

  --tag TAG     the release's tag, v<version>
  --out DIR     where the release's files go (created; must be empty if it exists)
  --notes FILE  also write the version's CHANGELOG.md section (the release notes) there";

/// The targets every release has an archive for: what the Homebrew formula installs.
pub const RELEASE_TARGETS: &[&str] = &[
    "x86_64-unknown-linux-musl",
    "aarch64-unknown-linux-musl",
    "x86_64-apple-darwin",
    "aarch64-apple-darwin",
];

#[derive(Debug, Default)]
pub struct Options {
    tag: String,
    out: PathBuf,
    notes: Option<PathBuf>,
    dirs: Vec<PathBuf>,
}

/// Checks the arguments; does no work.
pub fn parse(args: &[String]) -> Result<Options, String> {
    let mut tag = None;
    let mut out = None;
    let mut notes = None;
    let mut dirs = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |flag: &str| util::value(&mut it, flag, USAGE);
        match a.as_str() {
            "--tag" => tag = Some(value("--tag")?),
            "--out" => out = Some(PathBuf::from(value("--out")?)),
            "--notes" => notes = Some(PathBuf::from(value("--notes")?)),
            flag if flag.starts_with('-') => {
                return Err(format!("unknown argument `{flag}`\n\n{USAGE}"));
            }
            dir => dirs.push(PathBuf::from(dir)),
        }
    }
    let tag = tag.ok_or_else(|| format!("--tag is required\n\n{USAGE}"))?;
    if !tag.starts_with('v') {
        return Err(format!("the tag `{tag}` is not v<version>"));
    }
    let out = out.ok_or_else(|| format!("--out is required\n\n{USAGE}"))?;
    if dirs.is_empty() {
        return Err(format!("name the dist directories to assemble\n\n{USAGE}"));
    }
    Ok(Options {
        tag,
        out,
        notes,
        dirs,
    })
}

pub fn run(args: &[String]) -> Result<(), String> {
    let opts = parse(args)?;
    let root = util::project_root();
    let version = dist::gw_version(&root)?;
    let repository = repository(&root)?;
    let changelog = std::fs::read_to_string(root.join("CHANGELOG.md"))
        .map_err(|e| format!("CHANGELOG.md: {e}"))?;
    let notes = assemble(
        &opts,
        &Release {
            version: &version,
            repository: &repository,
            changelog: &changelog,
        },
    )?;
    if let Some(path) = &opts.notes {
        std::fs::write(path, notes).map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

/// What the release is of.
struct Release<'a> {
    version: &'a str,
    /// `https://github.com/OWNER/REPO`, where the release's files are downloaded from.
    repository: &'a str,
    changelog: &'a str,
}

/// Gathers, checks and writes the release into `opts.out`; returns the release notes.
fn assemble(opts: &Options, r: &Release) -> Result<String, String> {
    if opts.tag != format!("v{}", r.version) {
        return Err(format!(
            "the tag `{}` is not this workspace's version ({}): tag v{} or set the version in Cargo.toml",
            opts.tag, r.version, r.version
        ));
    }
    let notes = release_notes(r.changelog, r.version)?;
    // Every file of every directory, by name, checked against its directory's sums.
    let mut files: BTreeMap<String, (Vec<u8>, PathBuf)> = BTreeMap::new();
    for dir in &opts.dirs {
        for (name, data) in verified(dir)? {
            match files.get(&name) {
                Some((other, from)) if *other != data => {
                    return Err(format!(
                        "{name} differs between {} and {}",
                        from.display(),
                        dir.display()
                    ));
                }
                _ => {
                    files.insert(name, (data, dir.clone()));
                }
            }
        }
    }
    let archive = |target: &str| format!("{}.tar.gz", archive_dir(r.version, target));
    let missing: Vec<String> = RELEASE_TARGETS
        .iter()
        .map(|t| archive(t))
        .filter(|a| !files.contains_key(a))
        .collect();
    if !missing.is_empty() {
        return Err(format!("the release has no {}", missing.join(", ")));
    }
    let sha = |target: &str| hex(&Sha256::digest(&files[&archive(target)].0));
    let formula = formula(r, &opts.tag, &sha);

    if opts.out.exists()
        && std::fs::read_dir(&opts.out)
            .map_err(|e| format!("{}: {e}", opts.out.display()))?
            .next()
            .is_some()
    {
        return Err(format!(
            "{} is not empty: a release directory holds one release",
            opts.out.display()
        ));
    }
    std::fs::create_dir_all(&opts.out).map_err(|e| format!("{}: {e}", opts.out.display()))?;
    let mut written: Vec<(String, Vec<u8>)> = files.into_iter().map(|(n, (d, _))| (n, d)).collect();
    written.push(("gw.rb".to_string(), formula.into_bytes()));
    written.sort();
    for (name, data) in &written {
        let path = opts.out.join(name);
        std::fs::write(&path, data).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let sums = dist::sums_text(written.iter().map(|(n, d)| (n.as_str(), d.as_slice())));
    let path = opts.out.join("SHA256SUMS");
    std::fs::write(&path, sums).map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!(
        "{}: {} files and SHA256SUMS for {}",
        opts.out.display(),
        written.len(),
        opts.tag
    );
    Ok(notes)
}

/// The files of a `cargo xtask dist` directory, `(name, bytes)`, after checking that its
/// `SHA256SUMS` lists exactly them and their hashes hold.
fn verified(dir: &Path) -> Result<Vec<(String, Vec<u8>)>, String> {
    let sums_path = dir.join("SHA256SUMS");
    let sums =
        std::fs::read_to_string(&sums_path).map_err(|e| format!("{}: {e}", sums_path.display()))?;
    let mut listed = BTreeMap::new();
    for line in sums.lines() {
        let (hash, name) = line
            .split_once("  ")
            .ok_or_else(|| format!("{}: not a sha256sum line: `{line}`", sums_path.display()))?;
        if name.contains('/') || name.starts_with('.') || name == "SHA256SUMS" {
            return Err(format!("{}: names `{name}`", sums_path.display()));
        }
        listed.insert(name.to_string(), hash.to_string());
    }
    let mut present = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let entry = entry.map_err(|e| e.to_string())?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name != "SHA256SUMS" {
            present.push(name);
        }
    }
    present.sort();
    let expected: Vec<&String> = listed.keys().collect();
    if present.iter().collect::<Vec<_>>() != expected {
        return Err(format!(
            "{}: SHA256SUMS lists {expected:?} but the directory holds {present:?}",
            dir.display()
        ));
    }
    let mut files = Vec::new();
    for (name, hash) in listed {
        let path = dir.join(&name);
        let data = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        if hex(&Sha256::digest(&data)) != hash {
            return Err(format!(
                "{}: its SHA-256 is not the one in SHA256SUMS",
                path.display()
            ));
        }
        files.push((name, data));
    }
    Ok(files)
}

/// The Homebrew formula of the release: each platform's archive by URL and SHA-256
/// (`sha` of a target), the binaries, completions, man pages, and the schemas and skill
/// under `share/gw`.
fn formula(r: &Release, tag: &str, sha: &dyn Fn(&str) -> String) -> String {
    let platform = |target: &str| {
        format!(
            "      url \"{}\"\n      sha256 \"{}\"\n",
            download_url(r.repository, r.version, target),
            sha(target)
        )
    };
    format!(
        r##"# Generated by `cargo xtask assemble` for grove {version} ({tag}); the release workflow
# publishes it. Edits here are lost at the next release.
class Gw < Formula
  desc "Multi-repository git worktree workspaces"
  homepage "{homepage}"
  version "{version}"
  license "MIT"

  on_macos do
    on_arm do
{mac_arm}    end
    on_intel do
{mac_intel}    end
  end

  on_linux do
    on_arm do
{linux_arm}    end
    on_intel do
{linux_intel}    end
  end

  uses_from_macos "git"

  def install
    bin.install "gw", "gw-migrate"
    bash_completion.install "completions/gw.bash" => "gw"
    zsh_completion.install "completions/_gw"
    fish_completion.install "completions/gw.fish"
    man1.install Dir["man/man1/*.1"]
    pkgshare.install "schema", "skills"
  end

  def caveats
    <<~EOS
      Let `gw go` and `gw create` change directory: add to your shell's rc file
        eval "$(gw shell-init)"
      The agent skill is in #{{opt_pkgshare}}/skills/grove (or run `gw skill`).
    EOS
  end

  test do
    assert_match "gw #{{version}}", shell_output("#{{bin}}/gw --version")
    assert_match "gw-migrate #{{version}}", shell_output("#{{bin}}/gw-migrate --version")
    assert_match "\"initialized\":false", shell_output("#{{bin}}/gw context --format json")
  end
end
"##,
        version = r.version,
        homepage = r.repository,
        mac_arm = platform("aarch64-apple-darwin"),
        mac_intel = platform("x86_64-apple-darwin"),
        linux_arm = platform("aarch64-unknown-linux-musl"),
        linux_intel = platform("x86_64-unknown-linux-musl"),
    )
}

/// Where the release of `version` has its archive for `target` (its tag is `v<version>`).
pub fn download_url(repository: &str, version: &str, target: &str) -> String {
    format!(
        "{repository}/releases/download/v{version}/{}.tar.gz",
        archive_dir(version, target)
    )
}

/// The section of `CHANGELOG.md` for `version` (`## 0.1.0`, `## [0.1.0]` or `## v0.1.0`,
/// with anything after it on the line), without its heading.
fn release_notes(changelog: &str, version: &str) -> Result<String, String> {
    let is_heading = |line: &str| {
        line.strip_prefix("## ").is_some_and(|h| {
            let word = h.split_whitespace().next().unwrap_or("");
            let word = word.trim_start_matches('[').trim_end_matches(']');
            word == version || word.strip_prefix('v') == Some(version)
        })
    };
    let mut lines = changelog.lines().skip_while(|l| !is_heading(l));
    if lines.next().is_none() {
        return Err(format!(
            "CHANGELOG.md has no `## {version}` section: move the Unreleased entries under it"
        ));
    }
    let body: Vec<&str> = lines.take_while(|l| !l.starts_with("## ")).collect();
    let notes = body.join("\n").trim().to_string();
    if notes.is_empty() {
        return Err(format!("CHANGELOG.md's `## {version}` section is empty"));
    }
    Ok(notes + "\n")
}

/// The workspace's `repository` (`https://github.com/OWNER/REPO`), without a trailing `/`
/// or `.git`.
fn repository(root: &Path) -> Result<String, String> {
    let md = cargo_metadata::MetadataCommand::new()
        .manifest_path(root.join("Cargo.toml"))
        .no_deps()
        .exec()
        .map_err(|e| e.to_string())?;
    let repo = md
        .workspace_packages()
        .iter()
        .find(|p| p.name.as_str() == "gw")
        .and_then(|p| p.repository.clone())
        .ok_or("the gw package names no repository")?;
    Ok(repo
        .trim_end_matches('/')
        .trim_end_matches(".git")
        .to_string())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHANGELOG: &str = "# Changelog\n\n## Unreleased\n\n- next\n\n## [0.2.0] - 2026-12-03\n\n### Added\n\n- release archives\n\n## 0.1.0\n\n- first\n";

    fn release() -> Release<'static> {
        Release {
            version: "0.2.0",
            repository: "https://github.com/grove-rs/grove",
            changelog: CHANGELOG,
        }
    }

    /// A `cargo xtask dist` directory for `target`: its archive (the bytes given), the
    /// shared schema, and SHA256SUMS.
    fn dist_dir(root: &Path, target: &str, archive: &[u8], schema: &[u8]) -> PathBuf {
        let dir = root.join(target);
        std::fs::create_dir_all(&dir).unwrap();
        let name = format!("{}.tar.gz", archive_dir("0.2.0", target));
        std::fs::write(dir.join(&name), archive).unwrap();
        std::fs::write(dir.join("config.schema.json"), schema).unwrap();
        let sums = dist::sums_text([("config.schema.json", schema), (name.as_str(), archive)]);
        std::fs::write(dir.join("SHA256SUMS"), sums).unwrap();
        dir
    }

    fn opts(root: &Path, dirs: Vec<PathBuf>) -> Options {
        Options {
            tag: "v0.2.0".into(),
            out: root.join("release"),
            notes: None,
            dirs,
        }
    }

    fn all_targets(root: &Path) -> Vec<PathBuf> {
        RELEASE_TARGETS
            .iter()
            .map(|t| dist_dir(root, t, t.as_bytes(), b"{}"))
            .collect()
    }

    #[test]
    fn a_release_gathers_every_target_with_one_sums_file_and_a_formula() {
        let tmp = tempfile::tempdir().unwrap();
        let o = opts(tmp.path(), all_targets(tmp.path()));
        let notes = assemble(&o, &release()).unwrap();
        assert_eq!(notes, "### Added\n\n- release archives\n");
        let sums = std::fs::read_to_string(o.out.join("SHA256SUMS")).unwrap();
        let names: Vec<&str> = sums
            .lines()
            .map(|l| l.split_once("  ").unwrap().1)
            .collect();
        assert_eq!(
            names,
            [
                "config.schema.json",
                "gw-0.2.0-aarch64-apple-darwin.tar.gz",
                "gw-0.2.0-aarch64-unknown-linux-musl.tar.gz",
                "gw-0.2.0-x86_64-apple-darwin.tar.gz",
                "gw-0.2.0-x86_64-unknown-linux-musl.tar.gz",
                "gw.rb",
            ]
        );
        for line in sums.lines() {
            let (hash, name) = line.split_once("  ").unwrap();
            let data = std::fs::read(o.out.join(name)).unwrap();
            assert_eq!(hash, hex(&Sha256::digest(&data)), "{name}");
        }
        let rb = std::fs::read_to_string(o.out.join("gw.rb")).unwrap();
        for t in RELEASE_TARGETS {
            let url = format!(
                "url \"https://github.com/grove-rs/grove/releases/download/v0.2.0/gw-0.2.0-{t}.tar.gz\"\n      sha256 \"{}\"",
                hex(&Sha256::digest(t.as_bytes()))
            );
            assert!(rb.contains(&url), "{url}\n{rb}");
        }
        assert!(rb.contains("version \"0.2.0\""), "{rb}");
        assert!(rb.contains("\"#{bin}/gw --version\""), "{rb}");
        ruby_parses(&o.out.join("gw.rb"));
    }

    /// `ruby -c`: the formula is Ruby (where ruby is installed; .ci/run installs it).
    fn ruby_parses(rb: &Path) {
        if !e2e::require("ruby") {
            return;
        }
        let out = std::process::Command::new("ruby")
            .arg("-c")
            .arg(rb)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "ruby -c {}: {}",
            rb.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    #[test]
    fn a_release_is_refused_when_anything_is_off() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = all_targets(tmp.path());
        let refused = |o: &Options, r: &Release, what: &str| {
            let err = assemble(o, r).unwrap_err();
            assert!(err.contains(what), "{what}: {err}");
            assert!(!o.out.join("SHA256SUMS").exists(), "{err}");
        };
        // The tag is not the version.
        let mut o = opts(tmp.path(), dirs.clone());
        o.tag = "v0.2.1".into();
        refused(&o, &release(), "not this workspace's version");
        // No changelog section.
        let r = Release {
            changelog: "## Unreleased\n\n- x\n",
            ..release()
        };
        refused(&opts(tmp.path(), dirs.clone()), &r, "no `## 0.2.0` section");
        // A target is missing.
        refused(
            &opts(tmp.path(), dirs[..3].to_vec()),
            &release(),
            "gw-0.2.0-aarch64-apple-darwin.tar.gz",
        );
        // An archive changed after its sums were written.
        let arm = &dirs[3];
        std::fs::write(arm.join("gw-0.2.0-aarch64-apple-darwin.tar.gz"), b"evil").unwrap();
        refused(
            &opts(tmp.path(), dirs.clone()),
            &release(),
            "not the one in SHA256SUMS",
        );
        dist_dir(tmp.path(), RELEASE_TARGETS[3], b"ok", b"{}");
        // A file the sums do not list.
        std::fs::write(arm.join("extra.txt"), b"x").unwrap();
        refused(&opts(tmp.path(), dirs.clone()), &release(), "extra.txt");
        std::fs::remove_file(arm.join("extra.txt")).unwrap();
        // Two targets disagree on a shared file.
        dist_dir(tmp.path(), RELEASE_TARGETS[3], b"ok", b"{\"other\": 1}");
        refused(
            &opts(tmp.path(), dirs.clone()),
            &release(),
            "config.schema.json differs",
        );
        dist_dir(tmp.path(), RELEASE_TARGETS[3], b"ok", b"{}");
        // The output directory holds an earlier release.
        let o = opts(tmp.path(), dirs);
        std::fs::create_dir_all(&o.out).unwrap();
        std::fs::write(o.out.join("old.tar.gz"), b"old").unwrap();
        let err = assemble(&o, &release()).unwrap_err();
        assert!(err.contains("not empty"), "{err}");
    }

    #[test]
    fn notes_are_the_versions_section() {
        assert_eq!(release_notes(CHANGELOG, "0.1.0").unwrap(), "- first\n");
        assert!(release_notes(CHANGELOG, "0.1").is_err());
        assert!(release_notes("## v0.3.0\n\n## 0.2.0\n", "0.3.0").is_err());
        assert_eq!(release_notes("## v0.3.0\nx\n", "0.3.0").unwrap(), "x\n");
    }

    /// `[package.metadata.binstall]` of `gw` and `migrate` names, for every target a
    /// release has (and for glibc Linux, its musl archive), the URL the formula uses and the
    /// binary's place in the archive `dist` makes.
    #[test]
    fn binstall_metadata_names_the_release_archives() {
        let root = util::project_root();
        let md = cargo_metadata::MetadataCommand::new()
            .manifest_path(root.join("Cargo.toml"))
            .no_deps()
            .exec()
            .unwrap();
        let repo = repository(&root).unwrap();
        let version = dist::gw_version(&root).unwrap();
        for (package, bin) in [("gw", "gw"), ("migrate", "gw-migrate")] {
            let p = md
                .workspace_packages()
                .into_iter()
                .find(|p| p.name.as_str() == package)
                .unwrap();
            let meta = &p.metadata["binstall"];
            assert_eq!(meta["pkg-fmt"], "tgz", "{package}");
            let expand = |template: &serde_json::Value, target: &str| {
                template
                    .as_str()
                    .unwrap_or_else(|| panic!("{package}: no template in {meta}"))
                    .replace("{ repo }", &repo)
                    .replace("{ version }", &version)
                    .replace("{ target }", target)
                    .replace("{ bin }", bin)
                    .replace("{ binary-ext }", "")
            };
            let mut cases: Vec<(&str, &str, &serde_json::Value)> =
                RELEASE_TARGETS.iter().map(|t| (*t, *t, meta)).collect();
            for (gnu, musl) in [
                ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-musl"),
                ("aarch64-unknown-linux-gnu", "aarch64-unknown-linux-musl"),
            ] {
                cases.push((gnu, musl, &meta["overrides"][gnu]));
            }
            for (target, archived, templates) in cases {
                assert_eq!(
                    expand(&templates["pkg-url"], target),
                    download_url(&repo, &version, archived),
                    "{package} on {target}"
                );
                assert_eq!(
                    expand(&templates["bin-dir"], target),
                    format!("{}/{bin}", archive_dir(&version, archived)),
                    "{package} on {target}"
                );
            }
        }
    }

    #[test]
    fn arguments() {
        let w = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        let o = parse(&w("--tag v1.0.0 --out rel --notes n.md a b")).unwrap();
        assert_eq!(o.dirs, [PathBuf::from("a"), PathBuf::from("b")]);
        assert_eq!(o.notes, Some(PathBuf::from("n.md")));
        for bad in [
            "--out rel a",
            "--tag v1 a",
            "--tag 1.0.0 --out r a",
            "--tag v1 --out r",
            "--tag v1 --out r --x a",
        ] {
            assert!(parse(&w(bad)).is_err(), "{bad}");
        }
    }
}
