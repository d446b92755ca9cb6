//! What a Linux PC needs to keep a 1 kHz loop on time: SCHED_FIFO for the loop thread, CPUs
//! that stay out of deep idle states and memory locked while a run goes on.
//!
//! The loop is pinned only when its configuration asks (`loop_cpu`, [`super::cpus`]; `bench
//! perf loop --sim` asks by default), and then with the simulated bench's threads beside it:
//! on a 2-vCPU VM, the loop on one CPU and the simulated bench with the rest of the process on
//! the other made 4 kHz ticks overrun 2 to 60 times as often (each Modbus round trip then
//! waits for the other vCPU to wake); isolating a CPU is the bench PC's setting (`isolcpus`,
//! `taskset`), measured with `bench perf loop --floor`.
//!
//! A CPU (or a virtual CPU) that halts when idle takes from tens of microseconds to several
//! milliseconds to wake for the next deadline; on our 2-core VMs an idle-halting vCPU gave a
//! p99 sleep overshoot of ~0.7 ms against ~0.1 ms with the idle state held at polling. Writing
//! 0 to `/dev/cpu_dma_latency` and keeping the file open is the kernel's PM QoS request for
//! that (cyclictest does the same); the request ends when the file is closed.

use std::fs::File;

/// Puts the calling thread under SCHED_FIFO at `priority` (threads it spawns inherit it);
/// returns a note for the log when that was not possible (it then runs at normal priority).
pub fn realtime(priority: u8) -> Option<String> {
    use thread_priority::{
        RealtimeThreadSchedulePolicy, ThreadPriority, ThreadSchedulePolicy,
        set_thread_priority_and_policy, thread_native_id,
    };
    if priority == 0 {
        return None;
    }
    let value = priority.try_into().ok()?;
    set_thread_priority_and_policy(
        thread_native_id(),
        ThreadPriority::Crossplatform(value),
        ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo),
    )
    .err()
    .map(|e| format!("normal priority: SCHED_FIFO {priority} refused ({e:?})"))
}

/// Builds `builder`'s runtime with every thread it starts under SCHED_FIFO at `priority`
/// (threads they spawn inherit it). The second value takes the note of a refusal, once a
/// thread has started: the simulated bench, in process or alone, stands in for hardware.
pub fn realtime_runtime(
    builder: &mut tokio::runtime::Builder,
    priority: u8,
) -> std::io::Result<(tokio::runtime::Runtime, impl Fn() -> Option<String> + use<>)> {
    use std::sync::{Arc, Mutex};
    let note: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
    let set = note.clone();
    let rt = builder
        .on_thread_start(move || {
            if let Some(e) = realtime(priority) {
                *set.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
            }
        })
        .build()?;
    let take = move || note.lock().unwrap_or_else(|p| p.into_inner()).take();
    Ok((rt, take))
}

/// Holds the CPUs at zero wake-up latency (PM QoS) until dropped.
#[derive(Debug)]
pub struct NoDeepIdle {
    _qos: File,
}

impl NoDeepIdle {
    /// Requests zero wake-up latency; a note for the log when the kernel refuses (no such
    /// device, or no permission: the loop then runs with whatever idle states the CPUs use).
    pub fn request() -> Result<NoDeepIdle, String> {
        use std::io::Write;
        const PATH: &str = "/dev/cpu_dma_latency";
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(PATH)
            .map_err(|e| format!("CPU idle states left as they are: {PATH}: {e}"))?;
        f.write_all(&0i32.to_ne_bytes())
            .map_err(|e| format!("CPU idle states left as they are: {PATH}: {e}"))?;
        Ok(NoDeepIdle { _qos: f })
    }
}

/// Memory locked (current and future pages) until dropped, so that no tick waits for a page
/// fault.
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

/// Starts thread `name` under SCHED_FIFO at `priority` (normal scheduling if refused: the log
/// says why) with a current-thread tokio runtime of its own, and runs `body` on it: for work
/// that must not wait for the daemon's runtime, however busy its clients keep it.
pub fn spawn_with_runtime(
    name: &str,
    priority: u8,
    body: impl FnOnce(&tokio::runtime::Runtime) + Send + 'static,
) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let thread = name.to_string();
    std::thread::Builder::new()
        .name(thread.clone())
        .spawn(move || {
            if let Some(note) = realtime(priority) {
                tracing::info!("{thread} thread at {note}");
            }
            body(&runtime);
        })?;
    Ok(())
}

/// The loop's own single-threaded runtime: the devices' links live on it.
pub fn loop_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("cannot build the control loop's runtime")
}
