//! Tidy: the invariants ARCHITECTURE.md states, checked on the source (in the style of
//! rust-analyzer's tidy test). Each rule names what may not appear, where it may, and why;
//! comments and string literals are not looked at. The checker itself is tested on planted
//! violations below, so that a rule that can no longer fire is noticed.

#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

/// One invariant.
struct Rule {
    name: &'static str,
    /// Source text that breaks it (matched on code with comments and strings blanked).
    forbidden: &'static [&'static str],
    /// String literals that break it when used as a path component (the whole literal,
    /// quotes excluded, right after `join(` or `from(`).
    literals: &'static [&'static str],
    /// String literals that break it when they name a program to run (the whole literal,
    /// right after `new(`: `Cmd::new("rm")`).
    programs: &'static [&'static str],
    /// Files (relative to the repository root) or directories (ending in `/`) where it
    /// may appear.
    allowed: &'static [&'static str],
    why: &'static str,
}

const RULES: &[Rule] = &[
    Rule {
        name: "output",
        forbidden: &[
            "print!(",
            "println!(",
            "eprint!(",
            "eprintln!(",
            "io::stdout()",
            "io::stderr()",
        ],
        literals: &[],
        programs: &[],
        allowed: &["gw/src/output/"],
        why: "only the output layer writes to stdout or stderr",
    },
    Rule {
        name: "terminal",
        forbidden: &[
            "raw_out",
            "raw_err",
            "__formatted(",
            "io::stdout()",
            "io::stderr()",
            "Term::stdout()",
            "Term::stderr()",
            "ProgressDrawTarget::stderr",
        ],
        literals: &[],
        programs: &[],
        allowed: &[
            "gw/src/output/mod.rs",
            "gw/src/output/emit.rs",
            "gw/src/output/term.rs",
            "gw/src/output/events.rs",
            "gw/src/output/pick.rs",
            "gw/src/output/progress.rs",
        ],
        why: "text reaches a terminal only as `Shown` (foreign text escaped): the printer's \
              raw writers and Shown's unchecked constructor are the output layer's sinks' own, \
              and `shown!` never captures an argument by name (it would not be escaped)",
    },
    Rule {
        name: "clap",
        forbidden: &["clap::", "use clap"],
        literals: &[],
        programs: &[],
        allowed: &["gw/src/cli/", "migrate/src/"],
        why: "only the CLI layer knows clap",
    },
    Rule {
        name: "gix",
        forbidden: &["gix::", "use gix"],
        literals: &[],
        programs: &[],
        allowed: &["gw/src/git/"],
        why: "only the git adapter imports gix",
    },
    Rule {
        name: "environment",
        forbidden: &[
            "env::var(",
            "env::var_os(",
            "env::vars(",
            "env::set_var(",
            "env::remove_var(",
            "env::args(",
            "env::args_os(",
        ],
        literals: &[],
        programs: &[],
        allowed: &["gw/src/env.rs", "gw/src/main.rs", "migrate/src/main.rs"],
        why: "the environment is read once, by Env (main passes the arguments)",
    },
    Rule {
        name: "processes",
        forbidden: &["Command::new(", "process::Command", ".spawn()"],
        literals: &[],
        programs: &[],
        allowed: &["gw/src/proc/"],
        why: "only proc starts processes (one place for groups, signals, inherited locks)",
    },
    Rule {
        name: "grove-dir",
        forbidden: &[],
        literals: &[
            "state.json",
            "state.lock",
            "config.toml",
            "operations",
            "locks",
            "migrate-backups",
            ".trash",
            "grove.log",
            "stats.json",
            "messages.db",
            "trust.json",
        ],
        programs: &[],
        allowed: &["gw/src/home.rs"],
        why: "paths in the grove directory (and the trash's name) are built by home.rs",
    },
    Rule {
        name: "removal",
        forbidden: &[
            "branch_delete(",
            "ref_delete(",
            "refs_transaction(",
            "config_remove_section(",
            "worktree_remove(",
            "remove_dir_all(",
            "discard_changes(",
        ],
        literals: &[],
        programs: &["rm", "rmdir"],
        allowed: &[
            "gw/src/ops/safety/",
            // The adapters that define them.
            "gw/src/git/write.rs",
            "gw/src/fsx.rs",
            // gw-migrate's cleanup (issue 29's) removes only its own run directories under
            // `migrate-backups/`, never a worktree, a branch or a person's files.
            "gw/src/legacy/cleanup/",
        ],
        why: "a branch, a worktree, its registration or a tree of files is removed only by the \
              safety kernel, which judges what that loses (ops::safety::remove)",
    },
    Rule {
        name: "codes",
        forbidden: &[
            "(e: lock::Error) -> Error",
            "(e: journal::Error) -> Error",
            "(e: state::Error) -> Error",
            "(e: config::Error) -> Error",
            "(e: git::Error) -> Error",
            "(e: proc::Error) -> Error",
            "(e: fsx::Error) -> Error",
        ],
        literals: &[],
        programs: &[],
        allowed: &["gw/src/error.rs"],
        why: "a layer's error gets its code (and exit class) in error.rs, once",
    },
];

