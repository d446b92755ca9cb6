//! A CPU of its own for the loop thread, and its memory locked, while a real-time run goes on.
//!
//! On a machine with two CPUs or more the loop takes the last CPU the process may use and
//! every other thread of the process (the simulated bench's plant and Modbus server, the
//! recorder, the web server) moves to the others; threads they start inherit that. The
//! kernel still runs other processes and interrupts there unless the CPU is isolated
//! (`isolcpus=`, see the manual's performance page). `mlockall` keeps the loop's pages
//! resident, so no tick waits for a page fault.

use rustix::thread::{CpuSet, Pid, gettid, sched_getaffinity, sched_setaffinity};

/// The CPUs the calling thread may run on.
fn allowed() -> Vec<usize> {
    let set = sched_getaffinity(None).unwrap_or_else(|_| CpuSet::new());
    (0..CpuSet::MAX_CPU).filter(|&c| set.is_set(c)).collect()
}

/// The CPU the loop would take: the last allowed one, when there are two or more.
pub fn loop_cpu() -> Option<usize> {
    let cpus = allowed();
    (cpus.len() >= 2).then(|| cpus[cpus.len() - 1])
}

/// The process's other threads, pinned away from the loop's CPU until dropped.
#[derive(Debug)]
pub struct Isolation {
    cpu: usize,
    before: CpuSet,
}

impl Isolation {
    /// Pins the calling thread to [`loop_cpu`] and every other thread of the process to the
    /// remaining CPUs. `None` on one CPU, or when the kernel refuses.
    pub fn begin() -> Option<Isolation> {
        let cpu = loop_cpu()?;
        let before = sched_getaffinity(None).ok()?;
        let mut rest = before;
        rest.unset(cpu);
        let mut own = CpuSet::new();
        own.set(cpu);
        sched_setaffinity(None, &own).ok()?;
        set_others(&rest);
        Some(Isolation { cpu, before })
    }

    /// The loop's CPU.
    pub fn cpu(&self) -> usize {
        self.cpu
    }
}

impl Drop for Isolation {
    fn drop(&mut self) {
        set_others(&self.before);
        let _ = sched_setaffinity(None, &self.before);
    }
}

/// Sets the affinity of every thread of the process but the calling one (threads that ended
/// meanwhile are skipped).
fn set_others(set: &CpuSet) {
    let me = gettid();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return;
    };
    for tid in tasks
        .flatten()
        .filter_map(|t| t.file_name().to_str()?.parse().ok())
    {
        if let Some(pid) = Pid::from_raw(tid).filter(|&p| p != me) {
            let _ = sched_setaffinity(Some(pid), set);
        }
    }
}

/// Memory locked (current and future pages) until dropped.
#[derive(Debug)]
pub struct Locked;

impl Locked {
    /// Locks the process's memory; a note for the log when not permitted (`RLIMIT_MEMLOCK`,
    /// `CAP_IPC_LOCK`).
    pub fn request() -> Result<Locked, String> {
        use rustix::mm::{MlockAllFlags, mlockall};
        mlockall(MlockAllFlags::CURRENT | MlockAllFlags::FUTURE)
            .map(|()| Locked)
            .map_err(|e| format!("memory not locked: mlockall: {e}"))
    }
}

impl Drop for Locked {
    fn drop(&mut self) {
        let _ = rustix::mm::munlockall();
    }
}
