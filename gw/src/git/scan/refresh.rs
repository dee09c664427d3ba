//! Writing refreshed stat data back to the index, as `git status` does, without ever
//! changing what git sees.
//!
//! The index file is patched in place, byte for byte: the stat fields of the entries found
//! unchanged are replaced, every other byte — the version (4 included), every extension
//! (resolve-undo, untracked cache, file-system monitor, ones grove does not know) and the
//! order of entries — stays as git wrote it, and the trailing checksum is computed again
//! (or left zero, as `index.skipHash` writes it). gix's writer is not used because it writes
//! version 2 or 3 only and drops the extensions it does not model.
//!
//! What keeps git seeing every edit:
//! - an entry gets new stat data only when the file was last changed at least a second
//!   before the status began ([`fresh_enough`]): an edit made after the file was read lands
//!   in a later second than the recorded one, which even a git that compares whole seconds
//!   sees;
//! - the written index is newer than the one read, so an entry that was racy in it (its
//!   file changed in the index's second or later) would no longer be compared by content:
//!   each such entry not refreshed gets size 0 ("smudged", as git's `ce_smudge_racily_clean_entry`
//!   does), which makes git — and grove — compare its content again; except one whose file
//!   has another size than it records, which git calls modified without reading it (a
//!   smudged one it would read, and might find unchanged once cleaned: a CRLF file under
//!   `core.autocrlf`), and which git's own write leaves as it is;
//! - nothing is written when there is nothing to refresh, over an index that changed since
//!   it was read, or over a split index (whose entries live in two files).

use gix::index::entry::Stat;

/// Whether the stat data `now` may be written for a file read by a status that began at
/// `started` (seconds since the epoch): the file was last modified at least a whole second
/// before (a second more than the coarse clock file systems stamp with can lag).
pub(crate) fn fresh_enough(now: &Stat, started: i64) -> bool {
    i64::from(now.mtime.secs) < started - 1
}

/// Where an index file's entries and extensions lie.
#[derive(Debug, PartialEq, Eq)]
pub struct Layout {
    pub version: u32,
    /// Each entry's offset and path, in the file's order.
    pub entries: Vec<(usize, Vec<u8>)>,
    /// Each extension's signature.
    pub extensions: Vec<[u8; 4]>,
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Reads the layout of an index file's `bytes` whose object ids are `hash_len` bytes long.
/// Refuses anything it cannot account for to the last byte.
pub fn layout(bytes: &[u8], hash_len: usize) -> Result<Layout, String> {
    if bytes.len() < 12 + hash_len || &bytes[..4] != b"DIRC" {
        return Err("not an index file".into());
    }
    let version = be32(bytes, 4).ok_or("truncated header")?;
    if !(2..=4).contains(&version) {
        return Err(format!("index version {version}"));
    }
    let count = be32(bytes, 8).ok_or("truncated header")? as usize;
    let end = bytes.len() - hash_len;
    let mut entries = Vec::with_capacity(count.min(end / 62));
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let fixed = 40 + hash_len + 2;
        let flags = u16::from_be_bytes(
            bytes
                .get(at + fixed - 2..at + fixed)
                .ok_or("truncated entry")?
                .try_into()
                .map_err(|_| "truncated entry")?,
        );
        let extended = flags & 0x4000 != 0;
        if extended && version < 3 {
            return Err("an extended entry in a version 2 index".into());
        }
        let mut p = at + fixed + if extended { 2 } else { 0 };
        let path = if version == 4 {
            let (strip, len) = varint(bytes.get(p..end).ok_or("truncated entry")?)
                .ok_or("a bad path prefix length")?;
            p += len;
            let strip = usize::try_from(strip).map_err(|_| "a bad path prefix length")?;
            let keep = previous
                .len()
                .checked_sub(strip)
                .ok_or("a path prefix longer than the previous path")?;
            let rest = bytes.get(p..end).ok_or("truncated entry")?;
            let nul = rest
                .iter()
                .position(|b| *b == 0)
                .ok_or("an unterminated path")?;
            let mut path = previous[..keep].to_vec();
            path.extend_from_slice(&rest[..nul]);
            entries.push((at, path.clone()));
            at = p + nul + 1;
            path
        } else {
            let rest = bytes.get(p..end).ok_or("truncated entry")?;
            let nul = rest
                .iter()
                .position(|b| *b == 0)
                .ok_or("an unterminated path")?;
            let named = usize::from(flags & 0x0fff);
            if named < 0x0fff && named != nul {
                return Err("a path whose length is not the one its flags give".into());
            }
            entries.push((at, rest[..nul].to_vec()));
            at += (p - at + nul + 8) & !7;
            rest[..nul].to_vec()
        };
        if at > end {
            return Err("truncated entry".into());
        }
        previous = path;
    }
    let mut extensions = Vec::new();
    while at < end {
        let signature: [u8; 4] = bytes
            .get(at..at + 4)
            .and_then(|s| s.try_into().ok())
            .ok_or("truncated extension")?;
        let size = be32(bytes, at + 4).ok_or("truncated extension")? as usize;
        at = at
            .checked_add(8 + size)
            .filter(|n| *n <= end)
            .ok_or("truncated extension")?;
        extensions.push(signature);
    }
    Ok(Layout {
        version,
        entries,
        extensions,
    })
}