/// Where the rules apply: the library and binaries, not tests, xtask or the e2e harness.
const SOURCES: &[&str] = &["gw/src", "migrate/src"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Where a string literal stands: a path component (right after `join(` or `from(`), or
/// the program a command runs (right after `new(`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Path,
    Program,
}

/// The code of `text` outside `#[cfg(test)]` modules, with comments and the contents of
/// string and char literals blanked (lengths kept), and the string literals used as a path
/// component or as a program.
fn code_of(text: &str) -> (String, Vec<(Place, String)>) {
    let text = match test_module(text) {
        Some(i) => &text[..i],
        None => text,
    };
    let b = text.as_bytes();
    let mut code = String::with_capacity(text.len());
    let mut literals = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            code.push_str(&" ".repeat(end));
            i += end;
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map(|e| e + 2).unwrap_or(rest.len());
            code.push_str(&" ".repeat(end));
            i += end;
        } else if rest.starts_with("r#\"") || rest.starts_with("r\"") {
            let hashes = rest[1..].chars().take_while(|c| *c == '#').count();
            let open = 1 + hashes + 1;
            let close = format!("\"{}", "#".repeat(hashes));
            let end = rest[open..]
                .find(&close)
                .map(|e| open + e + close.len())
                .unwrap_or(rest.len());
            if let Some(place) = place(&code) {
                literals.push((
                    place,
                    rest[open..end.saturating_sub(close.len())].to_string(),
                ));
            }
            code.push_str(&" ".repeat(end));
            i += end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            if let Some(place) = place(&code) {
                literals.push((place, text[i + 1..j.min(b.len())].to_string()));
            }
            code.push_str(&" ".repeat((j + 1).min(b.len()) - i));
            i = j + 1;
        } else if b[i] == b'\'' && i + 2 < b.len() && (b[i + 2] == b'\'' || b[i + 1] == b'\\') {
            // A char literal ('x' or '\n'); a lifetime ('a) is left as code.
            let end = text[i + 1..]
                .find('\'')
                .map(|e| i + 2 + e)
                .unwrap_or(b.len());
            code.push_str(&" ".repeat(end - i));
            i = end;
        } else {
            let c = rest.chars().next().unwrap();
            code.push(c);
            i += c.len_utf8();
        }
    }
    (code, literals)
}

/// Where a `#[cfg(test)]` module starts (its attributes included).
fn test_module(text: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_end() == "#[cfg(test)]" {
            let after = &text[offset + line.len()..];
            let next = after
                .lines()
                .find(|l| !l.trim_start().starts_with("#["))
                .unwrap_or_default();
            if next.trim_start().starts_with("mod ") || next.trim_start().starts_with("pub mod ") {
                return Some(offset);
            }
        }
        offset += line.len();
    }
    None
}

/// What a string literal about to start stands for, from the code before it.
fn place(code: &str) -> Option<Place> {
    let before = code.trim_end();
    if before.ends_with("join(") || before.ends_with("from(") {
        Some(Place::Path)
    } else if before.ends_with("new(") {
        Some(Place::Program)
    } else {
        None
    }
}

/// The arguments `shown!` format strings in `text` capture by name (`{name}`), which the
/// macro cannot escape.
fn shown_captures(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("shown!(") {
        rest = &rest[i + "shown!(".len()..];
        let literal = rest.trim_start();
        let Some(body) = literal.strip_prefix('"') else {
            continue;
        };
        let end = body.find('"').unwrap_or(body.len());
        let fmt = body[..end].replace("{{", "");
        let mut parts = fmt.split('{').skip(1);
        for part in parts.by_ref() {
            let name: String = part
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if name.starts_with(|c: char| c.is_alphabetic() || c == '_') {
                found.push(name);
            }
        }
    }
    found
}

