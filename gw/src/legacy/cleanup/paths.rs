//! Paths in JSON. A path is an `OsStr`, and on Unix any bytes but `/` and NUL may name a
//! directory; JSON strings are Unicode. Reports show such a path lossily (U+FFFD for what is
//! not UTF-8, `fsx::serialize_lossy` and the optional and list forms here) next to a flag
//! that says so; manifests, which `restore` must act on, keep the exact bytes.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Whether `path` is shown lossily.
pub fn is_lossy(path: &Path) -> bool {
    path.to_str().is_none()
}

pub fn lossy_opt<S: Serializer>(path: &Option<PathBuf>, s: S) -> Result<S::Ok, S::Error> {
    match path {
        Some(p) => s.serialize_some(&p.to_string_lossy()),
        None => s.serialize_none(),
    }
}

pub fn lossy_vec<S: Serializer>(paths: &[PathBuf], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(paths.iter().map(|p| p.to_string_lossy()))
}

/// A path as a manifest stores it: a string when it is UTF-8, else `{"hex": "…"}` holding
/// its bytes.
pub mod exact {
    use super::*;

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    enum Repr {
        Text(String),
        Bytes { hex: String },
    }

    pub fn serialize<S: Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
        match path.to_str() {
            Some(t) => Repr::Text(t.to_string()).serialize(s),
            None => Repr::Bytes {
                hex: crate::fsx::to_hex(path.as_os_str().as_encoded_bytes()),
            }
            .serialize(s),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
        match Repr::deserialize(d)? {
            Repr::Text(t) => Ok(PathBuf::from(t)),
            Repr::Bytes { hex } => {
                let bytes = from_hex(&hex)
                    .ok_or_else(|| serde::de::Error::custom("`hex` is not hexadecimal"))?;
                from_bytes(bytes).ok_or_else(|| serde::de::Error::custom("not a path here"))
            }
        }
    }

    fn from_hex(s: &str) -> Option<Vec<u8>> {
        if !s.len().is_multiple_of(2) {
            return None;
        }
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
            .collect()
    }

    #[cfg(unix)]
    fn from_bytes(bytes: Vec<u8>) -> Option<PathBuf> {
        use std::os::unix::ffi::OsStringExt;
        Some(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
    }

    #[cfg(not(unix))]
    fn from_bytes(bytes: Vec<u8>) -> Option<PathBuf> {
        String::from_utf8(bytes).ok().map(PathBuf::from)
    }

    /// A list of paths, each as [`exact`](self) stores one.
    pub mod list {
        use super::*;

        #[derive(Serialize, Deserialize)]
        struct One(#[serde(with = "super")] PathBuf);

        pub fn serialize<S: Serializer>(paths: &[PathBuf], s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(paths.iter().map(|p| One(p.clone())))
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<PathBuf>, D::Error> {
            Ok(Vec::<One>::deserialize(d)?
                .into_iter()
                .map(|o| o.0)
                .collect())
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Holder {
        #[serde(with = "exact")]
        p: PathBuf,
    }

    #[test]
    fn exact_paths_round_trip_and_lossy_ones_do_not_fail() {
        let odd = PathBuf::from(std::ffi::OsStr::from_bytes(b"/tmp/caf\xe9/.mcp.json"));
        let plain = PathBuf::from("/tmp/café/.mcp.json");
        for p in [&odd, &plain] {
            let h = Holder { p: p.clone() };
            let text = serde_json::to_string(&h).unwrap();
            assert_eq!(serde_json::from_str::<Holder>(&text).unwrap(), h, "{text}");
        }
        assert_eq!(
            serde_json::to_string(&Holder { p: odd.clone() }).unwrap(),
            r#"{"p":{"hex":"2f746d702f636166e92f2e6d63702e6a736f6e"}}"#
        );
        assert_eq!(
            serde_json::to_string(&Holder { p: plain }).unwrap(),
            r#"{"p":"/tmp/café/.mcp.json"}"#
        );
        assert!(is_lossy(&odd));
        let mut out = Vec::new();
        crate::fsx::serialize_lossy(&odd, &mut serde_json::Serializer::new(&mut out)).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"/tmp/caf\u{fffd}/.mcp.json\""
        );
        assert!(serde_json::from_str::<Holder>(r#"{"p":{"hex":"2g"}}"#).is_err());
    }
}
