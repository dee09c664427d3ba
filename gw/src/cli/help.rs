//! The clap command as `gw` shows it: `--help` with the commands in groups and examples,
//! and the completion candidates of each argument that names something grove knows
//! (workspaces, repositories, presets, plugins). Both are added to the derived grammar here,
//! by walking it, so the argument structs stay plain.

use clap::CommandFactory;
use clap_complete::engine::{ArgValueCandidates, SubcommandCandidates};

use super::args::Cli;
use super::complete;

/// The groups `gw --help` lists the commands in. A command in no group (a new one) is
/// listed under "Other commands", so none is ever hidden by mistake.
const GROUPS: &[(&str, &[&str])] = &[
    (
        "Start here",
        &["init", "repos", "create", "go", "list", "status"],
    ),
    (
        "Work in a workspace",
        &[
            "sync",
            "reset",
            "add-repo",
            "remove-repo",
            "rename",
            "run",
            "env",
        ],
    ),
    (
        "Clean up",
        &[
            "delete", "prune", "trash", "restore", "undo", "doctor", "ws",
        ],
    ),
    (
        "Set up",
        &[
            "add-dir",
            "remove-dir",
            "preset",
            "plugin",
            "trust",
            "shell-init",
            "completions",
        ],
    ),
    (
        "For agents and scripts",
        &["context", "plan", "apply", "schema", "skill"],
    ),
    ("Help and problems", &["man", "bug-report"]),
];

/// `gw help`'s examples: a command line and what it does.
const EXAMPLES: &[(&str, &str)] = &[
    ("gw init ~/src", "Find the repositories under ~/src"),
    (
        "gw create feat-login -b feat/login -r api,web",
        "A workspace with two repositories",
    ),
    (
        "eval \"$(gw shell-init)\"",
        "Let `gw go`, `gw create` and `gw delete` change directory",
    ),
    (
        "gw go feat-login",
        "Go to a workspace (a picker without NAME)",
    ),
    ("gw status", "The workspace you are in, live"),
    ("gw delete feat-login", "Refuses while work is uncommitted"),
    (
        "gw delete feat-login --dry-run",
        "What it would do, changing nothing",
    ),
    (
        "gw context --format json",
        "Where am I (for agents; every command takes --format json)",
    ),
];

/// The last words of `gw help`.
const FOOTER: &str =
    "`gw COMMAND --help` explains each command; `gw man [COMMAND]` prints its manual page.";

/// The last words of `gw` alone, which lists only the everyday commands.
const SHORT_FOOTER: &str =
    "Every command, option and example: `gw help`. One command: `gw COMMAND --help`.";

/// How many of [`GROUPS`] `gw` alone lists.
const SHORT_GROUPS: usize = 3;

