//! git's answer, read from `git status --porcelain=v2 -z --no-renames` without letting git
//! write the index (`GIT_OPTIONAL_LOCKS=0`), in the short-status form grove reports.

use super::World;

/// What git says about the worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// With `--untracked-files=normal`.
    pub normal: Vec<String>,
    /// As the repository's configuration says (`status.showUntrackedFiles`).
    pub shown: Vec<String>,
    /// `--ignored=traditional`'s `!!` paths.
    pub ignored: Vec<String>,
    /// What git warned about on stderr (a directory it could not open, a path it could not
    /// `lstat`).
    pub warnings: Vec<String>,
}

impl View {
    pub fn of(w: &mut World) -> Result<View, String> {
        let base = ["status", "--porcelain=v2", "-z", "--no-renames"];
        let normal = w.git_status(&[&base[..], &["--untracked-files=normal"]].concat())?;
        let shown = w.git_status(&base)?;
        let ignored = w.git_status(
            &[
                &base[..],
                &["--untracked-files=normal", "--ignored=traditional"],
            ]
            .concat(),
        )?;
        let mut warnings: Vec<String> = normal
            .1
            .lines()
            .filter(|l| {
                l.contains("Permission denied")
                    || l.starts_with("warning: could not open directory")
                    || l.contains("unable to access")
            })
            // A rules file that is a symbolic link git does not follow (ELOOP from its
            // O_NOFOLLOW open): it warns and reads no rules there, which hides nothing from
            // its listing; the lines compare what either side made of it.
            .filter(|l| !(l.contains("Too many levels of symbolic links") && rules_file(l)))
            .map(str::to_string)
            .collect();
        warnings.sort();
        warnings.dedup();
        Ok(View {
            normal: lines(&normal.0, false),
            shown: lines(&shown.0, false),
            ignored: lines(&ignored.0, true),
            warnings,
        })
    }
}

/// Whether git's warning is about a `.gitignore` or a `.gitattributes`.
fn rules_file(warning: &str) -> bool {
    [".gitignore'", ".gitattributes'"]
        .iter()
        .any(|name| warning.contains(&format!("/{name}")) || warning.contains(&format!("'{name}")))
}

/// Whether git listed an entry without a path: git itself wrote an index it cannot read
/// back (seen with a split index, `index.skipHash` and a fake repository whose `.git` is
/// a link to the real git directory, under `git reset --hard`, with no grove involved).
pub fn broken_index(view: &View) -> bool {
    view.normal.iter().any(|l| l.len() <= 3)
}

/// Short-status lines (`XY path`, `?? path`), sorted by path, from porcelain v2 records; or
/// the ignored paths alone.
fn lines(out: &[u8], ignored: bool) -> Vec<String> {
    let mut records = out.split(|b| *b == 0).filter(|r| !r.is_empty());
    let mut lines = Vec::new();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    while let Some(r) = records.next() {
        let field = |n: usize| -> Option<&[u8]> { r.split(|b| *b == b' ').nth(n) };
        match (r.first(), ignored) {
            (Some(b'!'), true) => lines.push(text(&r[2..])),
            (_, true) => {}
            (Some(b'?'), false) => lines.push(format!("?? {}", text(&r[2..]))),
            (Some(b'1'), false) => {
                let xy = text(field(1).unwrap_or(b".."));
                let path = r.splitn(9, |b| *b == b' ').nth(8).unwrap_or_default();
                lines.push(format!("{} {}", xy.replace('.', " "), text(path)));
            }
            (Some(b'u'), false) => {
                let xy = text(field(1).unwrap_or(b"UU"));
                let path = r.splitn(11, |b| *b == b' ').nth(10).unwrap_or_default();
                lines.push(format!("{xy} {}", text(path)));
            }
            (Some(b'2'), false) => {
                // Renames are off; a copy record would carry a second path.
                records.next();
            }
            _ => {}
        }
    }
    sort(&mut lines, ignored);
    lines
}

/// Sorts short-status lines by path (then the line), or plain paths.
pub fn sort(lines: &mut [String], plain: bool) {
    if plain {
        lines.sort();
    } else {
        lines.sort_by(|a, b| a.get(3..).cmp(&b.get(3..)).then(a.cmp(b)));
    }
}

/// The lines only one side has, or `None` when they agree.
pub fn differences(gw: &[String], git: &[String]) -> Option<String> {
    let mut gw = gw.to_vec();
    let mut git = git.to_vec();
    sort(&mut gw, false);
    sort(&mut git, false);
    if gw == git {
        return None;
    }
    let only = |a: &[String], b: &[String]| -> Vec<String> {
        a.iter().filter(|l| !b.contains(l)).cloned().collect()
    };
    Some(format!(
        "grove only: {:?}\ngit only:   {:?}",
        only(&gw, &git),
        only(&git, &gw)
    ))
}

/// The paths grove reports modified in the worktree (`Y` = `M`) where git's line for the
/// same path has no worktree change, the rest of the line being equal: the deliberate
/// difference, when the content differs.
pub fn only_worktree_modified(gw: &[String], git: &[String]) -> Vec<String> {
    gw.iter()
        .filter(|l| l.len() > 3 && l.as_bytes()[1] == b'M' && !l.starts_with("??"))
        .filter_map(|l| {
            let path = &l[3..];
            let x = l.as_bytes()[0];
            let theirs = git
                .iter()
                .find(|g| g.len() > 3 && &g[3..] == path && !g.starts_with("??"));
            match theirs {
                None if x == b' ' => Some(path.to_string()),
                Some(g) if g.as_bytes()[0] == x && g.as_bytes()[1] == b' ' => {
                    Some(path.to_string())
                }
                _ => None,
            }
        })
        .collect()
}

/// `gw`'s lines with the deliberate differences taken back to git's.
pub fn without_deliberate(gw: &[String], git: &[String]) -> Vec<String> {
    let paths = only_worktree_modified(gw, git);
    gw.iter()
        .filter_map(|l| {
            if l.len() > 3 && !l.starts_with("??") && paths.iter().any(|p| *p == l[3..]) {
                let x = l.as_bytes()[0];
                (x != b' ').then(|| format!("{}  {}", x as char, &l[3..]))
            } else {
                Some(l.clone())
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_v2_becomes_short_lines() {
        let out = b"1 .M N... 100644 100644 100644 a a f\0\
                    u AA N... 000000 100644 100644 100644 0 a b both\0\
                    1 DA N... 100644 000000 100644 a 0 g\0\
                    ? new dir/\0! ign/\0";
        assert_eq!(
            lines(out, false),
            ["AA both", " M f", "DA g", "?? new dir/"]
        );
        assert_eq!(lines(out, true), ["ign/"]);
    }

    #[test]
    fn only_a_worktree_modification_git_lacks_is_a_candidate() {
        let git = vec!["M  a".to_string(), "?? b".to_string()];
        let gw = vec!["MM a".to_string(), "?? b".to_string(), " M c".to_string()];
        assert_eq!(only_worktree_modified(&gw, &git), ["a", "c"]);
        assert_eq!(without_deliberate(&gw, &git), ["M  a", "?? b"]);
        assert!(differences(&without_deliberate(&gw, &git), &git).is_none());
        // A letter git has differently is not.
        let git = vec![" T a".to_string()];
        let gw = vec![" M a".to_string()];
        assert!(only_worktree_modified(&gw, &git).is_empty());
    }
}