/// The rules `text` (the file at `rel`) breaks: `(rule, what)`.
fn check(rel: &str, text: &str) -> Vec<(&'static str, String)> {
    let (code, literals) = code_of(text);
    let mut out = Vec::new();
    // A layer's own conversions between its errors are its business; the rule is about
    // `crate::error::Error`.
    let uses_edge_error = text.contains("crate::error::");
    for capture in shown_captures(text) {
        out.push(("terminal", format!("`shown!` captures `{capture}`")));
    }
    for rule in RULES {
        if rule.name == "codes" && !uses_edge_error {
            continue;
        }
        let allowed = rule.allowed.iter().any(|a| {
            if a.ends_with('/') {
                rel.starts_with(a)
            } else {
                rel == *a
            }
        });
        if allowed {
            continue;
        }
        for f in rule.forbidden {
            if code.contains(f) {
                out.push((rule.name, format!("`{f}`")));
            }
        }
        for l in rule.literals {
            if literals.iter().any(|(p, x)| *p == Place::Path && x == l) {
                out.push((rule.name, format!("\"{l}\"")));
            }
        }
        for l in rule.programs {
            if literals.iter().any(|(p, x)| *p == Place::Program && x == l) {
                out.push((rule.name, format!("the program \"{l}\"")));
            }
        }
    }
    out
}

#[test]
fn the_architecture_invariants_hold() {
    let root = root();
    let mut files = Vec::new();
    for dir in SOURCES {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 50, "found the sources ({})", files.len());
    let mut broken = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        // A module of unit tests in a file of its own.
        if f.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for (rule, what) in check(&rel, &text) {
            let why = RULES.iter().find(|r| r.name == rule).unwrap().why;
            broken.push(format!("{rel}: {what} ({rule}: {why})"));
        }
    }
    assert!(broken.is_empty(), "tidy:\n{}", broken.join("\n"));
}

/// The most lines a source file may have before its tests: a file that grows past it holds
/// more than one thing, and is split.
const MAX_LINES: usize = 600;

/// Files over [`MAX_LINES`] for now, each with the issue that brings it back under.
const TOO_LONG_FOR_NOW: &[(&str, &str)] = &[];

/// The lines of `text` before its `#[cfg(test)]` module, when it has more than
/// [`MAX_LINES`].
fn too_long(text: &str) -> Option<usize> {
    let code = match test_module(text) {
        Some(i) => &text[..i],
        None => text,
    };
    let n = code.lines().count();
    (n > MAX_LINES).then_some(n)
}

#[test]
fn no_source_file_is_longer_than_600_lines() {
    let root = root();
    let mut files = Vec::new();
    rust_files(&root.join("gw/src"), &mut files);
    let mut long = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if f.file_name().is_some_and(|n| n == "tests.rs")
            || TOO_LONG_FOR_NOW.iter().any(|(r, _)| *r == rel)
        {
            continue;
        }
        if let Some(n) = too_long(&std::fs::read_to_string(f).unwrap()) {
            long.push(format!("{rel}: {n} lines before its tests"));
        }
    }
    assert!(
        long.is_empty(),
        "longer than {MAX_LINES} lines (split them):\n{}",
        long.join("\n")
    );
    // The check itself fires, and counts only what comes before the tests.
    let planted = "fn f() {}\n".repeat(MAX_LINES + 1);
    assert_eq!(too_long(&planted), Some(MAX_LINES + 1));
    let with_tests = format!(
        "{}#[cfg(test)]\nmod tests {{\n{}}}\n",
        "fn f() {}\n".repeat(MAX_LINES),
        "fn t() {}\n".repeat(100)
    );
    assert_eq!(too_long(&with_tests), None);
}

/// Every invariant is listed in ARCHITECTURE.md with the tidy rule that enforces it.
#[test]
fn architecture_md_names_every_rule() {
    let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    for rule in RULES {
        assert!(
            doc.contains(&format!("tidy: `{}`", rule.name)),
            "ARCHITECTURE.md does not name tidy rule `{}` ({})",
            rule.name,
            rule.why
        );
    }
}

/// The exit-code table of docs/agent-cli.md is the one the code has.
#[test]
fn the_exit_code_table_is_the_codes() {
    use grove::error::Code;
    let doc = std::fs::read_to_string(root().join("docs/agent-cli.md")).unwrap();
    let table = &doc[doc.find("## Error codes and exit classes").unwrap()..];
    let mut documented: Vec<(String, u8)> = Vec::new();
    for line in table.lines().skip_while(|l| !l.starts_with("|---")).skip(1) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let exit: u8 = cells[1].parse().unwrap();
        // Codes are the backquoted SCREAMING_CASE words of the third cell.
        for word in cells[3].split('`').skip(1).step_by(2) {
            if word.chars().all(|c| c.is_ascii_uppercase() || c == '_') {
                documented.push((word.to_string(), exit));
            }
        }
    }
    let mut actual: Vec<(String, u8)> = Code::ALL
        .iter()
        .map(|c| (c.as_str().to_string(), c.exit_code()))
        .collect();
    documented.sort();
    actual.sort();
    assert_eq!(documented, actual);
}

