//! The ignore rules the status scan reads from disk (`.gitignore`, `info/exclude`; parsed
//! by gix, applied by `git/scan/ignore.rs` as git applies them), through
//! `git::ignored_by_rules`.
//!
//! The input is a path on the first line (a directory when it ends with `/`), then the
//! worktree's `.gitignore`, then, after a NUL byte, `info/exclude`. Checked: a last rule
//! `*` ignores everything and a last rule `!*` nothing; rules read from `info/exclude`
//! decide a path as the same rules read from the worktree's `.gitignore` do; and whatever
//! is inside an ignored directory is ignored.
#![no_main]

use grove::git::ignored_by_rules as ignored;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (first, rest) = match data.iter().position(|b| *b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let (rules, exclude) = match rest.iter().position(|b| *b == 0) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[][..]),
    };
    let is_dir = first.ends_with(b"/");
    let path = first.strip_suffix(b"/").unwrap_or(first);
    // A path as the walk gives one: components that are names.
    if path.is_empty()
        || path
            .split(|b| *b == b'/')
            .any(|c| c.is_empty() || c == b"." || c == b".." || c.contains(&0))
    {
        return;
    }
    let answer = ignored(exclude, rules, path, is_dir);

    let with = |last: &[u8]| [rules, b"\n", last, b"\n"].concat();
    assert!(ignored(exclude, &with(b"*"), path, is_dir), "`*` last");
    assert!(!ignored(exclude, &with(b"!*"), path, is_dir), "`!*` last");

    if exclude.is_empty() {
        assert_eq!(
            ignored(rules, b"", path, is_dir),
            answer,
            "the rules as info/exclude"
        );
    }
    if is_dir && answer {
        let inside = [path, b"/x"].concat();
        assert!(
            ignored(exclude, rules, &inside, false),
            "inside an ignored directory"
        );
    }
});
