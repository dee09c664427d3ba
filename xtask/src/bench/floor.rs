//! The floor of a checkout: only what any checkout of a tree must ask of the kernel.
//!
//! [`Tree::load`] reads a commit's files into memory (untimed: `git ls-tree` and `git
//! cat-file --batch`); [`write`] then makes each tree's directories and creates and writes
//! each file from memory (`mkdirat`, `openat(O_CREAT | O_EXCL)`, `write`, `close`; a
//! `symlinkat` for a link), on as many threads as gw may use (`GW_THREADS`, or every core),
//! into directories that do not exist yet, on the file system the case runs on. Nothing
//! else: no object database, no index, no administrative files, no process started. Each
//! path is given to the kernel relative to its worktree's root, as git's checkout gives it
//! relative to the worktree it runs in. What any checkout costs above this is its own.

use std::ffi::CString;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use super::Timing;

/// A commit's files, in memory.
pub struct Tree {
    files: Vec<File>,
}

struct File {
    /// Relative to the worktree's root, as git lists it.
    path: CString,
    /// The directory it is in, relative to the root (`None` at the root).
    dir: Option<CString>,
    kind: Kind,
    data: Vec<u8>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Regular,
    Executable,
    Link,
}

impl Tree {
    /// Reads every file of `rev` in the repository at `repo` into memory; `env` sets up each
    /// git command (the bench's hermetic environment).
    pub fn load(repo: &Path, rev: &str, env: impl Fn(&mut Command)) -> Result<Tree, String> {
        let mut ls = Command::new("git");
        env(&mut ls);
        let out = ls
            .arg("-C")
            .arg(repo)
            .args(["ls-tree", "-r", "-z", "--full-tree", rev])
            .output()
            .map_err(|e| format!("git ls-tree: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "git ls-tree {rev} in {}: {}",
                repo.display(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let mut entries = Vec::new();
        for record in out.stdout.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            // `<mode> <type> <object>\t<path>`
            let tab = record.iter().position(|b| *b == b'\t').ok_or("ls-tree")?;
            let head = std::str::from_utf8(&record[..tab]).map_err(|e| e.to_string())?;
            let mut fields = head.split(' ');
            let (mode, kind, oid) = (fields.next(), fields.next(), fields.next());
            let kind = match (mode, kind) {
                (Some("100644"), Some("blob")) => Kind::Regular,
                (Some("100755"), Some("blob")) => Kind::Executable,
                (Some("120000"), Some("blob")) => Kind::Link,
                // A submodule's commit: a checkout makes only its directory.
                _ => continue,
            };
            let path = &record[tab + 1..];
            entries.push((kind, oid.ok_or("ls-tree")?.to_string(), path.to_vec()));
        }
        let contents = cat_blobs(repo, entries.iter().map(|(_, oid, _)| oid.as_str()), env)?;
        let files = entries
            .into_iter()
            .zip(contents)
            .map(|((kind, _, path), data)| {
                let dir = path
                    .iter()
                    .rposition(|b| *b == b'/')
                    .map(|i| CString::new(&path[..i]).expect("git paths have no NUL"));
                File {
                    path: CString::new(path).expect("git paths have no NUL"),
                    dir,
                    kind,
                    data,
                }
            })
            .collect();
        Ok(Tree { files })
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }
}

/// The blobs `oids` name, in order, from one `git cat-file --batch`.
fn cat_blobs<'a>(
    repo: &Path,
    oids: impl Iterator<Item = &'a str>,
    env: impl Fn(&mut Command),
) -> Result<Vec<Vec<u8>>, String> {
    let mut cmd = Command::new("git");
    env(&mut cmd);
    let mut child = cmd
        .arg("-C")
        .arg(repo)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("git cat-file: {e}"))?;
    let input: String = oids.map(|o| format!("{o}\n")).collect();
    let count = input.lines().count();
    let mut stdin = child.stdin.take().ok_or("stdin")?;
    // Written from another thread: git answers as it reads, and both pipes are bounded.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let mut out = BufReader::new(child.stdout.take().ok_or("stdout")?);
    let mut blobs = Vec::with_capacity(count);
    let mut header = String::new();
    for _ in 0..count {
        header.clear();
        out.read_line(&mut header).map_err(|e| e.to_string())?;
        // `<oid> blob <size>`
        let size: usize = header
            .trim_end()
            .rsplit(' ')
            .next()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("git cat-file said `{}`", header.trim_end()))?;
        let mut data = vec![0; size + 1];
        out.read_exact(&mut data).map_err(|e| e.to_string())?;
        data.pop();
        blobs.push(data);
    }
    writer
        .join()
        .map_err(|_| "writer panicked")?
        .map_err(|e| e.to_string())?;
    child.wait().map_err(|e| e.to_string())?;
    Ok(blobs)
}

