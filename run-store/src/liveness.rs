//! Which `running` runs still have a live recorder.
//!
//! A recorder holds an exclusive OS lock (`flock`) on `<database>.locks/run-<id>.lock` from
//! before it marks the run `running` until after it has written the final status. The kernel
//! releases the lock when the process dies, however it dies (SIGKILL, the OOM killer), so a
//! `running` run whose lock is free belongs to a dead process: readers report it `interrupted`
//! at once, and the next process that opens the store for recording persists that. A second
//! recorder on the same database never touches a run it does not hold.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

/// The reason a run without a live recorder is reported (and then stored) with.
pub const DEAD_RECORDER_REASON: &str = "the process recording the run ended without closing it \
     (killed or crashed); samples up to its last commit are kept";

/// The lock of one run being recorded; released (and its file removed) on drop.
#[derive(Debug)]
pub(crate) struct RunLock {
    _file: File,
    path: PathBuf,
}

impl Drop for RunLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn lock_path(db: &Path, run: i64) -> PathBuf {
    let mut dir = db.as_os_str().to_owned();
    dir.push(".locks");
    PathBuf::from(dir).join(format!("run-{run}.lock"))
}

/// Takes the recording lock of `run`; fails if another process holds it.
pub(crate) fn acquire(db: &Path, run: i64) -> std::io::Result<RunLock> {
    let path = lock_path(db, run);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)?;
    match file.try_lock() {
        Ok(()) => Ok(RunLock { _file: file, path }),
        Err(TryLockError::WouldBlock) => Err(std::io::Error::other(format!(
            "run {run} is being recorded by another process ({})",
            path.display()
        ))),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

/// Whether a live process holds the recording lock of `run`.
pub(crate) fn is_recorded(db: &Path, run: i64) -> bool {
    let Ok(file) = File::open(lock_path(db, run)) else {
        return false;
    };
    match file.try_lock_shared() {
        Ok(()) => false,
        Err(TryLockError::WouldBlock) => true,
        // Cannot tell: do not declare a live run dead.
        Err(TryLockError::Error(_)) => true,
    }
}
