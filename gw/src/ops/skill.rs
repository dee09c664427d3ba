//! `gw skill`: the agent skill shipped with grove, a `SKILL.md` that teaches a coding agent
//! the machine contract (which command for which job, `--format json`, the codes,
//! `next_actions`, plan and apply). The same file is in every release archive
//! (`skills/grove/SKILL.md`); this prints it, so an agent can read or install the copy
//! that matches the `gw` it drives.

use serde::Serialize;

/// `skills/grove/SKILL.md`, as released.
pub const SKILL_MD: &str = include_str!("../../../skills/grove/SKILL.md");

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SkillReport {
    /// The skill's name (its `name` in the front matter; the directory it is installed
    /// under, e.g. `~/.claude/skills/grove/SKILL.md`).
    pub name: String,
    /// When an agent should use it (its `description`).
    pub description: String,
    /// The whole `SKILL.md`, front matter included.
    pub skill: String,
}

/// The shipped skill.
pub fn skill() -> SkillReport {
    let field = |key: &str| {
        front_matter(SKILL_MD)
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
            .map(|v| v.trim().to_string())
            .unwrap_or_default()
    };
    SkillReport {
        name: field("name"),
        description: field("description"),
        skill: SKILL_MD.to_string(),
    }
}

/// The YAML between the opening and closing `---` lines.
fn front_matter(md: &str) -> &str {
    md.strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---\n"))
        .map_or("", |(fm, _)| fm)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The front matter the Agent Skills format asks for: a lowercase `name` (with
    /// hyphens, at most 64 characters) and a `description` of at most 1,024.
    #[test]
    fn the_skill_has_the_front_matter_agents_read() {
        let s = skill();
        assert_eq!(s.name, "grove");
        assert!(
            s.name.len() <= 64
                && s.name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
            "{}",
            s.name
        );
        assert!(!s.description.is_empty() && s.description.len() <= 1024);
        assert!(!s.description.contains('\n'));
        assert!(s.skill.starts_with("---\nname: grove\n"));
    }

    /// Every code the skill names is one gw returns, with the exit class it gives.
    #[test]
    fn the_skill_names_real_codes_with_their_exit_classes() {
        use crate::error::Code;
        let mut named = 0;
        for line in SKILL_MD.lines().filter(|l| l.starts_with("| `")) {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let (codes, exit) = (cells[1], cells[2]);
            let Ok(exit) = exit.parse::<u8>() else {
                continue;
            };
            for code in codes.split(", ") {
                let code = code.trim_matches('`');
                let known = Code::ALL
                    .iter()
                    .find(|c| c.as_str() == code)
                    .unwrap_or_else(|| panic!("the skill names `{code}`, which gw never returns"));
                assert_eq!(known.exit_code(), exit, "{code}");
                named += 1;
            }
        }
        assert_eq!(named, Code::ALL.len(), "the skill's table lists every code");
    }

    /// Every `gw …` command the skill shows parses as written.
    #[test]
    fn every_command_the_skill_shows_parses() {
        use clap::error::ErrorKind;
        let mut checked = 0;
        for piece in SKILL_MD.split('`').skip(1).step_by(2) {
            let piece = piece.trim();
            for line in piece.lines() {
                let line = line.split(" #").next().unwrap_or(line).trim();
                let Some(rest) = line.strip_prefix("gw ") else {
                    continue;
                };
                let words: Vec<&str> = std::iter::once("gw")
                    .chain(rest.split_whitespace())
                    .collect();
                if words.iter().any(|w| w.contains(['<', '…'])) || words.last() == Some(&"DIR") {
                    continue; // a placeholder, not a command
                }
                match crate::cli::command().try_get_matches_from(&words) {
                    Ok(_) => checked += 1,
                    // A command named in prose (`gw plan takes …`), not shown to be run.
                    Err(e)
                        if words.len() == 2
                            && matches!(
                                e.kind(),
                                ErrorKind::MissingRequiredArgument
                                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                                    | ErrorKind::MissingSubcommand
                            ) => {}
                    Err(e) => panic!("`{line}` does not parse: {e}"),
                }
            }
        }
        assert!(checked >= 20, "only {checked} commands found");
    }
}
