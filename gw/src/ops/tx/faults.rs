//! Fault injection for tests: fail the `at`-th applied action (0-based), before or after
//! it takes effect. Only code can construct this; nothing in the CLI enables it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::{Code, Error, Result};

#[derive(Debug)]
pub struct Faults {
    pub at: usize,
    pub after: bool,
    seen: AtomicUsize,
}

impl Faults {
    pub fn new(at: usize, after: bool) -> Arc<Faults> {
        Arc::new(Faults {
            at,
            after,
            seen: AtomicUsize::new(0),
        })
    }

    /// How many actions were applied (or attempted) so far.
    pub fn seen(&self) -> usize {
        self.seen.load(Ordering::SeqCst)
    }

    /// Counts an action about to be applied and returns its index.
    pub(super) fn next(&self) -> usize {
        self.seen.fetch_add(1, Ordering::SeqCst)
    }

    pub(super) fn check(&self, index: usize, after: bool) -> Result<()> {
        if index == self.at && after == self.after {
            let when = if after { "after" } else { "before" };
            Err(Error::new(
                Code::Internal,
                format!("injected fault {when} step {index}"),
            ))
        } else {
            Ok(())
        }
    }
}
