//! A workspace's ports: each repository's named `[ports]` given a concrete port in the
//! workspace's block, and the placeholders (`{port.api.http}`, `{slot}`, `{workspace}`)
//! a repository's `.grove.toml` commands may use.
//!
//! The rule, in one place: the workspace with slot `s` owns the `ports.block` ports from
//! `ports.base + s × ports.block`. Its repositories' declared ports take them in order —
//! repositories in the workspace's order (a repository added later comes last), each
//! one's ports in the order its `.grove.toml` declares them. So a workspace's ports are the
//! same every time, two workspaces never share one, and a rename (which keeps the slot)
//! keeps them.

use std::sync::Arc;

use serde::Serialize;

use crate::config::{self, Config, PortRange, REPO_FILE, RepoConfig};
use crate::error::{Error, Result};
use crate::listen::{self, Holder, Probe};
use crate::ops::Ctx;
use crate::state::Workspace;

/// One named port of one repository, in one workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Port {
    pub repo: String,
    /// The name the repository's `.grove.toml` gives it (`http`).
    pub name: String,
    /// The port in this workspace.
    pub port: u16,
    /// The port the repository declares, the one it uses outside grove.
    pub declared: u16,
    /// The environment variable carrying it: `GROVE_PORT_<REPO>_<NAME>`.
    pub var: String,
}

/// A workspace's slot and the port of each repository's named ports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stack {
    pub workspace: String,
    pub slot: u32,
    /// The first port of the workspace's block (past 65535 for a slot whose block is out
    /// of range: such a workspace may declare no ports).
    pub first: u64,
    /// In the workspace's repository order, then each repository's declared order.
    pub ports: Vec<Port>,
}

impl Stack {
    /// The ports of workspace `workspace` with slot `slot`, whose repositories declare
    /// `declared` (in the workspace's order). `config` names `config.toml` in errors.
    pub fn layout(
        range: PortRange,
        workspace: &str,
        slot: u32,
        declared: &[(&str, &[(String, u16)])],
        config: &std::path::Path,
    ) -> Result<Stack> {
        let count: usize = declared.iter().map(|(_, p)| p.len()).sum();
        // In u64: a slot from a hand-edited state file can be anything up to u32::MAX.
        let first = u64::from(range.base) + u64::from(slot) * u64::from(range.block);
        let invalid = |detail: String| -> Error {
            config::Error::Invalid {
                path: config.to_path_buf(),
                detail,
            }
            .into()
        };
        if count > usize::from(range.block) {
            let each: Vec<String> = declared
                .iter()
                .filter(|(_, p)| !p.is_empty())
                .map(|(r, p)| format!("{r}: {}", p.len()))
                .collect();
            return Err(invalid(format!(
                "workspace `{workspace}` declares {count} ports ({}), more than `ports.block` = {} leaves each workspace",
                each.join(", "),
                range.block
            ))
            .with_fix(format!(
                "Set `ports.block` to {count} or more under `[ports]` in {}",
                config.display()
            )));
        }
        let last = first + count.saturating_sub(1) as u64;
        if count > 0 && last > u64::from(u16::MAX) {
            return Err(invalid(format!(
                "workspace `{workspace}` (slot {slot}) would have ports up to {last}, past 65535 (`ports.base` = {}, `ports.block` = {})",
                range.base, range.block
            ))
            .with_fix(format!(
                "Lower `ports.base` or `ports.block` under `[ports]` in {}, or delete workspaces you no longer need so that slots are freed",
                config.display()
            )));
        }
        let mut ports = Vec::with_capacity(count);
        let mut next = first;
        for (repo, named) in declared {
            for (name, port) in named.iter() {
                ports.push(Port {
                    repo: repo.to_string(),
                    name: name.clone(),
                    port: u16::try_from(next).expect("checked against 65535 above"),
                    declared: *port,
                    var: port_var(repo, name),
                });
                next += 1;
            }
        }
        // `svc-auth` and `svc_auth` would both be `GROVE_PORT_SVC_AUTH_…`.
        for (i, p) in ports.iter().enumerate() {
            if let Some(q) = ports[..i].iter().find(|q| q.var == p.var) {
                return Err(Error::from(config::Error::RepoConfig {
                    path: std::path::PathBuf::from(REPO_FILE),
                    detail: format!(
                        "`{}`'s port `{}` and `{}`'s port `{}` would both be ${}",
                        q.repo, q.name, p.repo, p.name, p.var
                    ),
                })
                .with_fix(format!(
                    "Rename one of the two ports in its repository's {REPO_FILE}"
                )));
            }
        }
        Ok(Stack {
            workspace: workspace.to_string(),
            slot,
            first,
            ports,
        })
    }

