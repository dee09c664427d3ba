//! Whether a TCP port is free, and which process listens on it when it is not.
//!
//! On Linux the kernel's socket tables say (`/proc/net/tcp` and `tcp6`: a socket in the
//! LISTEN state on the port, on any address), and who holds it (the process with that
//! socket open): nothing is bound or connected to, so looking never gets in the way of a
//! server starting at that moment. Elsewhere (or without `/proc`) grove binds the port on
//! every local address a dev server might use — the loopback and wildcard addresses of IPv4
//! and, where the system has it, IPv6 — and a port it cannot bind is taken; std's listener
//! sets `SO_REUSEADDR`, so a connection of an earlier server still closing (`TIME_WAIT`)
//! does not count. Those systems do not say who holds a port.

use std::collections::HashMap;
use std::io::ErrorKind;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener};

use serde::Serialize;

/// A process listening on a port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Holder {
    pub pid: u32,
    /// Its command line (control characters escaped).
    pub command: String,
}

/// What a port is like right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    Free,
    /// Something listens on it: the processes the system names (none when it does not
    /// say, or they belong to another user).
    Taken(Vec<Holder>),
    /// It could not be told (binding was refused for another reason: a port below 1024).
    Unknown(String),
}

/// Whether `port` is free, and who holds it if not.
pub fn probe(port: u16) -> Probe {
    probe_all(&[port]).remove(0)
}

/// [`probe`] of each port: the socket tables read once, and the holders of all of them
/// looked for in one pass.
pub fn probe_all(ports: &[u16]) -> Vec<Probe> {
    let Some(sockets) = listening(ports) else {
        return ports.iter().map(|&p| bind_all(p)).collect();
    };
    let mut found = holders(&sockets);
    ports
        .iter()
        .map(|port| match sockets.values().any(|p| p == port) {
            true => Probe::Taken(found.remove(port).unwrap_or_default()),
            false => Probe::Free,
        })
        .collect()
}

/// The listening sockets on `ports` (`socket:[inode]` → port) from the kernel's tables;
/// `None` when they cannot be read (not Linux).
fn listening(ports: &[u16]) -> Option<HashMap<String, u16>> {
    let mut read_any = false;
    let mut sockets = HashMap::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = crate::fsx::read(std::path::Path::new(table)) else {
            continue;
        };
        read_any = true;
        for &port in ports {
            for inode in listening_inodes(&text, port) {
                sockets.insert(format!("socket:[{inode}]"), port);
            }
        }
    }
    (read_any && cfg!(target_os = "linux")).then_some(sockets)
}

/// Binds `port` on every local address: free, or taken (no holders: the system does not
/// say).
fn bind_all(port: u16) -> Probe {
    let addrs: [SocketAddr; 4] = [
        (Ipv4Addr::LOCALHOST, port).into(),
        (Ipv4Addr::UNSPECIFIED, port).into(),
        (Ipv6Addr::LOCALHOST, port).into(),
        (Ipv6Addr::UNSPECIFIED, port).into(),
    ];
    for addr in addrs {
        match TcpListener::bind(addr) {
            Ok(l) => drop(l),
            Err(e) if e.kind() == ErrorKind::AddrInUse => return Probe::Taken(Vec::new()),
            // A system without IPv6 (or with it switched off) cannot be using it.
            Err(_) if addr.is_ipv6() => {}
            Err(e) => return Probe::Unknown(format!("cannot bind {addr}: {e}")),
        }
    }
    Probe::Free
}

/// The processes that have the sockets of `sockets` open (`/proc/<pid>/fd`), by port.
#[cfg(target_os = "linux")]
fn holders(sockets: &HashMap<String, u16>) -> HashMap<u16, Vec<Holder>> {
    let mut found: HashMap<u16, Vec<Holder>> = HashMap::new();
    if sockets.is_empty() {
        return found;
    }
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in procs.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        // Another user's processes cannot be looked into; they stay unnamed.
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        let mut held: Vec<u16> = fds
            .flatten()
            .filter_map(|fd| {
                let target = std::fs::read_link(fd.path()).ok()?;
                sockets.get(target.to_str()?).copied()
            })
            .collect();
        held.sort_unstable();
        held.dedup();
        if held.is_empty() {
            continue;
        }
        let holder = Holder {
            pid,
            command: command_line(&entry.path()),
        };
        for port in held {
            found.entry(port).or_default().push(holder.clone());
        }
    }
    found
}