/// The threads the floor writes on: as many as gw may use.
pub fn threads() -> usize {
    std::env::var("GW_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
}

/// Writes each tree at its root (which must not exist; its parent is made if missing) on
/// `threads` threads, and returns the wall-clock time from the first system call to the
/// last, and the CPU time (user + system) of the threads that made them.
pub fn write(trees: &[(&Tree, PathBuf)], threads: usize) -> Result<Timing, String> {
    // The work, as runs of consecutive files (a directory's files stay together): a few per
    // thread, taken in turn, so that one thread never waits for another's last run alone.
    let total: usize = trees.iter().map(|(t, _)| t.len()).sum();
    let run = (total / (threads * 8)).clamp(64, 4096);
    let mut jobs = Vec::new();
    for (i, (t, _)) in trees.iter().enumerate() {
        let mut start = 0;
        while start < t.len() {
            let end = (start + run).min(t.len());
            jobs.push((i, start..end));
            start = end;
        }
    }
    let roots: Vec<OnceLock<Result<Root, String>>> =
        trees.iter().map(|_| OnceLock::new()).collect();
    let next = AtomicUsize::new(0);
    let started = Instant::now();
    let results: Vec<Result<f64, String>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                s.spawn(|| {
                    let cpu = thread_cpu_ms();
                    loop {
                        let j = next.fetch_add(1, Ordering::Relaxed);
                        let Some((i, range)) = jobs.get(j) else {
                            break;
                        };
                        let (tree, dest) = &trees[*i];
                        let root = roots[*i].get_or_init(|| Root::make(dest));
                        let root = root.as_ref().map_err(Clone::clone)?;
                        let mut made: Option<&CString> = None;
                        for f in &tree.files[range.clone()] {
                            if let Some(dir) = &f.dir
                                && made != Some(dir)
                            {
                                root.dir(dir)?;
                                made = Some(dir);
                            }
                            root.file(f)?;
                        }
                    }
                    Ok(thread_cpu_ms() - cpu)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err("a floor thread panicked".into()))
            })
            .collect()
    });
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    let mut cpu_ms = 0.0;
    for r in results {
        cpu_ms += r?;
    }
    Ok(Timing { wall_ms, cpu_ms })
}

/// A worktree's root directory, made and held open.
struct Root {
    fd: std::os::fd::OwnedFd,
    path: PathBuf,
}

impl Root {
    fn make(dest: &Path) -> Result<Root, String> {
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::create_dir(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
        let dir = std::fs::File::open(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
        Ok(Root {
            fd: dir.into(),
            path: dest.to_path_buf(),
        })
    }

    /// Makes `dir` (relative to the root) and, first, whatever of its parents is missing.
    fn dir(&self, dir: &CString) -> Result<(), String> {
        match self.mkdir(dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let bytes = dir.as_bytes();
                let parent = &bytes[..bytes.iter().rposition(|b| *b == b'/').ok_or("path")?];
                self.dir(&CString::new(parent).expect("no NUL"))?;
                self.mkdir(dir).or_else(exists_is_fine)
            }
            r => r.or_else(exists_is_fine),
        }
        .map_err(|e| self.error(dir, e))
    }

    #[allow(unsafe_code)]
    fn mkdir(&self, dir: &CString) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        // SAFETY: the descriptor is open for as long as `self` lives, the path is a valid
        // NUL-terminated string, and `mkdirat` keeps neither.
        let r = unsafe { libc::mkdirat(self.fd.as_raw_fd(), dir.as_ptr(), 0o777) };
        if r == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }

    #[allow(unsafe_code)]
    fn file(&self, f: &File) -> Result<(), String> {
        use std::os::fd::{AsRawFd, FromRawFd};
        let root = self.fd.as_raw_fd();
        if f.kind == Kind::Link {
            let target = CString::new(f.data.clone()).map_err(|e| e.to_string())?;
            // SAFETY: as in `mkdir`; both strings are valid and NUL-terminated.
            let r = unsafe { libc::symlinkat(target.as_ptr(), root, f.path.as_ptr()) };
            return match r {
                0 => Ok(()),
                _ => Err(self.error(&f.path, std::io::Error::last_os_error())),
            };
        }
        let mode = if f.kind == Kind::Executable {
            0o777
        } else {
            0o666
        };
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC;
        // SAFETY: as in `mkdir`; the descriptor returned is owned by the `File` made of it
        // below, which closes it.
        let fd = unsafe { libc::openat(root, f.path.as_ptr(), flags, mode) };
        if fd < 0 {
            return Err(self.error(&f.path, std::io::Error::last_os_error()));
        }
        // SAFETY: `fd` was just opened and nothing else holds it.
        let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
        file.write_all(&f.data).map_err(|e| self.error(&f.path, e))
    }

    fn error(&self, rel: &CString, e: std::io::Error) -> String {
        let rel = Path::new(std::ffi::OsStr::from_bytes(rel.as_bytes()));
        format!("{}: {e}", self.path.join(rel).display())
    }
}

fn exists_is_fine(e: std::io::Error) -> std::io::Result<()> {
    match e.kind() {
        std::io::ErrorKind::AlreadyExists => Ok(()),
        _ => Err(e),
    }
}

/// The CPU time (user + system) this thread has used: `CLOCK_THREAD_CPUTIME_ID`, which
/// Linux and macOS both have (`getrusage(RUSAGE_THREAD)` is Linux's alone).
#[allow(unsafe_code)]
fn thread_cpu_ms() -> f64 {
    // SAFETY: `clock_gettime` only writes the struct it is given, which is zeroed and owned
    // here.
    let t = unsafe {
        let mut t: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t);
        t
    };
    t.tv_sec as f64 * 1000.0 + t.tv_nsec as f64 / 1_000_000.0
}
