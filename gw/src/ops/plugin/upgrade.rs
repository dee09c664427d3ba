//! Where installed plugins came from (`.gw-<name>.json`), the shipped registry, and
//! `gw plugin search` and `gw plugin upgrade`.

use super::*;

/// Where an installed plugin came from: the Go grove's `plugins/.gw-<name>.json`
/// (`{repo, version}` for a GitHub release), with `source` added for a path or URL.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Deserialize, Serialize)]
pub struct Meta {
    /// `OWNER/REPO` of a GitHub release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// The release tag installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// An absolute path or a URL (grove's addition; the Go grove only knew `repo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

pub(super) fn meta_path(plugins: &Path, name: &str) -> PathBuf {
    plugins.join(format!(".gw-{name}.json"))
}

impl Meta {
    /// The recorded source of plugin `name`; `Ok(None)` when there is none (installed by
    /// hand), an error when the record cannot be read.
    pub fn load(plugins: &Path, name: &str) -> Result<Option<Meta>> {
        let path = meta_path(plugins, name);
        let Some(text) = fsx::read_optional(&path)? else {
            return Ok(None);
        };
        let meta: Meta = serde_json::from_str(&text).map_err(|e| {
            Error::usage(format!("cannot read `{}`: {e}", path.display())).with_fix(format!(
                "Install the plugin again: `gw plugin install SOURCE --name {name}`"
            ))
        })?;
        Ok((meta.source.is_some() || meta.repo.is_some()).then_some(meta))
    }

    pub(super) fn save(&self, plugins: &Path, name: &str) -> Result<()> {
        let text = serde_json::to_string(self).expect("metadata serialises");
        fsx::write_atomic(&meta_path(plugins, name), text.as_bytes())?;
        Ok(())
    }

    /// What `install` is given to install it again.
    pub(super) fn install_source(&self) -> Option<&str> {
        self.source.as_deref().or(self.repo.as_deref())
    }
}

/// A plugin `gw plugin search` knows and `gw plugin install NAME` resolves.
#[derive(Debug, Clone, Copy, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Registered {
    pub name: &'static str,
    /// `OWNER/REPO` on GitHub, whose releases carry the plugin.
    pub repo: &'static str,
    pub description: &'static str,
}