/// Per-command examples, shown after the command's own help.
const COMMAND_EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    (
        "create",
        &[
            (
                "gw create feat-login -b feat/login -r api,web",
                "Name, branch and repositories",
            ),
            (
                "gw create -b fix/token -p backend",
                "Repositories of a preset; name from the branch",
            ),
            (
                "gw create -b feat/x --track -r api",
                "Check out origin/feat/x where it exists",
            ),
            (
                "gw create -b feat/y -r git@host:org/new.git",
                "A URL is cloned into the first repo dir first",
            ),
            ("gw create", "Asks for everything (on a terminal)"),
        ],
    ),
    (
        "go",
        &[
            (
                "gw go feat-login",
                "cd into the workspace (with `eval \"$(gw shell-init)\"`)",
            ),
            ("gw go", "Pick one (type to filter)"),
            ("cd \"$(gw go feat-x)\"", "Without the shell integration"),
            ("gw go --back", "Back to where the repositories live"),
        ],
    ),
    (
        "delete",
        &[
            ("gw delete feat-login", "Refuses while work is uncommitted"),
            ("gw delete feat-login --force", "Discards it"),
            ("gw delete feat-login --dry-run", "What it would do"),
            (
                "gw delete",
                "Pick several (type to filter, space to select)",
            ),
            ("gw list -o name | grep old- | gw delete --stdin --yes", ""),
        ],
    ),
    (
        "status",
        &[
            ("gw status", "The workspace you are in (a picker elsewhere)"),
            ("gw status feat-login --format json", ""),
        ],
    ),
    (
        "sync",
        &[
            (
                "gw sync",
                "Rebase every repository of this workspace onto its base",
            ),
            ("gw sync feat-login --dry-run", "What it would rebase"),
        ],
    ),
    (
        "list",
        &[
            (
                "gw list",
                "Every workspace (the one you are in is marked *)",
            ),
            ("gw list -s", "With each one's worktrees summarised"),
            ("gw list -o name", "Just the names, for scripts"),
        ],
    ),
    (
        "run",
        &[
            (
                "gw run",
                "Every repository's .grove.toml `run`, each on its own ports",
            ),
            (
                "gw run feat-x --timeout 30s --format json",
                "A bounded smoke check, for agents",
            ),
            ("gw run -- git status", "One command in every repository"),
            (
                "gw run -r web -- 'echo $PORT $GROVE_PORT_API_HTTP'",
                "A shell line in one",
            ),
        ],
    ),
    (
        "env",
        &[
            (
                "eval \"$(gw env)\"",
                "The workspace's ports in this shell (or in .envrc for direnv)",
            ),
            (
                "gw env -r web --format dotenv > .env.local",
                "What web's processes are told",
            ),
            ("gw env feat-x --format json", ""),
        ],
    ),
    (
        "shell-init",
        &[
            ("eval \"$(gw shell-init bash)\"", "In ~/.bashrc"),
            ("eval \"$(gw shell-init zsh)\"", "In ~/.zshrc"),
            (
                "gw shell-init fish | source",
                "In ~/.config/fish/config.fish",
            ),
            (
                "gw shell-init nu | save -f ~/.grove.nu",
                "Then `source ~/.grove.nu` in config.nu",
            ),
        ],
    ),
    (
        "completions",
        &[
            ("source <(gw completions bash)", "In ~/.bashrc"),
            ("source <(gw completions zsh)", "In ~/.zshrc"),
            (
                "gw completions fish | source",
                "In ~/.config/fish/config.fish",
            ),
            (
                "gw completions nu | save -f ~/.gw-completions.nu",
                "Then `source` it in config.nu",
            ),
        ],
    ),
    (
        "schema",
        &[
            ("gw schema", "Every schema and what it describes"),
            (
                "gw schema status --format json",
                "The result of `gw status`, in the envelope",
            ),
            (
                "gw schema config > ~/.grove/config.schema.json",
                "Then `#:schema ./config.schema.json` atop config.toml (Taplo and Tombi complete keys, flag misspellings)",
            ),
        ],
    ),
    (
        "skill",
        &[
            (
                "mkdir -p ~/.claude/skills/grove && gw skill > ~/.claude/skills/grove/SKILL.md",
                "Install the skill where Claude Code finds it",
            ),
            ("gw skill --format json", "Its name, description and text"),
        ],
    ),
    (
        "man",
        &[
            ("gw man | man -l -", "Read gw's manual page"),
            ("gw man create | man -l -", "The page of `gw create`"),
        ],
    ),
];

/// The widest help `gw` lays out: wider is hard to read.
pub const MAX_WIDTH: usize = 100;

/// `gw`'s clap command: the derived grammar with grouped help, examples and completions,
/// its help laid out for a terminal of `width` columns (at most [`MAX_WIDTH`]).
pub fn command_at(width: usize) -> clap::Command {
    let width = width.clamp(40, MAX_WIDTH);
    let mut cmd = Cli::command().term_width(width);
    for (name, examples) in COMMAND_EXAMPLES {
        cmd = cmd.mut_subcommand(*name, |c| c.after_help(examples_section(examples, width)));
    }
    let template = format!(
        "{{about-with-newline}}\n{}{{usage}}\n\n{}{}\n{{options}}\n\n{}\n\n{}",
        bold("Usage: "),
        groups(&cmd, GROUPS, width),
        bold("Global options:"),
        examples_section(EXAMPLES, width),
        wrap(FOOTER, width).join("\n"),
    );
    cmd = cmd.help_template(template);
    cmd = cmd.add(SubcommandCandidates::new(complete::plugins));
    cmd = cmd.mut_subcommand("plan", hide_dry_run);
    candidates(cmd, &[])
}