    /// The workspace's stack: its slot (given now, under the state lock, when the
    /// workspace has none yet: see [`crate::state::Store::load_with_slots`]) and each
    /// repository's `.grove.toml` `[ports]`.
    pub fn of(ctx: &Ctx<'_>, config: &Config, ws: &Workspace) -> Result<Stack> {
        let slot = match ws.slot {
            Some(s) => s,
            None => ctx
                .store
                .load_with_slots()?
                .find(&ws.name)
                .and_then(|w| w.slot)
                .ok_or_else(|| {
                    Error::new(
                        crate::error::Code::StateChanged,
                        format!("workspace `{}` was deleted meanwhile", ws.name),
                    )
                })?,
        };
        Stack::with_slot(config, ws, slot)
    }

    /// The stack of `ws` as recorded, for views that change nothing, or why there is
    /// none: a workspace without a slot yet ([`NO_SLOT_YET`]), a layout that fails.
    pub fn recorded(config: &Config, ws: &Workspace) -> std::result::Result<Stack, String> {
        match ws.slot {
            Some(slot) => Stack::with_slot(config, ws, slot).map_err(|e| e.message.clone()),
            None => Err(NO_SLOT_YET.to_string()),
        }
    }

    fn with_slot(config: &Config, ws: &Workspace, slot: u32) -> Result<Stack> {
        let configs = ws
            .repos
            .iter()
            .map(|r| RepoConfig::load(&r.source_repo).map(|c| (r.repo_name.as_str(), c.ports)))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let declared: Vec<(&str, &[(String, u16)])> =
            configs.iter().map(|(r, p)| (*r, p.as_slice())).collect();
        Stack::layout(config.ports, &ws.name, slot, &declared, config.path())
    }

    /// The port `repo` calls `name`.
    pub fn port(&self, repo: &str, name: &str) -> Option<u16> {
        self.ports
            .iter()
            .find(|p| p.repo == repo && p.name == name)
            .map(|p| p.port)
    }

    /// `GROVE_SLOT`, then `GROVE_PORT_<REPO>_<NAME>` for every port, then — for `repo`, the
    /// repository a command runs in, when it declares exactly one port — `PORT`.
    pub fn env(&self, repo: Option<&str>) -> Vec<(String, String)> {
        let mut vars = vec![("GROVE_SLOT".to_string(), self.slot.to_string())];
        vars.extend(
            self.ports
                .iter()
                .map(|p| (p.var.clone(), p.port.to_string())),
        );
        if let Some(repo) = repo {
            let mut own = self.ports.iter().filter(|p| p.repo == repo);
            if let (Some(p), None) = (own.next(), own.next()) {
                vars.push(("PORT".into(), p.port.to_string()));
            }
        }
        vars
    }
}

/// Why a read-only view shows no slot.
pub const NO_SLOT_YET: &str = "no slot yet: the workspace was recorded by the Go grove; grove gives it one the next time it writes the state or something needs its ports (`gw env`, `gw run`, a hook)";

/// Why a read-only view of `ws` shows no ports: under `slot` while it has none, else
/// under `ports` (a layout that fails).
pub fn unknown(ws: &Workspace, why: String) -> std::collections::BTreeMap<&'static str, String> {
    let key = if ws.slot.is_some() { "ports" } else { "slot" };
    [(key, why)].into()
}

/// One port of a workspace as read-only views show it: whether something listens on it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PortStatus {
    #[serde(flatten)]
    pub port: Port,
    /// Whether something listens on it; `null` when that cannot be told (see `unknown`).
    pub listening: Option<bool>,
    /// Who listens, where the system says (on Linux, unless another user's).
    pub holders: Vec<Holder>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
}

/// Each of `ports`, looked at now.
pub fn look(ports: &[Port]) -> Vec<PortStatus> {
    let numbers: Vec<u16> = ports.iter().map(|p| p.port).collect();
    ports
        .iter()
        .zip(listen::probe_all(&numbers))
        .map(|(p, probe)| {
            let (listening, holders, unknown) = match probe {
                Probe::Free => (Some(false), Vec::new(), None),
                Probe::Taken(h) => (Some(true), h, None),
                Probe::Unknown(why) => (None, Vec::new(), Some(why)),
            };
            PortStatus {
                port: p.clone(),
                listening,
                holders,
                unknown,
            }
        })
        .collect()
}

/// `GROVE_PORT_<REPO>_<NAME>`: both upper-cased, every character that cannot be in a
/// variable name made `_`.
pub fn port_var(repo: &str, name: &str) -> String {
    let part = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("GROVE_PORT_{}_{}", part(repo), part(name))
}

