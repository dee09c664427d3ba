//! Stopping between files: SIGINT or SIGTERM asks an applied run (or a restore) to finish
//! the file it is at, record it, and stop; a second signal ends the process at once (the
//! manifest is written ahead, so that is no worse than `kill -9`).

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// A stop request, checked between files.
#[derive(Debug, Clone, Default)]
pub struct Cancel {
    requested: Arc<AtomicBool>,
    signal: Arc<AtomicUsize>,
}

impl Cancel {
    /// Never requested (`gw doctor --fix`, tests).
    pub fn never() -> Cancel {
        Cancel::default()
    }

    /// Requested by SIGINT or SIGTERM from now on, for the rest of the process.
    pub fn on_signals() -> io::Result<Cancel> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        use signal_hook::flag;
        let c = Cancel::default();
        for sig in [SIGINT, SIGTERM] {
            // Registered first, so it sees the flag as the previous signal left it.
            flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&c.requested))?;
            flag::register_usize(sig, Arc::clone(&c.signal), sig as usize)?;
            flag::register(sig, Arc::clone(&c.requested))?;
        }
        Ok(c)
    }

    /// Asks for a stop, as the signal `signal` would.
    pub fn request(&self, signal: i32) {
        self.signal.store(signal as usize, Ordering::SeqCst);
        self.requested.store(true, Ordering::SeqCst);
    }

    /// The signal that asked for a stop, if one did.
    pub fn requested(&self) -> Option<i32> {
        self.requested
            .load(Ordering::SeqCst)
            .then(|| self.signal.load(Ordering::SeqCst) as i32)
    }
}
