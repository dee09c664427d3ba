//! Item 5: help that fits. Every line of every help text fits an 80-column terminal (no
//! word broken by the terminal), the global options have their own heading, `gw` alone fits
//! a 40-row screen and points at `gw help`, gw-migrate's help is laid out like gw's, and
//! `gw man [COMMAND]` prints the man pages.

use e2e::{Stdout, Term, TestEnv};

/// A terminal of 80 columns and 40 rows.
const SCREEN: (u16, u16) = (80, 40);

/// What `program args` wrote to the terminal, as lines without colour.
fn lines(env: &TestEnv, program: &str, args: &[&str]) -> (Vec<String>, Term) {
    let mut t = env.terminal(program, args, &env.root, SCREEN, Stdout::Terminal);
    let st = t.finish();
    assert!(st.success(), "{program} {args:?}: {st}\n{}", t.text());
    let raw = String::from_utf8_lossy(t.raw()).into_owned();
    let plain = strip_escapes(&raw).replace('\r', "");
    let lines = plain.lines().map(str::to_string).collect();
    (lines, t)
}

/// `text` without its CSI sequences (colours, cursor movements).
fn strip_escapes(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn assert_fits(what: &str, lines: &[String]) {
    for l in lines {
        assert!(
            l.chars().count() <= usize::from(SCREEN.0),
            "{what}: a line of {} columns:\n{l}\n\n{}",
            l.chars().count(),
            lines.join("\n")
        );
    }
}

#[test]
fn every_help_fits_80_columns_with_global_options_apart() {
    let env = TestEnv::new();
    let (all, _) = lines(&env, "gw", &["help"]);
    assert_fits("gw help", &all);
    assert!(all.iter().any(|l| l == "Global options:"), "{all:#?}");
    // Every command listed, and its own help.
    let commands: Vec<String> = env
        .gw(&["help"])
        .success()
        .stdout
        .lines()
        .take_while(|l| *l != "Global options:")
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
        .collect();
    assert!(commands.len() > 25, "{commands:?}");
    for c in &commands {
        let (help, _) = lines(&env, "gw", &[c, "--help"]);
        assert_fits(&format!("gw {c} --help"), &help);
    }
    let (create, _) = lines(&env, "gw", &["create", "--help"]);
    let heading = |h: &str| create.iter().position(|l| l == h);
    let global = heading("Global options:").expect("a heading of their own");
    let own = heading("Options:").expect("the command's options");
    let examples = heading("Examples:").expect("examples");
    for flag in ["--format", "--no-hooks", "--verbose", "--color"] {
        let at = create.iter().position(|l| l.contains(flag)).unwrap();
        assert!(at > global && at < examples, "{flag} under Global options");
    }
    let branch = create.iter().position(|l| l.contains("--branch")).unwrap();
    assert!(branch > own && branch < global, "{create:#?}");
    // A wrapped example keeps its description's column.
    assert!(
        create
            .iter()
            .any(|l| l.starts_with("      ") && l.trim_start().len() < 60),
        "{create:#?}"
    );
}

#[test]
fn gw_alone_fits_a_40_row_screen_and_points_at_gw_help() {
    let env = TestEnv::new();
    let (shown, t) = lines(&env, "gw", &[]);
    // The prompt of the shell it returns to needs a row too.
    assert!(
        shown.len() < usize::from(SCREEN.1),
        "{} lines:\n{}",
        shown.len(),
        shown.join("\n")
    );
    assert_fits("gw", &shown);
    assert_eq!(t.wrapped_rows(), 0);
    let text = shown.join("\n");
    assert!(text.contains("gw help"), "{text}");
    for common in ["create", "go", "list", "status", "delete"] {
        assert!(
            shown.iter().any(|l| l.trim_start().starts_with(common)),
            "{common}: {text}"
        );
    }
}

#[test]
fn gw_migrate_help_is_laid_out_like_gw() {
    let env = TestEnv::new();
    let migrate = e2e::migrate_bin().to_str().unwrap().to_string();
    let (help, _) = lines(&env, &migrate, &["--help"]);
    assert_fits("gw-migrate --help", &help);
    for heading in [
        "Usage: gw-migrate [OPTIONS] [ROOT]... [COMMAND]",
        "Options:",
        "Global options:",
        "Examples:",
    ] {
        assert!(
            help.iter().any(|l| l.starts_with(heading)),
            "{heading}:\n{help:#?}"
        );
    }
    let (short, _) = lines(&env, &migrate, &["-h"]);
    assert_eq!(short, help, "one layout for -h and --help, as gw has");
}

#[test]
fn gw_man_prints_the_man_pages() {
    let env = TestEnv::new();
    let gw = env.gw(&["man"]).success();
    assert!(
        gw.stdout.starts_with(".ie"),
        "roff: {}",
        &gw.stdout[..60.min(gw.stdout.len())]
    );
    assert!(gw.stdout.contains(".TH gw 1"), "{}", gw.stdout);
    let create = env.gw(&["man", "create"]).success();
    assert!(create.stdout.contains(".TH gw-create 1"), "{create}");
    assert!(create.stdout.contains("\\-\\-branch"), "{create}");
    let add = env.gw(&["man", "preset", "add"]).success();
    assert!(add.stdout.contains(".TH gw-preset-add 1"), "{add}");
    let bad = env.gw(&["man", "nosuch", "--format", "json"]);
    assert_eq!(bad.code(2).error_code(), "USAGE");
    // The footer of `gw help` points at it, not at a source checkout's `cargo xtask man`.
    let help = env.gw(&["help"]).success().stdout;
    assert!(
        help.contains("gw man") && !help.contains("cargo xtask"),
        "{help}"
    );
}
