//! Operation journals (`<GW_HOME>/operations/<id>.json`, `state::journal::parse`): what
//! `gw doctor --fix` recovers from after a crash.
//!
//! Checked: a journal read is written back (`serialise`, what recovery rewrites) as text
//! that reads as the same record, and that writing is stable.
#![no_main]

use std::path::PathBuf;

use grove::state::journal::{self, Record};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The file name a journal must have is its id's; take the id from the text when it
    // has one, so that inputs get past that check.
    let id = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.get("id").and_then(|i| i.as_str()).map(str::to_string))
        .filter(|id| !id.is_empty() && !id.contains('/') && id != "." && id != "..")
        .unwrap_or_else(|| "op".to_string());
    let path = PathBuf::from("/g/operations").join(format!("{id}.json"));
    let Ok(record) = journal::parse(&path, text) else {
        return;
    };
    if let Ok(plain) = serde_json::from_str::<Record>(text) {
        assert_eq!(plain, record);
    }
    let written = journal::serialise(&path, &record).expect("a record read is written");
    let again = journal::parse(&path, &written)
        .unwrap_or_else(|e| panic!("the journal written back is refused: {e}\n{written}"));
    assert_eq!(again, record, "round trip:\n{written}");
    assert_eq!(journal::serialise(&path, &again).unwrap(), written);
});
