//! What is staged: the paths whose index entry differs from HEAD's tree, with git's `X`
//! letter, as `git status` compares them (intent-to-add entries as git sees them).

use super::index_tree::index_tree;
use super::{Error, read::err};

/// Paths whose index entry differs from HEAD's tree, with git's `X` letter.
pub(super) fn staged_changes(
    repo: &gix::Repository,
    head_tree: gix::ObjectId,
    index: &gix::index::File,
) -> Result<Vec<(String, char)>, Error> {
    use gix::diff::index::ChangeRef as C;
    if index_tree(index) == Some(head_tree) {
        // The entries make HEAD's tree: nothing is staged. Hashing the trees the entries
        // make costs a fraction of reading HEAD's trees and comparing them entry by entry.
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    repo.tree_index_status(
        &head_tree,
        index,
        None,
        gix::status::tree_index::TrackRenames::Disabled,
        |change, _, _| {
            let x = match change {
                C::Addition { .. } => 'A',
                C::Deletion { .. } => 'D',
                C::Modification {
                    previous_entry_mode,
                    entry_mode,
                    ..
                } => {
                    if kind(previous_entry_mode) == kind(entry_mode) {
                        'M'
                    } else {
                        'T'
                    }
                }
                C::Rewrite { .. } => 'R',
            };
            out.push((change.location().to_string(), x));
            Ok(gix::diff::index::Action::Continue(()))
        },
    )
    .map_err(err(repo.workdir().unwrap_or(repo.git_dir())))?;
    // An intent-to-add entry is not in the index as far as HEAD is concerned (git's
    // `ita_invisible_in_index`): nothing staged when HEAD lacks the path, its deletion
    // staged when HEAD has it (`git rm --cached f; git add -N f` is `DA`).
    let intended: Vec<&gix::bstr::BStr> = index
        .entries()
        .iter()
        .filter(|e| e.stage_raw() == 0 && e.flags.contains(gix::index::entry::Flags::INTENT_TO_ADD))
        .map(|e| e.path(index))
        .collect();
    if !intended.is_empty() {
        out.retain(|(p, _)| !intended.iter().any(|i| *i == p.as_str()));
        let tree = repo
            .find_tree(head_tree)
            .map_err(|e| Error::read(repo.git_dir(), e))?;
        // Unless git passes over its directory: one whose tree the index caches, valid, as
        // HEAD's (`git reset --hard` keeps an intent-to-add entry of HEAD's blob, an empty
        // file, and caches HEAD's trees: ` A`, seed 20270689). Only here: a change of an
        // entry under such a tree (a writer that left the cache as it was) git would not
        // see, and grove does.
        let passed = cached_as_heads(repo, &tree, index);
        for path in intended {
            let under = |dir: &Vec<u8>| {
                path.strip_prefix(dir.as_slice())
                    .is_some_and(|rest| rest.first() == Some(&b'/'))
            };
            if !passed.iter().any(under)
                && tree
                    .lookup_entry(path.split(|b| *b == b'/'))
                    .ok()
                    .flatten()
                    .is_some()
            {
                out.push((path.to_string(), 'D'));
            }
        }
    }
    Ok(out)
}

/// The directories git's comparison of HEAD with the index passes over: those whose tree
/// the index caches, valid, as HEAD's tree `head` has it (`unpack_trees`, with
/// `cache_tree_matches_traversal`). Never the root: its files are compared one by one.
fn cached_as_heads(
    repo: &gix::Repository,
    head: &gix::Tree<'_>,
    index: &gix::index::File,
) -> Vec<Vec<u8>> {
    fn walk(
        repo: &gix::Repository,
        cached: &[gix::index::extension::Tree],
        head: &gix::Tree<'_>,
        prefix: &[u8],
        out: &mut Vec<Vec<u8>>,
    ) {
        for child in cached {
            let Some(entry) = head.find_entry(child.name.as_slice()) else {
                continue;
            };
            if !entry.mode().is_tree() {
                continue;
            }
            let path = if prefix.is_empty() {
                child.name.to_vec()
            } else {
                [prefix, b"/", &child.name].concat()
            };
            if child.num_entries.is_some() && entry.oid() == child.id {
                out.push(path);
            } else if let Ok(sub) = repo.find_tree(entry.object_id()) {
                walk(repo, &child.children, &sub, &path, out);
            }
        }
    }
    let mut out = Vec::new();
    if let Some(root) = index.tree() {
        walk(repo, &root.children, head, b"", &mut out);
    }
    out
}

/// What an index mode holds, for git's `T`: a file (executable or not), a link, a commit.
fn kind(mode: gix::index::entry::Mode) -> u8 {
    use gix::index::entry::Mode;
    if mode == Mode::SYMLINK {
        1
    } else if mode == Mode::COMMIT {
        2
    } else {
        0
    }
}