#[test]
fn the_checker_finds_planted_violations() {
    let planted = [
        ("gw/src/ops/x.rs", "fn f() { println!(\"hi\"); }", "output"),
        ("gw/src/ops/x.rs", "use clap::Parser;", "clap"),
        ("gw/src/ops/x.rs", "let r = gix::open(p);", "gix"),
        (
            "gw/src/ops/x.rs",
            "let v = std::env::var(\"X\");",
            "environment",
        ),
        (
            "gw/src/ops/x.rs",
            "let c = std::process::Command::new(\"git\");",
            "processes",
        ),
        (
            "gw/src/ops/x.rs",
            "let p = home.join(\"operations\");",
            "grove-dir",
        ),
        (
            "gw/src/ops/x.rs",
            "use crate::error::Error;\nfn lock_error(e: lock::Error) -> Error {}",
            "codes",
        ),
        (
            "gw/src/output/render/x.rs",
            "p.raw_out.write_all(name.as_bytes())?;",
            "terminal",
        ),
        (
            "gw/src/output/render/x.rs",
            "let _ = writeln!(std::io::stderr(), \"{name}\");",
            "terminal",
        ),
        (
            "gw/src/output/render/x.rs",
            "p.line(Shown::__formatted(format_args!(\"{}\", name)))?;",
            "terminal",
        ),
        (
            "gw/src/output/render/x.rs",
            "p.line(shown!(\"Workspace {name} at {}\", path))?;",
            "terminal",
        ),
        (
            "gw/src/ops/delete.rs",
            "git::branch_delete(source, branch, true)?;",
            "removal",
        ),
        (
            "gw/src/ops/doctor/fix.rs",
            "git::worktree_remove(source, path, true)",
            "removal",
        ),
        (
            "gw/src/ops/prune/x.rs",
            "git::refs_transaction(source, &[], &[(&full, tip)])?;",
            "removal",
        ),
        (
            "gw/src/ops/x.rs",
            "let _ = fsx::remove_dir_all(p);",
            "removal",
        ),
        (
            "gw/src/ops/x.rs",
            "std::fs::remove_dir_all(&p).ok();",
            "removal",
        ),
        (
            "gw/src/ops/x.rs",
            "Cmd::new(\"rm\").args([\"-rf\", p]).run()",
            "removal",
        ),
        (
            "gw/src/ops/reset.rs",
            "git::discard_changes(path)?;",
            "removal",
        ),
    ];
    for (rel, text, rule) in planted {
        let found = check(rel, text);
        assert!(
            found.iter().any(|(r, _)| *r == rule),
            "{rule} not found in {text:?}: {found:?}"
        );
    }
    // Allowed where the rule says, and never in comments, strings or tests.
    assert!(check("gw/src/output/mod.rs", "println!(\"x\");").is_empty());
    assert!(check("gw/src/output/mod.rs", "self.raw_out.write_all(b)").is_empty());
    assert!(
        check(
            "gw/src/output/render/x.rs",
            "p.line(shown!(\"{{literal}} {} {:<8} {0}\", name, other))?;"
        )
        .is_empty()
    );
    assert!(check("gw/src/home.rs", "self.root.join(\"operations\")").is_empty());
    assert!(check("gw/src/ops/x.rs", "// println!(\"x\") gix:: clap::").is_empty());
    assert!(check("gw/src/ops/x.rs", "let s = \"use gix:: and println!(\";").is_empty());
    assert!(check("gw/src/ops/x.rs", "let s = \"fix `config.toml` by hand\";").is_empty());
    assert!(
        check(
            "gw/src/ops/x.rs",
            "fn f() {}\n#[cfg(test)]\nmod tests { fn t() { println!(\"x\"); } }"
        )
        .is_empty()
    );
    assert!(check("gw/src/ops/x.rs", "fn f<'a>(x: &'a str) -> char { 'x' }").is_empty());
    assert!(
        check(
            "gw/src/ops/safety/remove.rs",
            "git::branch_delete(s, b, true)?;"
        )
        .is_empty()
    );
    assert!(
        check("gw/src/cli/args.rs", "#[command(visible_alias = \"rm\")]").is_empty(),
        "a literal \"rm\" that runs nothing"
    );
    assert!(
        check(
            "gw/src/ops/x.rs",
            "const NAMES: &[&str] = &[\"operations\"];"
        )
        .is_empty()
    );
    assert!(
        check(
            "gw/src/ops/x.rs",
            "fn f() {}\n#[cfg(test)]\n#[allow(x)]\nmod tests { fn t() { p.join(\"locks\"); } }"
        )
        .is_empty()
    );
}

