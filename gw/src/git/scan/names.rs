//! The names the scan compares: the index's, directory by directory, and a directory's
//! listing, both sorted the same way.

use std::os::fd::BorrowedFd;

use rustix::fs::{Dir as DirReader, FileType};

use rustix::io::Errno;

/// A directory the index holds files in (or under).
pub(super) struct Dir {
    /// Relative to the worktree, without a trailing `/`; empty for the worktree itself.
    pub(super) path: Vec<u8>,
    /// The index positions of the entries directly in it, in the order of their names.
    pub(super) files: Vec<usize>,
    /// The names the index holds directly in it, sorted.
    pub(super) names: Vec<Tracked>,
}

/// A name the index holds in a directory: bytes `start..end` of entry `entry`'s path.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Tracked {
    pub(super) key: u64,
    pub(super) entry: usize,
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) dir: bool,
}

/// The first eight bytes of `name`, big-endian, zero-padded: names compare as their keys
/// unless the keys are equal (no name holds a zero byte), which saves most byte-by-byte
/// comparisons in a directory of similar names.
pub(super) fn key(name: &[u8]) -> u64 {
    let mut b = [0; 8];
    let n = name.len().min(8);
    b[..n].copy_from_slice(&name[..n]);
    u64::from_be_bytes(b)
}

pub(super) fn order(a: (u64, &[u8]), b: (u64, &[u8])) -> std::cmp::Ordering {
    a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1))
}

/// The directories of the index's entries, parents before their children.
pub(super) fn directories(index: &gix::index::File) -> Vec<Dir> {
    let mut dirs = vec![Dir {
        path: Vec::new(),
        files: Vec::new(),
        names: Vec::new(),
    }];
    // The chain of directories (positions in `dirs`) holding the previous entry.
    let mut chain: Vec<usize> = vec![0];
    let entries = index.entries();
    for (i, entry) in entries.iter().enumerate() {
        let path: &[u8] = entry.path(index).as_ref();
        let (dir, name) = match path.iter().rposition(|b| *b == b'/') {
            Some(slash) => (&path[..slash], &path[slash + 1..]),
            None => (&path[..0], path),
        };
        while let Some(&top) = chain.last() {
            let p = &dirs[top].path;
            if p.is_empty() || dir == p.as_slice() || (dir.starts_with(p) && dir[p.len()] == b'/') {
                break;
            }
            chain.pop();
        }
        let mut top = *chain.last().unwrap_or(&0);
        while dirs[top].path.len() < dir.len() {
            let start = if dirs[top].path.is_empty() {
                0
            } else {
                dirs[top].path.len() + 1
            };
            let end = dir[start..]
                .iter()
                .position(|b| *b == b'/')
                .map_or(dir.len(), |n| start + n);
            dirs[top].names.push(Tracked {
                key: key(&dir[start..end]),
                entry: i,
                start,
                end,
                dir: true,
            });
            dirs.push(Dir {
                path: dir[..end].to_vec(),
                files: Vec::new(),
                names: Vec::new(),
            });
            top = dirs.len() - 1;
            chain.push(top);
        }
        let d = &mut dirs[top];
        d.files.push(i);
        let start = path.len() - name.len();
        let same = |t: &Tracked| !t.dir && entries[t.entry].path(index)[t.start..t.end] == name;
        if !d.names.last().is_some_and(same) {
            d.names.push(Tracked {
                key: key(name),
                entry: i,
                start,
                end: path.len(),
                dir: false,
            });
        }
    }
    for d in &mut dirs {
        let name = |t: &Tracked| &entries[t.entry].path(index)[t.start..t.end];
        d.names.sort_unstable_by(|a, b| {
            order((a.key, name(a)), (b.key, name(b))).then(a.dir.cmp(&b.dir))
        });
        d.names
            .dedup_by(|a, b| a.dir == b.dir && name(a) == name(b));
    }
    dirs
}

/// The names in a directory (without `.`, `..` and `.git`), sorted, in one buffer.
pub(super) struct Listing {
    pub(super) bytes: Vec<u8>,
    pub(super) names: Vec<Listed>,
    /// Whether `.git` is there.
    pub(super) git: bool,
}

#[derive(Clone, Copy)]
pub(super) struct Listed {
    pub(super) key: u64,
    pub(super) start: u32,
    pub(super) end: u32,
    /// As the listing gives it (`Unknown` on some file systems).
    pub(super) kind: FileType,
}

impl Listing {
    /// Lists the directory open at `fd`.
    pub(super) fn read(fd: BorrowedFd<'_>) -> Result<Listing, Errno> {
        // A descriptor opened only to reach what is inside (the directory could not be
        // opened for reading) cannot be listed: that is the permission it lacked.
        let denied = |e: Errno| if e == Errno::BADF { Errno::ACCESS } else { e };
        // A duplicate, which the reader owns and closes (`read_from` would open the
        // directory once more).
        let mut reader = rustix::io::dup(fd)
            .and_then(DirReader::new)
            .map_err(denied)?;
        let mut l = Listing {
            bytes: Vec::new(),
            names: Vec::new(),
            git: false,
        };
        while let Some(entry) = reader.read() {
            let entry = entry.map_err(denied)?;
            let name = entry.file_name().to_bytes();
            match name {
                b"." | b".." => {}
                b".git" => l.git = true,
                _ => {
                    let start = l.bytes.len() as u32;
                    l.bytes.extend_from_slice(name);
                    l.names.push(Listed {
                        key: key(name),
                        start,
                        end: l.bytes.len() as u32,
                        kind: entry.file_type(),
                    });
                }
            }
        }
        let bytes = &l.bytes;
        l.names.sort_unstable_by(|a, b| {
            order(
                (a.key, &bytes[a.start as usize..a.end as usize]),
                (b.key, &bytes[b.start as usize..b.end as usize]),
            )
        });
        Ok(l)
    }

    /// The names in the order the directory gave them (the order git reads them in, which
    /// decides where its look into an untracked directory stops).
    pub(super) fn as_listed(&self) -> Vec<&Listed> {
        let mut names: Vec<&Listed> = self.names.iter().collect();
        // Each name's bytes were appended as it came.
        names.sort_unstable_by_key(|n| n.start);
        names
    }

    pub(super) fn name(&self, n: &Listed) -> &[u8] {
        &self.bytes[n.start as usize..n.end as usize]
    }
}