/// A workspace's stack as a command's environment gets it: the stack, or why there is
/// none (`None` outside a workspace).
pub type Ports = Option<std::result::Result<Arc<Stack>, String>>;

/// What a `.grove.toml` command's placeholders stand for.
#[derive(Debug, Clone, Copy)]
pub struct Placeholders<'a> {
    pub workspace: &'a str,
    pub stack: &'a Ports,
}

impl Placeholders<'_> {
    /// Replaces `{workspace}` (shell-quoted when it needs to be), `{slot}` and
    /// `{port.<repo>.<name>}` in `command`. Anything else in braces is left alone, and so is
    /// a placeholder right after `$` (`${slot}` is the shell's). A port placeholder that
    /// names no declared port is an error that says which ports there are.
    pub fn expand(&self, command: &str) -> std::result::Result<String, String> {
        let mut out = String::with_capacity(command.len());
        let mut rest = command;
        while let Some(open) = rest.find('{') {
            let (before, from) = rest.split_at(open);
            out.push_str(before);
            let dollar = out.ends_with('$');
            let Some(close) = from.find('}') else {
                out.push_str(from);
                return Ok(out);
            };
            let inner = &from[1..close];
            match self.value(inner) {
                Some(v) if !dollar => out.push_str(&v?),
                _ => {
                    // Not one of ours: keep the brace and look again after it.
                    out.push('{');
                    rest = &from[1..];
                    continue;
                }
            }
            rest = &from[close + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    fn value(&self, inner: &str) -> Option<std::result::Result<String, String>> {
        if inner == "workspace" {
            return Some(Ok(crate::proc::shell_quote(self.workspace)));
        }
        let port = inner.strip_prefix("port.");
        if inner != "slot" && port.is_none() {
            return None;
        }
        // Only what could be a placeholder: a repository name and a port name.
        let wanted = match port {
            Some(p) => Some(p.rsplit_once('.').filter(|(repo, name)| {
                !repo.is_empty()
                    && !repo.contains(char::is_whitespace)
                    && config::is_port_name(name)
            })?),
            None => None,
        };
        let stack = match self.stack {
            Some(Ok(s)) => s,
            Some(Err(why)) => return Some(Err(format!("{{{inner}}}: no ports: {why}"))),
            None => return Some(Err(format!("{{{inner}}}: no ports outside a workspace"))),
        };
        Some(match wanted {
            None => Ok(stack.slot.to_string()),
            Some((repo, name)) => stack
                .port(repo, name)
                .map(|p| p.to_string())
                .ok_or_else(|| {
                    let known: Vec<String> = stack
                        .ports
                        .iter()
                        .map(|p| format!("{{port.{}.{}}}", p.repo, p.name))
                        .collect();
                    if known.is_empty() {
                        format!(
                            "{{{inner}}}: no repository of workspace `{}` declares `[ports]`",
                            stack.workspace
                        )
                    } else {
                        format!(
                            "{{{inner}}}: workspace `{}` has no such port (it has {})",
                            stack.workspace,
                            known.join(", ")
                        )
                    }
                }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn ports(list: &[(&str, u16)]) -> Vec<(String, u16)> {
        list.iter().map(|(n, p)| (n.to_string(), *p)).collect()
    }

    fn stack(range: PortRange, slot: u32) -> Result<Stack> {
        let api = ports(&[("http", 8080), ("grpc", 9090)]);
        let web = ports(&[("http", 5173)]);
        Stack::layout(
            range,
            "feat x",
            slot,
            &[("api", &api), ("docs", &[]), ("web", &web)],
            Path::new("/g/config.toml"),
        )
    }

    #[test]
    fn each_workspace_has_its_own_block_in_declared_order() {
        let range = PortRange {
            base: 20000,
            block: 10,
        };
        let s = stack(range, 3).unwrap();
        let got: Vec<(&str, &str, u16, &str)> = s
            .ports
            .iter()
            .map(|p| (p.repo.as_str(), p.name.as_str(), p.port, p.var.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("api", "http", 20030, "GROVE_PORT_API_HTTP"),
                ("api", "grpc", 20031, "GROVE_PORT_API_GRPC"),
                ("web", "http", 20032, "GROVE_PORT_WEB_HTTP"),
            ]
        );
        assert_eq!(s.ports[0].declared, 8080);
        assert_eq!(stack(range, 3).unwrap(), s, "the same every time");
        // Blocks of different slots never meet.
        let mut seen = std::collections::BTreeSet::new();
        for slot in 0..50 {
            for p in stack(range, slot).unwrap().ports {
                assert!(seen.insert(p.port), "port {} twice", p.port);
            }
        }
    }

    #[test]
    fn environment_has_every_port_and_port_for_a_single_one() {
        let s = stack(PortRange::default(), 1).unwrap();
        let names = |repo| -> Vec<String> { s.env(repo).into_iter().map(|(k, _)| k).collect() };
        let all = [
            "GROVE_SLOT",
            "GROVE_PORT_API_HTTP",
            "GROVE_PORT_API_GRPC",
            "GROVE_PORT_WEB_HTTP",
        ];
        assert_eq!(names(None), all);
        // api declares two, so it gets no PORT; docs declares none.
        assert_eq!(names(Some("api")), all);
        assert_eq!(names(Some("docs")), all);
        let web = s.env(Some("web"));
        assert_eq!(
            web.last().unwrap(),
            &("PORT".to_string(), "20102".to_string())
        );
        assert_eq!(web[0], ("GROVE_SLOT".to_string(), "1".to_string()));
    }

    #[test]
    fn too_many_ports_past_65535_and_clashing_names_are_refused() {
        let e = stack(
            PortRange {
                base: 20000,
                block: 2,
            },
            0,
        )
        .unwrap_err();
        assert!(
            e.message
                .contains("declares 3 ports (api: 2, web: 1), more than `ports.block` = 2")
                && e.message.contains("/g/config.toml"),
            "{}",
            e.message
        );
        assert!(e.fix.as_deref().unwrap().contains("`ports.block` to 3"));
        let e = stack(
            PortRange {
                base: 65000,
                block: 100,
            },
            6,
        )
        .unwrap_err();
        assert!(
            e.message.contains("ports up to 65602, past 65535"),
            "{}",
            e.message
        );
        // Any slot a state file can hold is an error, never an overflow.
        let e = stack(
            PortRange {
                base: u16::MAX,
                block: u16::MAX,
            },
            u32::MAX,
        )
        .unwrap_err();
        assert!(e.message.contains("past 65535"), "{}", e.message);
        // The last port may be 65535 itself; a workspace without ports never overflows.
        assert_eq!(
            stack(
                PortRange {
                    base: 65533,
                    block: 3
                },
                0
            )
            .unwrap()
            .ports[2]
                .port,
            65535
        );
        Stack::layout(
            PortRange {
                base: 65000,
                block: 100,
            },
            "w",
            600,
            &[],
            Path::new("c"),
        )
        .unwrap();
        let a = ports(&[("http", 1)]);
        let e = Stack::layout(
            PortRange::default(),
            "w",
            0,
            &[("svc-auth", &a), ("svc_auth", &a)],
            Path::new("c"),
        )
        .unwrap_err();
        assert!(
            e.message.contains("`svc-auth`'s port `http` and `svc_auth`'s port `http` would both be $GROVE_PORT_SVC_AUTH_HTTP"),
            "{}",
            e.message
        );
    }

    #[test]
    fn placeholders() {
        let s = stack(PortRange::default(), 2).unwrap();
        let ready = Some(Ok(Arc::new(s)));
        let p = Placeholders {
            workspace: "feat x",
            stack: &ready,
        };
        assert_eq!(
            p.expand(
                "echo API=http://localhost:{port.api.http} > .env.local; echo {slot} {workspace}"
            )
            .unwrap(),
            "echo API=http://localhost:20200 > .env.local; echo 2 'feat x'"
        );
        // The shell's braces are left alone.
        for kept in [
            "echo ${slot} ${port.api.http}",
            "awk '{print $1}' {} {port} {port.} {port.api} {port.api.} {slots}",
            "echo {a,b} }{ {",
            "{port.a b.http}",
        ] {
            assert_eq!(p.expand(kept).unwrap(), kept);
        }
        assert_eq!(p.expand("x{{slot}}").unwrap(), "x{2}");
        let e = p.expand("curl :{port.api.nope}").unwrap_err();
        assert!(
            e.contains("{port.api.nope}: workspace `feat x` has no such port (it has {port.api.http}, {port.api.grpc}, {port.web.http})"),
            "{e}"
        );
        let why = Some(Err("too many ports".into()));
        let broken = Placeholders {
            workspace: "w",
            stack: &why,
        };
        assert_eq!(
            broken.expand("echo {workspace} ${PORT}").unwrap(),
            "echo w ${PORT}"
        );
        assert_eq!(
            broken.expand("echo {slot}").unwrap_err(),
            "{slot}: no ports: too many ports"
        );
        let outside = Placeholders {
            workspace: "",
            stack: &None,
        };
        assert!(
            outside
                .expand("{port.a.b}")
                .unwrap_err()
                .contains("outside a workspace")
        );
    }
}
