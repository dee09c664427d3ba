//! Trees an index makes, hashed in process: what `git write-tree` would write for a
//! worktree's index (kept in the trash, or live), without writing anything.

use std::path::Path;

use super::read::Repo;

impl Repo {
    /// The tree the index file at `path` (a worktree's, kept elsewhere) would be written as,
    /// hashed in process without writing anything; `None` when it cannot be read or holds
    /// what a tree cannot (a conflict, an intent-to-add file).
    pub fn tree_of_index_file(&self, path: &Path) -> Option<String> {
        if let Some(known) = trailer(path, self.repo.object_hash()).and_then(|c| hashed(&c)) {
            return known.map(|id| id.to_string());
        }
        index_tree(&self.index_at(path)?).map(|id| id.to_string())
    }

    /// The paths the index file at `path` holds in conflict (stages 1–3), once each.
    pub fn conflicts_of_index_file(&self, path: &Path) -> Vec<String> {
        let Some(index) = self.index_at(path) else {
            return Vec::new();
        };
        let mut out: Vec<String> = index
            .entries()
            .iter()
            .filter(|e| e.stage_raw() != 0)
            .map(|e| e.path(&index).to_string())
            .collect();
        out.dedup();
        out
    }

    /// The tree the index file at `index` makes, when the repository holds it already (a
    /// clean worktree's index makes its HEAD's tree): what `git write-tree` would print,
    /// having nothing to write. `None` when it cannot tell.
    pub fn written_tree_of(&self, index: &Path) -> Option<String> {
        let id = index_tree(&self.index_at(index)?)?;
        self.repo.has_object(id).then(|| id.to_string())
    }

    /// The index file at `path`, read as this repository's (its checksum not verified).
    fn index_at(&self, path: &Path) -> Option<gix::index::File> {
        gix::index::File::at(path, self.repo.object_hash(), true, Default::default()).ok()
    }
}

/// The id of the tree the index's entries make (what `git write-tree` would write), or
/// `None` when an entry has no place in a tree (a conflict, an intent-to-add file, a sparse
/// directory) or a tree cannot be hashed.
pub(super) fn index_tree(index: &gix::index::File) -> Option<gix::ObjectId> {
    let checksum = index.checksum().filter(|c| !c.is_null());
    if let Some(known) = checksum.and_then(|c| hashed(&c)) {
        return known;
    }
    let tree = entries_tree(index);
    if let Some(c) = checksum {
        HASHED
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((c, tree));
    }
    tree
}

/// The trees of the index files this process hashed, by the checksum each ends with (a
/// hash of all the bytes before it; none when `index.skipHash` leaves it null): a delete
/// hashes the worktree's index when it inspects it, and again when it keeps it in the
/// trash, unchanged or (another checksum) changed since.
static HASHED: std::sync::Mutex<Vec<(gix::ObjectId, Option<gix::ObjectId>)>> =
    std::sync::Mutex::new(Vec::new());

fn hashed(checksum: &gix::ObjectId) -> Option<Option<gix::ObjectId>> {
    HASHED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .find(|(c, _)| c == checksum)
        .map(|(_, tree)| *tree)
}

/// The checksum the index file at `path` ends with, read without reading the rest; `None`
/// when it has none (null) or cannot be read.
fn trailer(path: &Path, kind: gix::hash::Kind) -> Option<gix::ObjectId> {
    use std::io::{Read, Seek, SeekFrom};
    let len = kind.len_in_bytes();
    let mut file = std::fs::File::open(path).ok()?;
    file.seek(SeekFrom::End(-(len as i64))).ok()?;
    let mut bytes = vec![0; len];
    file.read_exact(&mut bytes).ok()?;
    gix::ObjectId::try_from(bytes.as_slice())
        .ok()
        .filter(|c| !c.is_null())
}

fn entries_tree(index: &gix::index::File) -> Option<gix::ObjectId> {
    let entries = index.entries();
    if entries.iter().any(|e| {
        e.stage_raw() != 0
            || e.flags.contains(gix::index::entry::Flags::INTENT_TO_ADD)
            || e.mode.is_sparse()
    }) {
        return None;
    }
    let mut next = 0;
    let id = tree_under(index, &mut next, b"")?;
    (next == entries.len()).then_some(id)
}

/// Hashes the tree of the entries from `*next` on whose paths start with `prefix` (a
/// directory's path and `/`, or nothing for the root), leaving `*next` at the first entry
/// past them. Index order is tree order: a directory's entries are contiguous, and `a.b`
/// sorts before `a/x` as the tree entry `a.b` before `a/`.
fn tree_under(index: &gix::index::File, next: &mut usize, prefix: &[u8]) -> Option<gix::ObjectId> {
    use gix::index::entry::Mode;
    let entries = index.entries();
    let mut body = Vec::new();
    while let Some(entry) = entries.get(*next) {
        let path: &[u8] = entry.path(index).as_ref();
        let Some(rest) = path.strip_prefix(prefix) else {
            break;
        };
        let (mode, name, id): (&[u8], &[u8], gix::ObjectId) =
            match rest.iter().position(|b| *b == b'/') {
                None => {
                    *next += 1;
                    let mode: &[u8] = match entry.mode {
                        Mode::FILE => b"100644",
                        Mode::FILE_EXECUTABLE => b"100755",
                        Mode::SYMLINK => b"120000",
                        Mode::COMMIT => b"160000",
                        _ => return None,
                    };
                    (mode, rest, entry.id)
                }
                Some(slash) => {
                    let name = &rest[..slash];
                    let sub = [prefix, name, b"/"].concat();
                    (b"40000", name, tree_under(index, next, &sub)?)
                }
            };
        body.extend_from_slice(mode);
        body.push(b' ');
        body.extend_from_slice(name);
        body.push(0);
        body.extend_from_slice(id.as_bytes());
    }
    gix::objs::compute_hash(index.object_hash(), gix::objs::Kind::Tree, &body).ok()
}
