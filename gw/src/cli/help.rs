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
    ("When something is wrong", &["bug-report"]),
];

const EXAMPLES: &str = "\
Examples:
  gw init ~/src                                  Find the repositories under ~/src
  gw create feat-login -b feat/login -r api,web  A workspace with two repositories
  eval \"$(gw shell-init)\"                        Let `gw go` and `gw create` change directory
  gw go feat-login                               Go to a workspace (a picker without NAME)
  gw status                                      The workspace you are in, live
  gw delete feat-login                           Refuses while work is uncommitted
  gw context --format json                       Where am I (for agents; every command takes --format json)

`gw COMMAND --help` explains each command; `man gw` after `cargo xtask man`.";

/// Per-command examples, shown after the command's own help.
const COMMAND_EXAMPLES: &[(&str, &str)] = &[
    (
        "create",
        "gw create feat-login -b feat/login -r api,web   Name, branch and repositories
  gw create -b fix/token -p backend               Repositories of a preset; name from the branch
  gw create -b feat/x --track -r api              Check out origin/feat/x where it exists
  gw create -b feat/y -r git@host:org/new.git     A URL is cloned into the first repo dir first
  gw create                                       Asks for everything (on a terminal)",
    ),
    (
        "go",
        "gw go feat-login        cd into the workspace (with `eval \"$(gw shell-init)\"`)
  gw go                   Pick one (type to filter)
  cd \"$(gw go feat-x)\"    Without the shell integration
  gw go --back            Back to where the repositories live",
    ),
    (
        "delete",
        "gw delete feat-login               Refuses while work is uncommitted
  gw delete feat-login --force       Discards it
  gw delete                          Pick several (type to filter, space to select)
  gw list -o name | grep old- | gw delete --stdin --yes",
    ),
    (
        "status",
        "gw status               The workspace you are in (a picker elsewhere)
  gw status feat-login --format json",
    ),
    (
        "sync",
        "gw sync                 Rebase every repository of this workspace onto its base
  gw sync feat-login",
    ),
    (
        "list",
        "gw list                 Every workspace (the one you are in is marked *)
  gw list -s              With each one's worktrees summarised
  gw list -o name         Just the names, for scripts",
    ),
    (
        "run",
        "gw run                  Every repository's .grove.toml `run`, each on its own ports
  gw run feat-x --timeout 30s --format json   A bounded smoke check, for agents
  gw run -- git status    One command in every repository
  gw run -r web -- 'echo $PORT $GROVE_PORT_API_HTTP'   A shell line in one",
    ),
    (
        "env",
        "eval \"$(gw env)\"        The workspace's ports in this shell (or in .envrc for direnv)
  gw env -r web --format dotenv > .env.local   What web's processes are told
  gw env feat-x --format json",
    ),
    (
        "shell-init",
        "eval \"$(gw shell-init bash)\"        In ~/.bashrc
  eval \"$(gw shell-init zsh)\"         In ~/.zshrc
  gw shell-init fish | source         In ~/.config/fish/config.fish
  gw shell-init nu | save -f ~/.grove.nu   Then `source ~/.grove.nu` in config.nu",
    ),
    (
        "completions",
        "source <(gw completions bash)       In ~/.bashrc
  source <(gw completions zsh)        In ~/.zshrc
  gw completions fish | source        In ~/.config/fish/config.fish
  gw completions nu | save -f ~/.gw-completions.nu   Then `source` it in config.nu",
    ),
    (
        "schema",
        "gw schema                       Every schema and what it describes
  gw schema status --format json  The result of `gw status`, in the envelope
  gw schema config > ~/.grove/config.schema.json
                                  Then `#:schema ./config.schema.json` atop config.toml
                                  (Taplo and Tombi complete keys, flag misspellings)",
    ),
    (
        "skill",
        "mkdir -p ~/.claude/skills/grove && gw skill > ~/.claude/skills/grove/SKILL.md
                        Install the skill where Claude Code finds it
  gw skill --format json  Its name, description and text",
    ),
];

/// `gw`'s clap command: the derived grammar with grouped help, examples and completions.
pub fn command() -> clap::Command {
    let mut cmd = Cli::command();
    for (name, examples) in COMMAND_EXAMPLES {
        cmd = cmd.mut_subcommand(*name, |c| {
            c.after_help(format!("{}\n  {examples}", bold("Examples:")))
        });
    }
    let template = format!(
        "{{about-with-newline}}\n{}{{usage}}\n\n{}\n{}\n{{options}}\n\n{}",
        bold("Usage: "),
        groups(&cmd),
        bold("Options:"),
        EXAMPLES.replacen("Examples:", &bold("Examples:"), 1),
    );
    cmd = cmd.help_template(template);
    cmd = cmd.add(SubcommandCandidates::new(complete::plugins));
    cmd = cmd.mut_subcommand("plan", hide_dry_run);
    candidates(cmd, &[])
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

/// The subcommands listed in [`GROUPS`], aligned, each with its one-line description.
fn groups(cmd: &clap::Command) -> String {
    let visible: Vec<&clap::Command> = cmd.get_subcommands().filter(|c| !c.is_hide_set()).collect();
    let width = visible
        .iter()
        .map(|c| c.get_name().len())
        .max()
        .unwrap_or(0);
    let line = |c: &clap::Command| {
        let about = c.get_about().map(|a| a.to_string()).unwrap_or_default();
        // Aliases as clap shows them.
        let aliases: Vec<&str> = c.get_visible_aliases().collect();
        let aliases = match aliases.len() {
            0 => String::new(),
            1 => format!(" [alias: {}]", aliases[0]),
            _ => format!(" [aliases: {}]", aliases.join(", ")),
        };
        format!("  {:<width$}  {about}{aliases}\n", c.get_name())
    };
    let mut out = String::new();
    for (title, names) in GROUPS {
        out.push_str(&format!("{}\n", bold(&format!("{title}:"))));
        for name in *names {
            if let Some(c) = visible.iter().find(|c| c.get_name() == *name) {
                out.push_str(&line(c));
            }
        }
        out.push('\n');
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
            out.push_str(&line(c));
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "  {:<width$}  Any other command runs the plugin gw-<command>\n",
        "<plugin>"
    ));
    out
}

/// A heading, bold where clap shows colour (clap strips the escapes where it does not).
fn bold(s: &str) -> String {
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