/// `gw`'s clap command, laid out for the widest terminal.
pub fn command() -> clap::Command {
    command_at(MAX_WIDTH)
}

/// What `gw` alone prints: the everyday commands and where to read about the rest, short
/// enough for a 40-row screen (`gw help` is the whole of it).
pub fn overview(width: usize) -> clap::Command {
    let width = width.clamp(40, MAX_WIDTH);
    let cmd = Cli::command().term_width(width);
    let template = format!(
        "{{about-with-newline}}\n{}{{usage}}\n\n{}{}",
        bold("Usage: "),
        groups(&cmd, &GROUPS[..SHORT_GROUPS], width),
        wrap(SHORT_FOOTER, width).join("\n"),
    );
    cmd.help_template(template)
}

/// A help section of examples, fitted to `width`: each command line, and what it does in a
/// column of its own; a description too long for its line continues in that column, and a
/// command too long for the column gets its description on the lines below. (gw-migrate's
/// help uses it too.)
pub fn examples_section(examples: &[(&str, &str)], width: usize) -> String {
    // The column: after the longest command that leaves room for a description.
    let room = |command: &str| command.len() + 4 + 24 <= width;
    let column = examples
        .iter()
        .filter(|e| room(e.0))
        .map(|e| e.0.len())
        .max()
        .unwrap_or(0)
        + 4;
    let mut out = bold("Examples:");
    for (command, what) in examples {
        out.push_str(&format!("\n  {command}"));
        if what.is_empty() {
            continue;
        }
        let mut lines = wrap(what, width.saturating_sub(column)).into_iter();
        if command.len() + 4 <= column
            && let Some(first) = lines.next()
        {
            out.push_str(&" ".repeat(column - command.len() - 2));
            out.push_str(&first);
        }
        for l in lines {
            out.push_str(&format!("\n{}{l}", " ".repeat(column)));
        }
    }
    out
}

/// `text` broken at spaces into lines of at most `width` columns (a word longer than that
/// is a line of its own).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let len = console::measure_text_width(&line);
        if !line.is_empty() && len + 1 + console::measure_text_width(word) > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// `gw plan COMMAND` takes the command's arguments, `--dry-run` too, but does not show it:
/// a plan changes nothing anyway.
fn hide_dry_run(mut cmd: clap::Command) -> clap::Command {
    if cmd.get_arguments().any(|a| a.get_id() == "dry_run") {
        cmd = cmd
            .mut_arg("dry_run", |a| a.hide(true))
            .mut_arg("out", |a| {
                a.help("Also write the plan document to FILE (for `gw apply FILE`)")
            });
    }
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    for sub in subs {
        cmd = cmd.mut_subcommand(&sub, hide_dry_run);
    }
    cmd
}

