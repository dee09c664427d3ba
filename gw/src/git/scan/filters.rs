//! A file's content as `git add` would store it, for a file whose stat data is not
//! conclusive: gix's filter pipeline (clean drivers, line ends, working-tree encodings,
//! `ident`), run as git runs it for a status rather than for `git add`:
//! - no round-trip checks: `core.safecrlf` and `core.checkRoundtripEncoding` guard what
//!   `git add` writes, and a status that refused to answer would leave a clean worktree
//!   undeletable;
//! - a clean filter that cannot run (its command missing, or failing) is left out and the
//!   file compared unfiltered, unless the driver is `required` — git warns and does the same;
//! - attributes come from `.gitattributes` files that are regular files: under one that is
//!   not (a fifo would block the read forever), the attributes staged in the index are used,
//!   and under one that cannot be read, the same, the file being reported unreadable.

use gix::bstr::BStr;
use gix::filter::plumbing::pipeline::convert::ToGitOutcome as Out;
use gix::worktree::stack::state::attributes::Source;

/// The pipeline and the attributes it reads: the worktree's, and the index's when a file
/// needs them. Each source has a pipeline of its own: a pipeline keeps the attribute
/// outcome it fills, which belongs to one stack's collection of attribute names (gix
/// indexes it by the ids of the stack that filled it first, and panicked when the
/// worktree's stack knew a name, `eol`, that the index's did not).
pub(super) struct Filters {
    worktree: Reader,
    /// The attributes staged in the index, made when first needed.
    staged: Option<Reader>,
    /// Clean filters that failed, not `required`: left out of every pipeline since.
    dropped: Vec<gix::bstr::BString>,
}

/// A filter pipeline and the attributes stack it reads.
struct Reader {
    pipeline: gix::filter::plumbing::Pipeline,
    stack: gix::worktree::Stack,
}

impl Reader {
    fn new(repo: &gix::Repository, stack: gix::worktree::Stack) -> Result<Self, String> {
        let (mut pipeline, stack) = gix::filter::Pipeline::new(repo, stack)
            .map_err(|e| e.to_string())?
            .into_parts();
        let options = pipeline.options_mut();
        options.crlf_roundtrip_check = gix::filter::plumbing::pipeline::CrlfRoundTripCheck::Skip;
        options.encodings_with_roundtrip_check.clear();
        Ok(Reader { pipeline, stack })
    }

    fn drop_drivers(&mut self, dropped: &[gix::bstr::BString]) {
        self.pipeline
            .options_mut()
            .drivers
            .retain(|d| !dropped.contains(&d.name));
    }
}

/// What reading a file for its blob id gave.
pub(super) enum Cleaned {
    Id(gix::ObjectId),
    /// It went away, or is no longer a file.
    Gone,
    /// It, or an attributes file that applies to it, cannot be read.
    Unreadable(String),
}

/// Where a file's attributes come from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Attributes {
    /// The worktree's `.gitattributes` files (the index's where one is missing), as git.
    Worktree,
    /// The index's only: a `.gitattributes` above the file is not a regular file.
    Staged,
}

impl Filters {
    pub(super) fn new(repo: &gix::Repository, index: &gix::index::File) -> Result<Self, String> {
        // git opens a `.gitattributes` that is a directory and reads no rules from it; gix
        // passes over it to the staged file, which is hidden from it there (seed 20271517).
        let is_dir = |path: &BStr| {
            repo.workdir().is_some_and(|wd| {
                gix::path::from_bstr(path)
                    .is_ok_and(|p| wd.join(p).symlink_metadata().is_ok_and(|m| m.is_dir()))
            })
        };
        let dirs: Vec<usize> = index
            .entries()
            .iter()
            .enumerate()
            .filter(|(_, e)| {
                let path = e.path(index);
                (path == ".gitattributes" || path.ends_with(b"/.gitattributes")) && is_dir(path)
            })
            .map(|(i, _)| i)
            .collect();
        let stack = if dirs.is_empty() {
            repo.attributes_only(index, Source::WorktreeThenIdMapping)
        } else {
            let mut seen = index.clone();
            seen.remove_entries(|i, _, _| dirs.contains(&i));
            repo.attributes_only(&seen, Source::WorktreeThenIdMapping)
        }
        .map_err(|e| e.to_string())?
        .detach();
        Ok(Filters {
            worktree: Reader::new(repo, stack)?,
            staged: None,
            dropped: Vec::new(),
        })
    }

    /// The reader of `attributes`, the index's made when first asked for.
    fn reader(
        &mut self,
        repo: &gix::Repository,
        index: &gix::index::File,
        attributes: Attributes,
    ) -> Result<&mut Reader, String> {
        if attributes == Attributes::Worktree {
            return Ok(&mut self.worktree);
        }
        if self.staged.is_none() {
            let stack = repo
                .attributes_only(index, Source::IdMapping)
                .map_err(|e| e.to_string())?
                .detach();
            let mut reader = Reader::new(repo, stack)?;
            reader.drop_drivers(&self.dropped);
            self.staged = Some(reader);
        }
        Ok(self.staged.as_mut().expect("made above"))
    }

