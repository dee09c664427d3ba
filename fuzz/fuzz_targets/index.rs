//! The index files the status scan writes refreshed stat data back into: grove reads their
//! layout itself (`git/scan/refresh.rs`, to patch each entry's stat data in place, keeping
//! the version and every extension) and gix decodes them. Through `git::fuzz_index`:
//! checked that the two read the same entries, and that a patched index reads back (by
//! gix) as the same entries with the new stat data.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    grove::git::fuzz_index(data);
});
