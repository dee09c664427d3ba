//! Running a test as an unprivileged user, so that a directory of mode 000 is unreadable:
//! as this user when it is not root, else on a thread that has become `nobody` (Linux keeps
//! credentials per thread, and what the thread starts inherits them).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The user a root test becomes.
pub const NOBODY: u32 = 65534;

/// Makes the calling thread (and the processes and threads it starts) an unprivileged user
/// when it runs as root; whether it now is unprivileged. Irreversible for the thread.
pub fn drop_privileges() -> bool {
    if !rustix::process::geteuid().is_root() {
        return true;
    }
    #[cfg(target_os = "linux")]
    {
        // rustix calls the kernel directly, per thread (libc's wrappers would change every
        // thread of the process).
        use rustix::process::{Gid, Uid};
        use rustix::thread::{set_thread_groups, set_thread_res_gid, set_thread_res_uid};
        let gid = Gid::from_raw(NOBODY);
        let uid = Uid::from_raw(NOBODY);
        set_thread_groups(&[]).is_ok()
            && set_thread_res_gid(gid, gid, gid).is_ok()
            && set_thread_res_uid(uid, uid, uid).is_ok()
    }
    #[cfg(not(target_os = "linux"))]
    false
}

/// `bin` where an unprivileged user may run it: itself when every directory above it may
/// be searched by others, else a copy in a directory of its own under the temporary
/// directory (made once per process).
pub fn runnable_by_anyone(bin: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let open = bin
        .ancestors()
        .skip(1)
        .all(|d| std::fs::metadata(d).is_ok_and(|m| m.permissions().mode() & 0o001 != 0))
        && std::fs::metadata(bin).is_ok_and(|m| m.permissions().mode() & 0o005 == 0o005);
    if open || !rustix::process::geteuid().is_root() {
        return bin.to_path_buf();
    }
    static COPIES: OnceLock<std::sync::Mutex<Vec<(PathBuf, PathBuf)>>> = OnceLock::new();
    let mut copies = COPIES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some((_, copy)) = copies.iter().find(|(b, _)| b == bin) {
        return copy.clone();
    }
    let dir = std::env::temp_dir().join(format!("grove-e2e-bin.{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory for the binary");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let copy = dir.join(bin.file_name().expect("a file name"));
    std::fs::copy(bin, &copy).expect("copy the binary");
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    copies.push((bin.to_path_buf(), copy.clone()));
    copy
}

/// Runs `test` as an unprivileged user, giving it the `gw` under test where that user can
/// run it; when no such user can be had, [`crate::skip`]s (a failure in CI) and returns
/// `None`.
pub fn run<T: Send>(test: impl FnOnce(&Path) -> T + Send) -> Option<T> {
    let gw = runnable_by_anyone(crate::gw_bin());
    let result = std::thread::scope(|s| {
        s.spawn(|| drop_privileges().then(|| test(&gw)))
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    });
    if result.is_none() {
        crate::skip("this test must run as a user who cannot read a directory of mode 000");
    }
    result
}