/// git's offset varint (`decode_varint`): its value and how many bytes it took.
fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut i = 0;
    let mut c = *b.first()?;
    let mut val = u64::from(c & 127);
    while c & 128 != 0 {
        i += 1;
        val = val.checked_add(1)?;
        if val >> 57 != 0 {
            return None;
        }
        c = *b.get(i)?;
        val = (val << 7) + u64::from(c & 127);
    }
    Some((val, i + 1))
}

/// The stat fields of the entry at `at`, as the index stores them.
fn stat_at(bytes: &[u8], at: usize) -> Option<Stat> {
    use gix::index::entry::stat::Time;
    let f = |n: usize| be32(bytes, at + 4 * n);
    Some(Stat {
        ctime: Time {
            secs: f(0)?,
            nsecs: f(1)?,
        },
        mtime: Time {
            secs: f(2)?,
            nsecs: f(3)?,
        },
        dev: f(4)?,
        ino: f(5)?,
        uid: f(7)?,
        gid: f(8)?,
        size: f(9)?,
    })
}

fn put_stat(bytes: &mut [u8], at: usize, s: &Stat) {
    let fields = [
        (0, s.ctime.secs),
        (1, s.ctime.nsecs),
        (2, s.mtime.secs),
        (3, s.mtime.nsecs),
        (4, s.dev),
        (5, s.ino),
        (7, s.uid),
        (8, s.gid),
        (9, s.size),
    ];
    for (n, v) in fields {
        bytes[at + 4 * n..at + 4 * n + 4].copy_from_slice(&v.to_be_bytes());
    }
}

/// Why an index is left as it is.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Kept {
    /// Someone else holds its lock.
    Locked,
    /// It is not the index that was read (someone wrote it since).
    Changed,
    /// A split index: its entries live in two files.
    Split,
    /// It could not be read as grove reads indexes.
    Unreadable(String),
}

/// Patches `bytes`, the index file `index` was read from, with the stat data `updates`
/// (entry position, stat), smudging the racy entries not refreshed but those in `resized`
/// (whose files have another size than they record); `Err` when the bytes are not that
/// index. Returns the new bytes.
pub(crate) fn patched(
    mut bytes: Vec<u8>,
    index: &gix::index::File,
    updates: &[(usize, Stat)],
    resized: &[usize],
) -> Result<Vec<u8>, Kept> {
    let hash_len = index.object_hash().len_in_bytes();
    let layout = layout(&bytes, hash_len).map_err(Kept::Unreadable)?;
    if layout.extensions.iter().any(|s| s == b"link") {
        return Err(Kept::Split);
    }
    let entries = index.entries();
    if layout.entries.len() != entries.len() {
        return Err(Kept::Changed);
    }
    // Every entry is the one read: path, object and stat data, byte for byte.
    for (entry, (at, path)) in entries.iter().zip(&layout.entries) {
        let id = &bytes[at + 40..at + 40 + hash_len];
        if path.as_slice() != entry.path(index).as_ref() as &[u8]
            || id != entry.id.as_bytes()
            || stat_at(&bytes, *at) != Some(entry.stat)
        {
            return Err(Kept::Changed);
        }
    }
    let read_secs = index.timestamp().unix_seconds();
    // Entries to leave unsmudged: refreshed, or modified to git by their size.
    let mut kept = vec![false; entries.len()];
    for (i, stat) in updates {
        if let Some((at, _)) = layout.entries.get(*i) {
            put_stat(&mut bytes, *at, stat);
            kept[*i] = true;
        }
    }
    for i in resized {
        if let Some(k) = kept.get_mut(*i) {
            *k = true;
        }
    }
    for (i, entry) in entries.iter().enumerate() {
        let racy = i64::from(entry.stat.mtime.secs) >= read_secs;
        if racy && !kept[i] && entry.stat.size != 0 {
            let at = layout.entries[i].0;
            bytes[at + 36..at + 40].copy_from_slice(&0u32.to_be_bytes());
        }
    }
    let end = bytes.len() - hash_len;
    if bytes[end..].iter().any(|b| *b != 0) {
        let mut hasher = gix::hash::hasher(index.object_hash());
        hasher.update(&bytes[..end]);
        let sum = hasher
            .try_finalize()
            .map_err(|e| Kept::Unreadable(e.to_string()))?;
        bytes[end..].copy_from_slice(sum.as_bytes());
    }
    Ok(bytes)
}

