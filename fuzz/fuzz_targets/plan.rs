//! Plan files (`gw apply PLAN`, `ops::plan::parse`): a plan document or a saved `gw plan`
//! envelope holding one, refused when its digest does not match.
//!
//! The digest makes nearly every input a refusal, so each input is read twice: as it is,
//! and, when it is an object, with its digest made to match. Checked: a plan accepted is
//! accepted again as grove writes it, and inside a success envelope, as the same plan; any
//! change to it after that is refused.
#![no_main]

use grove::ops::plan::{self, PlanDoc};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(doc) = plan::parse(text) {
        check(&doc);
    }
    // The same document, sealed with the digest it would need.
    let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(text) else {
        return;
    };
    // (An object with both keys is read as an envelope: sealing is for a bare document.)
    if object.contains_key("schemaVersion") && object.contains_key("ok") {
        return;
    }
    let Ok(mut doc) = serde_json::from_value::<PlanDoc>(Value::Object(object.clone())) else {
        return;
    };
    doc.digest = plan::digest(&doc);
    object.insert("digest".to_string(), Value::String(doc.digest.clone()));
    let sealed = Value::Object(object).to_string();
    match plan::parse(&sealed) {
        Ok(read) => {
            assert_eq!(read, doc, "sealed: {sealed}");
            check(&read);
        }
        // Only a version this gw does not read is refused once sealed.
        Err(e) => assert_ne!(doc.schema_version, plan::SCHEMA_VERSION, "{e}: {sealed}"),
    }
});

fn check(doc: &PlanDoc) {
    let written = serde_json::to_string_pretty(doc).unwrap();
    let again = plan::parse(&written).unwrap_or_else(|e| panic!("{e}: {written}"));
    assert_eq!(&again, doc, "round trip");
    let envelope = json!({"schemaVersion": 1, "ok": true, "result": doc}).to_string();
    let again = plan::parse(&envelope).unwrap_or_else(|e| panic!("{e}: {envelope}"));
    assert_eq!(&again, doc, "in an envelope");
    let mut edited = doc.clone();
    edited.workspace.push('x');
    let text = serde_json::to_string(&edited).unwrap();
    assert!(
        plan::parse(&text).is_err(),
        "an edit went unnoticed: {text}"
    );
}
