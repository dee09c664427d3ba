//! `state.json`: the registry of workspaces, in the Go grove's format.
//!
//! The file is a bare JSON array of workspaces, written with two-space indentation. Fields
//! grove does not know (written by a newer Go grove, or by a plugin) are kept as they are,
//! and grove's own additions are optional, so both implementations can read each other's
//! files. Reads never lock; every read-modify-write holds `state.lock`.

pub mod journal;
pub mod listing;
mod model;
pub mod trash;
pub mod trust;

pub use listing::Listing;
pub use model::{
    Blueprint, RepoEntry, SetupRecord, SetupStatus, Source, State, Workspace, same_record,
};

use std::path::PathBuf;
use std::time::Duration;

use crate::fsx;
use crate::home::GroveHome;
use crate::lock;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Io(#[from] fsx::Error),
    #[error("corrupt state file `{}`: {detail}", path.display())]
    Corrupt { path: PathBuf, detail: String },
    #[error("state is locked by another gw process: {0}")]
    LockTimeout(String),
}

impl From<lock::Error> for Error {
    fn from(e: lock::Error) -> Error {
        match e {
            lock::Error::Io(io) => Error::Io(io),
            e @ lock::Error::Timeout { .. } => Error::LockTimeout(e.to_string()),
        }
    }
}

/// Reads and writes `state.json`.
#[derive(Debug, Clone)]
pub struct Store {
    home: GroveHome,
    lock_timeout: Duration,
}

impl Store {
    pub fn new(home: &GroveHome, lock_timeout: Duration) -> Store {
        Store {
            home: home.clone(),
            lock_timeout,
        }
    }

    pub fn path(&self) -> PathBuf {
        self.home.state()
    }

    /// Reads the state; a missing or empty file is an empty registry.
    pub fn load(&self) -> Result<State, Error> {
        let path = self.path();
        let Some(text) = fsx::read_optional(&path)? else {
            return Ok(State::default());
        };
        State::parse(&text).map_err(|detail| Error::Corrupt { path, detail })
    }

    /// Reads the state for display only (see [`Listing`]); a missing file is an empty
    /// registry.
    pub fn listing(&self) -> Result<Listing, Error> {
        let path = self.path();
        let text = fsx::read_text_optional(&path)?.unwrap_or_default();
        Listing::parse(text).map_err(|detail| Error::Corrupt { path, detail })
    }

    /// Runs `f` on the current state under the state lock and writes the result back when
    /// `f` changed it. When `f` fails, nothing is written. Every workspace leaves with a
    /// slot ([`State::assign_slots`]).
    pub fn update<T, E: From<Error>>(
        &self,
        f: impl FnOnce(&mut State) -> Result<T, E>,
    ) -> Result<T, E> {
        let _lock =
            lock::acquire(&self.home.state_lock(), self.lock_timeout).map_err(Error::from)?;
        let mut state = self.load()?;
        let before = state.clone();
        let out = f(&mut state)?;
        state.assign_slots();
        if state != before {
            self.save(&state)?;
        }
        Ok(out)
    }

    /// Reads the state, first giving every workspace without a slot its slot (a write,
    /// under the lock, only when one lacks it: a workspace the Go grove recorded). For the
    /// commands that need a workspace's ports.
    pub fn load_with_slots(&self) -> Result<State, Error> {
        let state = self.load()?;
        if !state.clone().assign_slots() {
            return Ok(state);
        }
        self.update(|_| Ok::<_, Error>(()))?;
        self.load()
    }

    fn save(&self, state: &State) -> Result<(), Error> {
        fsx::write_atomic(&self.path(), state.to_json().as_bytes())?;
        Ok(())
    }
}
