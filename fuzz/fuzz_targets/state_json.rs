//! `state.json`, read by both of grove's readers: the full model (`State::parse`, what
//! every command that writes the state uses) and the listing (`Listing::parse`, what
//! `gw list` and `gw status` show from, borrowing from the text).
//!
//! Checked: the two accept exactly the same documents, refuse the rest with the same
//! message, and read the same names, paths, branches and every other field the listing
//! keeps (the listing drops fields it does not know, which the full model keeps: that is
//! the one place they differ, and it is not compared). What the full model writes back
//! reads as the same state, by both readers.
#![no_main]

use grove::state::{Listing, State};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Some(state) = agree(text) else {
        return;
    };
    let written = state.to_json();
    let again = agree(&written).unwrap_or_else(|| panic!("its own output is refused: {written}"));
    assert_eq!(again, state, "a round trip changed the state");
    assert_eq!(again.to_json(), written, "writing is stable");
});

/// Reads `text` both ways and checks that they agree; the full model's state when both
/// accepted it.
fn agree(text: &str) -> Option<State> {
    let listing = Listing::parse(text.to_string());
    let state = State::parse(text);
    let (listing, state) = match (listing, state) {
        (Ok(l), Ok(s)) => (l, s),
        (Err(l), Err(s)) => {
            assert_eq!(l, s, "the two readers refuse with different messages");
            return None;
        }
        (l, s) => panic!(
            "one reader accepts, the other does not: listing {:?}, full model {:?}",
            l.err(),
            s.err()
        ),
    };
    assert_eq!(listing.text(), text);
    let recs = listing.records();
    assert_eq!(recs.len(), state.workspaces.len());
    for (r, w) in recs.iter().zip(&state.workspaces) {
        assert_eq!(r.name.to_str(), w.name);
        assert_eq!(r.path.to_str(), w.path.to_string_lossy());
        assert_eq!(r.branch.to_str(), w.branch);
        // The token is a JSON string that decodes to the value.
        let decoded: String = serde_json::from_str(r.name.token()).unwrap();
        assert_eq!(decoded, w.name);
        assert_eq!(
            r.created_at
                .map(|c| c.to_str().into_owned())
                .unwrap_or_default(),
            w.created_at
        );
        assert_eq!(r.source.as_deref(), w.source.as_ref());
        assert_eq!(r.blueprint.as_deref(), w.blueprint.as_ref());
        assert_eq!(r.slot, w.slot);
        assert_eq!(r.repos.len(), w.repos.len());
        for (rr, wr) in r.repos.iter().zip(&w.repos) {
            assert_eq!(rr.repo_name.to_str(), wr.repo_name);
            assert_eq!(rr.source_repo.to_str(), wr.source_repo.to_string_lossy());
            assert_eq!(
                rr.worktree_path.to_str(),
                wr.worktree_path.to_string_lossy()
            );
            assert_eq!(rr.branch.to_str(), wr.branch);
            assert_eq!(rr.preserve_branch, wr.preserve_branch);
        }
    }
    Some(state)
}