/// Writes `updates` back to the index `index` was read from, under its lock, if it is
/// still that index (see the module and [`patched`]).
pub(crate) fn write(
    index: &gix::index::File,
    updates: &[(usize, Stat)],
    resized: &[usize],
) -> Result<(), Kept> {
    use std::io::Write as _;
    if updates.is_empty() {
        return Ok(());
    }
    let path = index.path();
    let unreadable = |e: &dyn std::fmt::Display| Kept::Unreadable(e.to_string());
    let mut lock = gix::lock::File::acquire_to_update_resource(
        path,
        gix::lock::acquire::Fail::Immediately,
        None,
        // As git writes the index: the lock file's mode from the umask.
        0,
    )
    .map_err(|_| Kept::Locked)?;
    let bytes = std::fs::read(path).map_err(|e| unreadable(&e))?;
    if !same_time(path, index) {
        return Err(Kept::Changed);
    }
    // The lock is dropped unused on any refusal: the index stays as it is.
    let bytes = patched(bytes, index, updates, resized)?;
    lock.write_all(&bytes).map_err(|e| unreadable(&e))?;
    lock.commit().map_err(|e| unreadable(&e.error))?;
    Ok(())
}

/// The index file's modification time is the one it had when `index` was read.
fn same_time(path: &std::path::Path, index: &gix::index::File) -> bool {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
        .is_some_and(|d| {
            let t = index.timestamp();
            d.as_secs() == t.unix_seconds() as u64 && d.subsec_nanos() == t.nanoseconds()
        })
}

/// The `index` fuzz target (`fuzz/`): grove's own reader of an index file's layout, which
/// patches refreshed stat data into the file in place, against gix's decoder of the same
/// bytes. Panics where the two read different entries, or where a patched index does not
/// read back (by gix) as the same entries carrying the new stat data.
#[doc(hidden)]
pub fn fuzz_index(bytes: &[u8]) {
    let hash = gix::hash::Kind::Sha1;
    let Ok(ours) = layout(bytes, hash.len_in_bytes()) else {
        return;
    };
    let now = gix::index::State::new(hash).timestamp();
    let Ok((state, _)) = gix::index::State::from_bytes(bytes, now, hash, Default::default()) else {
        return;
    };
    let paths = |s: &gix::index::State| -> Vec<Vec<u8>> {
        s.entries().iter().map(|e| e.path(s).to_vec()).collect()
    };
    let theirs = paths(&state);
    let read: Vec<Vec<u8>> = ours.entries.iter().map(|(_, p)| p.clone()).collect();
    assert_eq!(read, theirs, "the entries grove reads are gix's");
    let file = gix::index::File::from_state(state, "/nonexistent/index");
    let stat = |i: usize| Stat {
        mtime: gix::index::entry::stat::Time {
            secs: 1_000_000 + i as u32,
            nsecs: 7,
        },
        ctime: gix::index::entry::stat::Time { secs: 5, nsecs: 9 },
        dev: 1,
        ino: i as u32,
        uid: 2,
        gid: 3,
        size: 4 + i as u32,
    };
    let updates: Vec<(usize, Stat)> = (0..theirs.len()).step_by(2).map(|i| (i, stat(i))).collect();
    let Ok(new) = patched(bytes.to_vec(), &file, &updates, &[]) else {
        return;
    };
    let (back, _) = gix::index::State::from_bytes(&new, now, hash, Default::default())
        .expect("a patched index reads back");
    assert_eq!(paths(&back), theirs, "the same entries after the patch");
    for (i, s) in &updates {
        assert_eq!(
            back.entries()[*i].stat,
            *s,
            "entry {i} carries its new stat data"
        );
    }
    for (a, b) in back.entries().iter().zip(file.entries()) {
        assert_eq!((a.id, a.mode, a.flags), (b.id, b.mode, b.flags));
    }
}