/// The subcommands listed in `groups`, aligned, each with its one-line description
/// (wrapped to `width`, continued in its column); with every group, also the commands in
/// none (a new one is never hidden by mistake) and plugins.
fn groups(cmd: &clap::Command, groups: &[(&str, &[&str])], width: usize) -> String {
    let visible: Vec<&clap::Command> = cmd.get_subcommands().filter(|c| !c.is_hide_set()).collect();
    let name_width = visible
        .iter()
        .map(|c| c.get_name().len())
        .max()
        .unwrap_or(0);
    let column = name_width + 4;
    let line = |name: &str, about: &str| {
        let mut out = format!("  {name:<name_width$}  ");
        for (i, l) in wrap(about, width.saturating_sub(column)).iter().enumerate() {
            if i > 0 {
                out.push_str(&" ".repeat(column));
            }
            out.push_str(l);
            out.push('\n');
        }
        out
    };
    let about = |c: &clap::Command| {
        let about = c.get_about().map(|a| a.to_string()).unwrap_or_default();
        // Aliases as clap shows them.
        let aliases: Vec<&str> = c.get_visible_aliases().collect();
        match aliases.len() {
            0 => about,
            1 => format!("{about} [alias: {}]", aliases[0]),
            _ => format!("{about} [aliases: {}]", aliases.join(", ")),
        }
    };
    let mut out = String::new();
    for (title, names) in groups {
        out.push_str(&format!("{}\n", bold(&format!("{title}:"))));
        for name in *names {
            if let Some(c) = visible.iter().find(|c| c.get_name() == *name) {
                out.push_str(&line(c.get_name(), &about(c)));
            }
        }
        out.push('\n');
    }
    if groups.len() < GROUPS.len() {
        return out;
    }
    let others: Vec<&&clap::Command> = visible
        .iter()
        .filter(|c| {
            !GROUPS
                .iter()
                .any(|(_, names)| names.contains(&c.get_name()))
        })
        .collect();
    if !others.is_empty() {
        out.push_str(&format!("{}\n", bold("Other commands:")));
        for c in others {
            out.push_str(&line(c.get_name(), &about(c)));
        }
        out.push('\n');
    }
    out.push_str(&line(
        "<plugin>",
        "Any other command runs the plugin gw-<command>",
    ));
    out
}

/// A heading, bold where clap shows colour (clap strips the escapes where it does not).
pub fn bold(s: &str) -> String {
    let style = anstyle::Style::new().bold().underline();
    format!("{}{s}{}", style.render(), style.render_reset())
}

/// The commands whose positional NAME (or NAMES) is an existing workspace.
const WORKSPACE_COMMANDS: &[&str] = &[
    "status",
    "sync",
    "reset",
    "add-repo",
    "remove-repo",
    "rename",
    "go",
    "delete",
    "show",
    "run",
    "env",
];

/// Attaches completion candidates to the arguments of `cmd` (reached by `path`) and its
/// subcommands.
fn candidates(mut cmd: clap::Command, path: &[&str]) -> clap::Command {
    let name = cmd.get_name().to_string();
    let ids: Vec<String> = cmd
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .collect();
    for id in ids {
        let found = match (name.as_str(), id.as_str()) {
            ("show" | "remove", "name") if path.last() == Some(&"preset") => {
                Some(ArgValueCandidates::new(complete::presets))
            }
            ("remove" | "upgrade", "name") if path.last() == Some(&"plugin") => {
                Some(ArgValueCandidates::new(complete::plugins))
            }
            ("restore", "name") => Some(ArgValueCandidates::new(complete::trashed)),
            (n, "name" | "names") if WORKSPACE_COMMANDS.contains(&n) => {
                Some(ArgValueCandidates::new(complete::workspaces))
            }
            (_, "repos") | ("env", "repo") => Some(ArgValueCandidates::new(complete::repos)),
            (_, "preset") => Some(ArgValueCandidates::new(complete::presets)),
            _ => None,
        };
        if let Some(c) = found {
            cmd = cmd.mut_arg(&id, |a| a.add(c));
        }
    }
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    let mut here = path.to_vec();
    here.push(&name);
    for sub in subs {
        cmd = cmd.mut_subcommand(&sub, |c| candidates(c, &here));
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_fit_the_width_and_keep_their_column() {
        for width in [40, 60, 80, 100] {
            for (_, examples) in COMMAND_EXAMPLES {
                let text = examples_section(examples, width);
                for line in text.lines().skip(1) {
                    let w = console::measure_text_width(line);
                    // A command longer than the width is a line of its own, whole.
                    let whole = examples.iter().any(|(c, _)| line.trim() == *c);
                    assert!(w <= width || whole, "{width}: {line:?}\n{text}");
                }
            }
        }
        assert_eq!(wrap("a bb ccc dddd", 6), ["a bb", "ccc", "dddd"]);
        assert_eq!(wrap("", 10), [""]);
    }
}
