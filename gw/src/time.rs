//! Timestamps: `created_at` in the Go grove's local wall-clock layout, and RFC 3339 UTC
//! for everything grove adds.

use jiff::civil::DateTime;
use jiff::tz::TimeZone;
use jiff::{Timestamp, Zoned};

/// Now, as the Go grove writes `created_at`: local time, microseconds, no zone
/// (`2026-05-01T09:30:12.123456`).
pub fn now_local() -> String {
    local(Timestamp::now())
}

/// `t` in the Go grove's `created_at` layout (local wall-clock time).
pub fn local(t: Timestamp) -> String {
    Zoned::new(t, TimeZone::system())
        .strftime("%Y-%m-%dT%H:%M:%S%.6f")
        .to_string()
}

/// Now in UTC, RFC 3339 (`2026-05-01T07:30:12Z`).
pub fn now_utc() -> String {
    utc(Timestamp::now())
}

/// `t` as RFC 3339 UTC with whole seconds.
pub fn utc(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Reads a `created_at` written by either grove: local wall-clock time with or without a
/// fraction, or RFC 3339 with an offset.
pub fn parse_created_at(s: &str) -> Option<Timestamp> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    if let Ok(ts) = s.parse::<Timestamp>() {
        return Some(ts);
    }
    let dt: DateTime = s.parse().ok()?;
    dt.to_zoned(TimeZone::system()).ok().map(|z| z.timestamp())
}

/// `created_at` as RFC 3339 UTC, or `None` when it cannot be read.
pub fn created_at_utc(s: &str) -> Option<String> {
    parse_created_at(s).map(utc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_layouts_parse() {
        let now = now_local();
        assert_eq!(now.len(), "2026-05-01T09:30:12.123456".len(), "{now}");
        assert!(parse_created_at(&now).is_some());
        assert!(parse_created_at("2026-05-01T09:30:12.123456").is_some());
        assert!(parse_created_at("2025-12-24T18:00:00").is_some());
        assert_eq!(
            created_at_utc("2026-05-01T09:30:12Z").as_deref(),
            Some("2026-05-01T09:30:12Z")
        );
        assert!(parse_created_at("").is_none());
        assert!(parse_created_at("yesterday").is_none());
        assert!(now_utc().ends_with('Z'));
    }
}
