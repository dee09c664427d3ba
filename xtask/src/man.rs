//! `cargo xtask man [DIR]`: the man pages of `gw` (clap_mangen, as `gw man` prints them),
//! one for `gw` and one per command (`gw-create.1`, `gw-preset-add.1`, …), into
//! `target/man/` by default.

use std::path::{Path, PathBuf};

use crate::util;

pub const USAGE: &str = "usage: cargo xtask man [DIR]

Writes gw.1 and a page per command (gw-create.1, gw-preset-add.1, …) into DIR
(default: target/man). Read one with `man -l target/man/gw.1`, or put DIR on MANPATH.";

pub fn run(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return Ok(());
    }
    let dir = match args.first() {
        Some(d) => PathBuf::from(d),
        None => util::target_dir(&util::project_root())?.join("man"),
    };
    let pages = write(&dir)?;
    println!("{} man pages in {}", pages.len(), dir.display());
    println!("read them with: man -l {}", dir.join("gw.1").display());
    Ok(())
}

/// Writes every page into `dir` (`gw man [COMMAND]` prints the same, from the same
/// function); returns their paths.
pub fn write(dir: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut written = Vec::new();
    for (name, page) in grove::cli::man::pages().map_err(|e| e.message.clone())? {
        let path = dir.join(format!("{name}.1"));
        std::fs::write(&path, page).map_err(|e| format!("{}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    #[test]
    fn writes_a_page_for_gw_and_each_command() {
        let dir = tempfile::tempdir().unwrap();
        let pages = super::write(dir.path()).unwrap();
        let names: Vec<String> = pages
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        for want in ["gw.1", "gw-create.1", "gw-preset-add.1", "gw-shell-init.1"] {
            assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
        }
        let gw = std::fs::read_to_string(dir.path().join("gw.1")).unwrap();
        assert!(gw.starts_with(".ie"), "roff: {}", &gw[..40]);
        assert!(
            gw.contains("gw\\-create(1)") || gw.contains("gw-create"),
            "{gw}"
        );
        let create = std::fs::read_to_string(dir.path().join("gw-create.1")).unwrap();
        assert!(create.contains("\\-\\-branch"), "{create}");
    }
}