    /// The blob id of the file at `rela` (`open` opens it, again for a retry), as git would
    /// store it. `warnings` hears of a clean filter left out, `unreadable` of attributes
    /// that could not be read.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn blob_id(
        &mut self,
        repo: &gix::Repository,
        index: &gix::index::File,
        rela: &std::path::Path,
        attributes: Attributes,
        open: &mut dyn FnMut() -> Result<Option<std::fs::File>, String>,
        warnings: &mut Vec<String>,
        unreadable: &mut Vec<(String, String)>,
    ) -> Result<Cleaned, String> {
        let mut attributes = attributes;
        loop {
            let file = match open() {
                Ok(Some(f)) => f,
                Ok(None) => return Ok(Cleaned::Gone),
                Err(e) => return Ok(Cleaned::Unreadable(e)),
            };
            let mut data = Vec::new();
            let failed = {
                let Reader { pipeline, stack } = self.reader(repo, index, attributes)?;
                let platform = match stack.at_path(rela, None, &repo.objects) {
                    Ok(p) => p,
                    Err(e) if attributes == Attributes::Worktree => {
                        // An attributes file that cannot be read: git leaves it out (and reads
                        // the staged one in its place); so does this, saying so.
                        unreadable.push((
                            rela.display().to_string(),
                            format!("its attributes cannot be read: {e}"),
                        ));
                        attributes = Attributes::Staged;
                        continue;
                    }
                    Err(e) => return Ok(Cleaned::Unreadable(format!("its attributes: {e}"))),
                };
                let rela_bytes: &BStr =
                    gix::path::os_str_into_bstr(rela.as_os_str()).map_err(|e| e.to_string())?;
                let converted = pipeline.convert_to_git(
                    file,
                    rela,
                    &mut |_, attrs| {
                        platform.matching_attributes(attrs);
                    },
                    &mut |buf| {
                        use gix::prelude::Find as _;
                        let Some(entry) = index.entry_by_path(rela_bytes) else {
                            return Ok(None);
                        };
                        let obj = repo.objects.try_find(&entry.id, buf)?;
                        Ok(obj.filter(|o| o.kind == gix::objs::Kind::Blob).map(|_| ()))
                    },
                );
                let read = |e: std::io::Error| e.to_string();
                use std::io::Read as _;
                match converted {
                    Ok(Out::Unchanged(mut r)) => r.read_to_end(&mut data).map(drop).map_err(read),
                    Ok(Out::Process(mut r)) => r.read_to_end(&mut data).map(drop).map_err(read),
                    Ok(Out::Buffer(b)) => {
                        data.extend_from_slice(b);
                        Ok(())
                    }
                    Err(e) => Err(e.to_string()),
                }
            };
            match failed {
                Ok(()) => {
                    let id =
                        gix::objs::compute_hash(index.object_hash(), gix::objs::Kind::Blob, &data)
                            .map_err(|e| e.to_string())?;
                    return Ok(Cleaned::Id(id));
                }
                Err(e) => {
                    let Some(driver) = self.optional_driver(repo, rela, attributes) else {
                        return Err(format!("{}: {e}", rela.display()));
                    };
                    warnings.push(format!(
                        "{}: clean filter `{driver}` failed ({e}); compared unfiltered, as git does",
                        rela.display()
                    ));
                    self.dropped.push(driver.as_str().into());
                    self.worktree.drop_drivers(&self.dropped);
                    if let Some(staged) = &mut self.staged {
                        staged.drop_drivers(&self.dropped);
                    }
                }
            }
        }
    }

    /// The driver the `filter` attribute of `rela` names, when it is configured and not
    /// `required` (git compares the file unfiltered when such a driver fails).
    fn optional_driver(
        &mut self,
        repo: &gix::Repository,
        rela: &std::path::Path,
        attributes: Attributes,
    ) -> Option<String> {
        let Reader { pipeline, stack } = match attributes {
            Attributes::Worktree => &mut self.worktree,
            Attributes::Staged => self.staged.as_mut()?,
        };
        let mut out = stack.selected_attribute_matches(["filter"]);
        stack
            .at_path(rela, None, &repo.objects)
            .ok()?
            .matching_attributes(&mut out);
        let name = out
            .iter_selected()
            .next()?
            .assignment
            .state
            .as_bstr()?
            .to_owned();
        pipeline
            .options_mut()
            .drivers
            .iter()
            .find(|d| d.name == name && !d.required)
            .map(|d| d.name.to_string())
    }
}