/// Nothing in the workspace is conditional on the CPU architecture, so that `.ci/run`
/// lints macOS once (aarch64-apple-darwin) for both of its release architectures: every
/// `cfg` the x86_64 build sees, the aarch64 lint saw. Code that needs `target_arch` brings
/// back the second lint with it.
#[test]
fn no_code_is_conditional_on_the_cpu_architecture() {
    let root = root();
    let mut files = Vec::new();
    for dir in ["gw/src", "gw/tests", "migrate/src", "e2e", "xtask/src"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "found the sources ({})", files.len());
    let found: Vec<String> = files
        .iter()
        .filter(|f| arch_conditional(&std::fs::read_to_string(f).unwrap()))
        .map(|f| f.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert!(
        found.is_empty(),
        "code conditional on the CPU architecture in {found:?}: lint x86_64-apple-darwin in .ci/run again"
    );
    // The check itself fires (the planted text is built, so that this file holds none).
    let planted = format!(
        "#[cfg({} = \"x86_64\")]\nfn f() {{}}\n",
        ["target", "_arch"].concat()
    );
    assert!(arch_conditional(&planted));
    assert!(!arch_conditional(&format!(
        "// a comment naming {}\n",
        ["target", "_arch"].concat()
    )));
}

/// Whether `text` has code (not a comment) that names `target_arch`.
fn arch_conditional(text: &str) -> bool {
    let needle = ["target", "_arch"].concat();
    text.lines()
        .any(|l| l.contains(&needle) && !l.trim_start().starts_with("//"))
}

/// docs/agent-cli.md names every kind of issue `gw doctor` reports (the schema's list, made
/// from the code): `stray_directory` and others were missing (the issue-30 adversary).
#[test]
fn every_doctor_issue_kind_is_documented() {
    let doc = std::fs::read_to_string(root().join("docs/agent-cli.md")).unwrap();
    let at = doc
        .find("`kind` is stable:")
        .expect("the list of doctor's kinds");
    let list = &doc[at..at + doc[at..].find("(* = ").expect("the list's end")];
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("docs/schema/doctor.json")).unwrap(),
    )
    .unwrap();
    let kinds = schema["$defs"]["IssueKind"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|v| v["enum"].as_array().cloned().unwrap_or_default())
        .chain(
            schema["$defs"]["IssueKind"]["oneOf"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|v| v.get("const").cloned()),
        )
        .map(|k| k.as_str().unwrap().to_string())
        .collect::<Vec<_>>();
    assert!(kinds.len() > 20, "{kinds:?}");
    let missing: Vec<&String> = kinds
        .iter()
        .filter(|k| !list.contains(&format!("`{k}`")))
        .collect();
    assert!(missing.is_empty(), "not in docs/agent-cli.md: {missing:?}");
}

/// The tests read JSON as the shipped gw does. serde_json's features change how numbers
/// are read and written (`float_roundtrip`, `arbitrary_precision`), and a dev-dependency
/// can turn one on for the tests alone: jsonschema turns on `float_roundtrip`, and while
/// the shipped gw lacked it, every test read 1666.6666666666665 right and the release gw
/// read it one unit in the last place off, writing a field of state.json it does not know
/// back changed (found by the `state_json` fuzz target, issue 26). So the features of
/// serde_json are the same with dev-dependencies (what `cargo test` builds) and without
/// (what `cargo install` builds).
#[test]
fn the_tests_read_json_as_the_shipped_gw_does() {
    let features = |edges: &[&str]| -> String {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = std::process::Command::new(cargo);
        cmd.current_dir(root())
            .args([
                "tree",
                "--offline",
                "--locked",
                "-p",
                "gw",
                "-i",
                "serde_json",
            ])
            .args(["--depth", "0", "-f", "{p} [{f}]"])
            .args(edges);
        let out = cmd.output().expect("cargo tree runs");
        let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert!(
            out.status.success() && text.starts_with("serde_json "),
            "cargo tree {edges:?}: {text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    let shipped = features(&["-e", "no-dev"]);
    let tested = features(&[]);
    assert_eq!(
        shipped, tested,
        "serde_json's features differ between the shipped gw (left) and its tests (right): \
         give gw's own dependency the features the tests get"
    );
    assert!(shipped.contains("float_roundtrip"), "{shipped}");
}