/// Other systems do not say who holds a port (not without running `lsof`).
#[cfg(not(target_os = "linux"))]
fn holders(_sockets: &HashMap<String, u16>) -> HashMap<u16, Vec<Holder>> {
    HashMap::new()
}

/// The inodes of the sockets listening on `port` in a `/proc/net/tcp{,6}` table: each line
/// `sl local_address rem_address st … inode`, the address `HEX_IP:HEX_PORT`, state `0A`
/// for LISTEN.
fn listening_inodes(table: &str, port: u16) -> Vec<u64> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let local = cols.get(1)?;
            let (_, hex_port) = local.rsplit_once(':')?;
            let listening = *cols.get(3)? == "0A";
            (listening && u16::from_str_radix(hex_port, 16).ok()? == port)
                .then(|| cols.get(9)?.parse().ok())
                .flatten()
        })
        .collect()
}

/// A process's command line, or its name when it has none (a kernel thread), with secrets
/// masked (`--api-key=…`, a URL's password: it reaches JSON agents read and the terminal)
/// and control characters escaped.
#[cfg(target_os = "linux")]
fn command_line(proc_dir: &std::path::Path) -> String {
    let words: Vec<String> = std::fs::read(proc_dir.join("cmdline"))
        .unwrap_or_default()
        .split(|&b| b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    let text = if words.is_empty() {
        crate::fsx::read(&proc_dir.join("comm"))
            .unwrap_or_default()
            .trim_end()
            .to_string()
    } else {
        words.join(" ")
    };
    crate::redact::secrets(&text)
        .chars()
        .flat_map(|c| {
            let escape = c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c);
            let shown: Vec<char> = if escape {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            shown
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_listening_sockets_from_the_table() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 4343 1 0000000000000000 20 4 30 10 -1
   2: 00000000:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 99 1 0000000000000000 100 0 0 10 0
";
        assert_eq!(listening_inodes(table, 8080), [4242]);
        assert_eq!(listening_inodes(table, 80), [99]);
        assert!(listening_inodes(table, 81).is_empty());
        let v6 = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:4E20 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 777 1 0000000000000000 100 0 0 10 0
";
        assert_eq!(listening_inodes(v6, 20000), [777]);
    }

    /// A port this process listens on is taken, by this process; once closed it is free.
    #[test]
    fn a_listening_port_is_taken_and_named() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        match probe(port) {
            Probe::Taken(holders) => {
                if cfg!(target_os = "linux") {
                    let me = holders
                        .iter()
                        .find(|h| h.pid == std::process::id())
                        .unwrap_or_else(|| panic!("this process among {holders:?}"));
                    assert!(!me.command.is_empty());
                }
            }
            other => panic!("port {port} held by this test: {other:?}"),
        }
        drop(listener);
        assert_eq!(probe(port), Probe::Free);
    }

    /// A holder's command line is shown with its secrets masked and its controls escaped.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_holders_command_line_hides_secrets() {
        let dir = tempfile::tempdir().unwrap();
        crate::fsx::write_atomic(
            &dir.path().join("cmdline"),
            b"psql\0postgres://app:s3cr3t-pw@db/x\0--title=\x1b]52;c;x\x07\0",
        )
        .unwrap();
        let shown = command_line(dir.path());
        assert!(!shown.contains("s3cr3t-pw"), "{shown}");
        assert!(shown.contains(crate::redact::MASK), "{shown}");
        assert!(!shown.contains('\x1b'), "{shown}");
    }

    /// Held on the wildcard address only, a port is taken too, whichever way it is told.
    #[test]
    fn a_port_held_on_any_address_is_taken() {
        let listener = TcpListener::bind((Ipv4Addr::UNSPECIFIED, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        assert!(matches!(probe(port), Probe::Taken(_)));
        assert_eq!(bind_all(port), Probe::Taken(Vec::new()));
        drop(listener);
        assert_eq!(bind_all(port), Probe::Free);
    }

    /// A socket that is bound but does not listen (a client's) does not take the port.
    #[test]
    fn only_listening_sockets_take_a_port() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let client = std::net::TcpStream::connect((Ipv4Addr::LOCALHOST, port)).unwrap();
        let (_accepted, _) = listener.accept().unwrap();
        drop(listener);
        let local = client.local_addr().unwrap().port();
        if cfg!(target_os = "linux") {
            assert_eq!(probe(port), Probe::Free, "the listener is gone");
            assert_eq!(
                probe(local),
                Probe::Free,
                "a client's port is not listened on"
            );
        }
    }
}