/// The registry entry for a bare plugin name (`code`, `gw-code`).
pub(super) fn find_registered(name: &str) -> Option<&'static Registered> {
    let bare = name.strip_prefix("gw-").unwrap_or(name);
    REGISTRY.iter().find(|r| r.name == bare)
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SearchHit {
    pub name: &'static str,
    pub repo: &'static str,
    pub description: &'static str,
    /// A plugin of this name is installed.
    pub installed: bool,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PluginSearchReport {
    /// What was searched for (`null`: everything).
    pub term: Option<String>,
    pub plugins: Vec<SearchHit>,
    pub count: usize,
}

impl PluginSearchReport {
    pub fn next_actions(&self) -> Vec<NextAction> {
        self.plugins
            .iter()
            .filter(|p| !p.installed)
            .take(1)
            .map(|p| {
                NextAction::write(
                    format!("Install {}", p.name),
                    &["gw", "plugin", "install", p.name, "--format", "json"],
                )
            })
            .collect()
    }
}

/// `gw plugin search [TERM]`: the registry entries whose name, repository or description
/// contains `term` (any case); offline.
pub fn search(ctx: &Ctx<'_>, term: Option<&str>) -> Result<PluginSearchReport> {
    let needle = term.map(str::to_lowercase).filter(|t| !t.trim().is_empty());
    let plugins: Vec<SearchHit> = REGISTRY
        .iter()
        .filter(|r| {
            needle.as_deref().is_none_or(|n| {
                [r.name, r.repo, r.description]
                    .iter()
                    .any(|f| f.to_lowercase().contains(n))
            })
        })
        .map(|r| SearchHit {
            name: r.name,
            repo: r.repo,
            description: r.description,
            installed: fsx::exists(&ctx.home.plugins().join(file_name(r.name))),
        })
        .collect();
    Ok(PluginSearchReport {
        term: needle,
        count: plugins.len(),
        plugins,
    })
}

/// What `gw plugin upgrade` did to one plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum UpgradeOutcome {
    /// Installed again from its source, and it changed.
    Upgraded,
    /// Installed again from its source; it was already the same.
    UpToDate,
    /// No recorded source (put in the plugins directory by hand).
    Skipped,
    Failed,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Upgrade {
    pub name: String,
    pub path: PathBuf,
    pub outcome: UpgradeOutcome,
    /// Where it was installed from again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PluginUpgradeReport {
    pub plugins: Vec<Upgrade>,
    pub count: usize,
    /// How many changed.
    pub upgraded: usize,
    /// Set when a plugin failed to upgrade (the others were still tried).
    /// `--dry-run`: validated, nothing written; the report says what would change.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    #[serde(skip)]
    pub failure: Option<Error>,
}

/// `gw plugin upgrade [NAME]`: installs each installed plugin (or the one named) again from
/// where it was installed from. Plugins without a record are skipped; a failure does not stop
/// the others. `dry_run`: each is fetched and checked as the upgrade would, nothing written.
pub fn upgrade(ctx: &Ctx<'_>, name: Option<&str>, dry_run: bool) -> Result<PluginUpgradeReport> {
    let plugins_dir = ctx.home.plugins();
    let installed: Vec<Plugin> = list(ctx)?
        .plugins
        .into_iter()
        .filter(|p| p.source == Origin::Installed)
        .collect();
    let chosen: Vec<&Plugin> = match name {
        None => installed.iter().collect(),
        Some(n) => {
            check_name(n)?;
            match installed.iter().find(|p| p.name == n) {
                Some(p) => vec![p],
                None => {
                    let names: Vec<&str> = installed.iter().map(|p| p.name.as_str()).collect();
                    return Err(Error::usage(format!("no plugin named `{n}` is installed"))
                        .with_fix(if names.is_empty() {
                            "No plugins are installed; install one with `gw plugin install`"
                                .to_string()
                        } else {
                            format!("Installed: {}", names.join(", "))
                        })
                        .with_details(serde_json::json!({ "plugin": n, "installed": names })));
                }
            }
        }
    };
    let mut report = PluginUpgradeReport {
        plugins: Vec::new(),
        count: 0,
        upgraded: 0,
        dry_run,
        failure: None,
    };
    let mut failed: Vec<(String, Error)> = Vec::new();
    for p in chosen {
        let meta = match Meta::load(&plugins_dir, &p.name) {
            Ok(Some(m)) => m,
            Ok(None) => {
                report.plugins.push(Upgrade {
                    name: p.name.clone(),
                    path: p.path.clone(),
                    outcome: UpgradeOutcome::Skipped,
                    source: None,
                    detail: Some("installed by hand: no recorded source to upgrade from".into()),
                });
                continue;
            }
            Err(e) => {
                report.plugins.push(Upgrade {
                    name: p.name.clone(),
                    path: p.path.clone(),
                    outcome: UpgradeOutcome::Failed,
                    source: None,
                    detail: Some(e.message.clone()),
                });
                failed.push((p.name.clone(), e));
                continue;
            }
        };
        let source = meta.install_source().unwrap_or_default().to_string();
        ctx.events
            .progress(&format!("upgrading {} from {source}", p.name));
        let result = install(
            ctx,
            InstallOptions {
                source: source.clone(),
                name: Some(p.name.clone()),
                dry_run,
            },
        );
        let (outcome, detail) = match result {
            Ok(r) if r.unchanged => (UpgradeOutcome::UpToDate, None),
            Ok(_) => {
                report.upgraded += 1;
                (UpgradeOutcome::Upgraded, None)
            }
            Err(e) => {
                let detail = Some(e.message.clone());
                failed.push((p.name.clone(), e));
                (UpgradeOutcome::Failed, detail)
            }
        };
        report.plugins.push(Upgrade {
            name: p.name.clone(),
            path: p.path.clone(),
            outcome,
            source: Some(source),
            detail,
        });
    }
    report.count = report.plugins.len();
    if let Some((_, first)) = failed.first() {
        // The first failure's code (a network failure is TRANSIENT, a missing file USAGE).
        let all: Vec<String> = failed
            .iter()
            .map(|(n, e)| format!("{n}: {}", e.message))
            .collect();
        report.failure = Some(
            Error::new(
                first.code,
                format!(
                    "could not upgrade {} of {} plugins: {}",
                    failed.len(),
                    report.count,
                    all.join("; ")
                ),
            )
            .with_fix("Check the source named for each failed plugin, or install it again with `gw plugin install`"),
        );
    }
    Ok(report)
}
