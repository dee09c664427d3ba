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
    Zoned::new(t, system_zone().clone())
        .strftime("%Y-%m-%dT%H:%M:%S%.6f")
        .to_string()
}

static TZ: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();

/// Sets the `TZ` environment value that local times are read in (from `Env`); the first
/// call wins.
pub fn set_tz(tz: Option<String>) {
    let _ = TZ.set(tz);
}

/// The local time zone, looked up once per process: `TZ` when set, else `/etc/localtime`
/// read directly (asking jiff for "the system zone" walks the whole zone database to find
/// its name, which costs more than everything else `gw list` does).
fn system_zone() -> &'static TimeZone {
    static ZONE: std::sync::OnceLock<TimeZone> = std::sync::OnceLock::new();
    ZONE.get_or_init(|| match TZ.get().cloned().flatten() {
        Some(tz) => {
            let name = tz.trim_start_matches(':');
            TimeZone::get(name)
                .or_else(|_| TimeZone::posix(name))
                .unwrap_or(TimeZone::UTC)
        }
        None => std::fs::read("/etc/localtime")
            .ok()
            .and_then(|data| TimeZone::tzif("localtime", &data).ok())
            .unwrap_or_else(TimeZone::system),
    })
}

/// Now in UTC, RFC 3339 (`2026-05-01T07:30:12Z`).
pub fn now_utc() -> String {
    utc(Timestamp::now())
}

/// Now as the Go grove stamps its log lines: local time, whole seconds
/// (`2026-05-01 09:30:12`).
pub fn now_log() -> String {
    Zoned::new(Timestamp::now(), system_zone().clone())
        .strftime("%Y-%m-%d %H:%M:%S")
        .to_string()
}

/// `t` as RFC 3339 UTC with whole seconds.
pub fn utc(t: Timestamp) -> String {
    // Formatted by hand: `gw list` does this once per workspace, and the general
    // formatting machinery cost more than the rest of building a workspace's view.
    let dt = jiff::tz::Offset::UTC.to_datetime(t);
    let year = dt.year();
    if !(0..=9999).contains(&year) {
        return t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    }
    let mut out = *b"0000-00-00T00:00:00Z";
    let mut put = |at: usize, width: usize, mut n: u32| {
        for i in (at..at + width).rev() {
            out[i] = b'0' + (n % 10) as u8;
            n /= 10;
        }
    };
    put(0, 4, year as u32);
    put(5, 2, dt.month() as u32);
    put(8, 2, dt.day() as u32);
    put(11, 2, dt.hour() as u32);
    put(14, 2, dt.minute() as u32);
    put(17, 2, dt.second() as u32);
    String::from_utf8(out.to_vec()).expect("ASCII digits")
}

/// The Go grove's `created_at` layout, `YYYY-MM-DDTHH:MM:SS[.f…]`, read by hand (the
/// general parser is several times slower, and `gw list` reads one per workspace).
fn parse_go_layout(s: &str) -> Option<DateTime> {
    let b = s.as_bytes();
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<i32> {
        b[from..to].iter().try_fold(0i32, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + i32::from(c - b'0'))
        })
    };
    let nanos = match &b[19..] {
        [] => 0,
        [b'.', frac @ ..] if (1..=9).contains(&frac.len()) => {
            let n = num(20, b.len())?;
            n * 10i32.pow(9 - frac.len() as u32)
        }
        _ => return None,
    };
    DateTime::new(
        i16::try_from(num(0, 4)?).ok()?,
        i8::try_from(num(5, 7)?).ok()?,
        i8::try_from(num(8, 10)?).ok()?,
        i8::try_from(num(11, 13)?).ok()?,
        i8::try_from(num(14, 16)?).ok()?,
        i8::try_from(num(17, 19)?).ok()?,
        nanos,
    )
    .ok()
}

/// Reads a `created_at` written by either grove: local wall-clock time with or without a
/// fraction, or RFC 3339 with an offset.
pub fn parse_created_at(s: &str) -> Option<Timestamp> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    // An offset or `Z` after the time means RFC 3339; otherwise it is the Go grove's
    // zone-less local time. Deciding first avoids building a parse error per workspace.
    let has_offset = s
        .get(19..)
        .is_some_and(|tail| tail.contains(['Z', 'z', '+', '-']));
    if has_offset {
        return s.parse::<Timestamp>().ok();
    }
    let dt = match parse_go_layout(s) {
        Some(dt) => dt,
        None => s.parse().ok()?,
    };
    system_zone().to_timestamp(dt).ok()
}

/// `created_at` as RFC 3339 UTC, or `None` when it cannot be read — or is not a time RFC
/// 3339 can write (a year outside 0000–9999 in UTC: year 0 in a zone east of UTC).
pub fn created_at_utc(s: &str) -> Option<String> {
    parse_created_at(s)
        .filter(|t| (0..=9999).contains(&jiff::tz::Offset::UTC.to_datetime(*t).year()))
        .map(utc)
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
        let t: Timestamp = "2026-01-02T03:04:05.678Z".parse().unwrap();
        assert_eq!(utc(t), t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string());
        assert_eq!(utc(t), "2026-01-02T03:04:05Z");
        for s in [
            "2026-05-01T09:30:12.123456",
            "2026-05-01T09:30:12.1",
            "2025-12-24T18:00:00",
            "2025-12-24T18:00:00.123456789",
        ] {
            assert_eq!(
                parse_go_layout(s),
                Some(s.parse::<DateTime>().unwrap()),
                "{s}"
            );
        }
        for s in [
            "2025-12-24 18:00:00",
            "2025-13-24T18:00:00",
            "2025-12-24T18:00:00.",
            "2025-12-24T18:00:0x",
        ] {
            assert_eq!(parse_go_layout(s), None, "{s}");
        }
    }
}
