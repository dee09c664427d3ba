//! Durations as users write them: Go-style (`30s`, `1h30m`, `500ms`) for hook timeouts and
//! `--timeout`, and ages (`12h`, `7d`, `2w`, a bare number of days) for `--min-age`; and
//! sizes (`500MiB`, `10GB`) for `trash.max_size`, with how grove prints one (`1.5 GiB`).
//! Written here rather than taken from a crate: a dozen lines each, and the release
//! binary's size budget is close.

use std::time::Duration;

/// Parses a Go duration string: one or more `<number><unit>` with units `ns`, `us`, `µs`,
/// `ms`, `s`, `m`, `h`; the number may have a fraction. `0` alone is zero.
pub fn parse_go(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err("empty duration".into());
    }
    let mut rest = s;
    let mut total = 0f64;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return Err(format!("invalid duration `{s}`: expected a number"));
        }
        let n: f64 = rest[..num_len]
            .parse()
            .map_err(|_| format!("invalid duration `{s}`"))?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let secs = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            "" => {
                return Err(format!(
                    "invalid duration `{s}`: missing unit (use ms, s, m or h)"
                ));
            }
            u => {
                return Err(format!(
                    "invalid duration `{s}`: unknown unit `{u}` (use ms, s, m or h)"
                ));
            }
        };
        total += n * secs;
        rest = &rest[unit_len..];
    }
    Ok(Duration::from_secs_f64(total))
}

/// Parses an age for `--min-age`: a number with `h`, `d` or `w`; a bare number is days.
pub fn parse_age(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = match s.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&s[..i], &s[i..]),
        _ => (s, "d"),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("invalid age `{s}`: expected a whole number with h, d or w"))?;
    let hours = match unit {
        "h" => 1,
        "d" => 24,
        "w" => 24 * 7,
        _ => return Err(format!("invalid age `{s}`: unit must be h, d, or w")),
    };
    Ok(Duration::from_secs(n * hours * 3600))
}

/// An age for people, as `gw trash` shows one: `now`, `12m`, `5h`, `3d`.
pub fn format_age(d: Duration) -> String {
    let secs = d.as_secs();
    match secs {
        0..60 => "now".into(),
        60..3600 => format!("{}m", secs / 60),
        3600..172_800 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86_400),
    }
}

/// Parses a size: a whole or fractional number with an optional unit, `B`, `K`/`KB`/`KiB`,
/// `M`/`MB`/`MiB`, `G`/`GB`/`GiB`, `T`/`TB`/`TiB` (case-insensitive; the `B` forms are
/// powers of 1000, the others of 1024, as `du`, `ls -h` and cargo read them).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = (&t[..split], t[split..].trim());
    let n: f64 = num
        .parse()
        .map_err(|_| format!("invalid size `{s}`: expected a number, e.g. 500MiB or 10GB"))?;
    let scale: f64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "kb" => 1e3,
        "m" | "mib" => 1024f64.powi(2),
        "mb" => 1e6,
        "g" | "gib" => 1024f64.powi(3),
        "gb" => 1e9,
        "t" | "tib" => 1024f64.powi(4),
        "tb" => 1e12,
        _ => {
            return Err(format!(
                "invalid size `{s}`: unknown unit `{unit}` (use B, KiB, MiB, GiB, TiB or KB, MB, GB, TB)"
            ));
        }
    };
    Ok((n * scale).round() as u64)
}

/// A size for people: `812 B`, `4.0 KiB`, `1.5 GiB`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// Formats a duration the way Go prints it for the common cases (`1m30s`, `500ms`).
pub fn format_go(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let secs = d.as_secs();
    let (h, m, s) = (secs / 3600, (secs / 60) % 60, secs % 60);
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if h > 0 || m > 0 {
        out.push_str(&format!("{m}m"));
    }
    out.push_str(&format!("{s}s"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        assert_eq!(parse_go("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_go("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_go("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_go("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_go("0").unwrap(), Duration::ZERO);
        assert!(parse_go("10").unwrap_err().contains("missing unit"));
        assert!(parse_go("5d").unwrap_err().contains("unknown unit"));
        assert!(parse_go("").is_err());
        assert_eq!(format_go(Duration::from_secs(90)), "1m30s");
        assert_eq!(format_go(Duration::from_millis(250)), "250ms");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("0").unwrap(), 0);
        assert_eq!(parse_size("1000").unwrap(), 1000);
        assert_eq!(parse_size("500MiB").unwrap(), 500 << 20);
        assert_eq!(parse_size("10 GB").unwrap(), 10_000_000_000);
        assert_eq!(parse_size("1.5g").unwrap(), 3 << 29);
        assert_eq!(parse_size("2K").unwrap(), 2048);
        assert!(
            parse_size("lots")
                .unwrap_err()
                .contains("expected a number")
        );
        assert!(
            parse_size("5 parsecs")
                .unwrap_err()
                .contains("unknown unit")
        );
        assert!(parse_size("-1").is_err());
        assert_eq!(format_size(812), "812 B");
        assert_eq!(format_size(4096), "4.0 KiB");
        assert_eq!(format_size(3 << 29), "1.5 GiB");
    }

    #[test]
    fn ages() {
        assert_eq!(parse_age("7d").unwrap(), Duration::from_secs(7 * 86400));
        assert_eq!(parse_age("7").unwrap(), Duration::from_secs(7 * 86400));
        assert_eq!(parse_age("12h").unwrap(), Duration::from_secs(12 * 3600));
        assert_eq!(parse_age("2w").unwrap(), Duration::from_secs(14 * 86400));
        assert!(
            parse_age("3m")
                .unwrap_err()
                .contains("unit must be h, d, or w")
        );
        assert!(parse_age("-1d").is_err());
    }
}
