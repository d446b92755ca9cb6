//! A CPU of the run's own (`loop_cpu` in bench.toml): while a run goes on, the process's
//! real-time threads (the control loop, and the simulated bench when it runs in process) share
//! one CPU, and every other thread of the process (the recorder, SQLite, HTTP) keeps off it.
//!
//! Why both halves: on a 2-vCPU VM at 4 kHz, a tick whose Modbus round trip crosses to the
//! other CPU waits for that CPU to wake, and shares its stalls; and the recorder's SQLite
//! checkpoints, run on the loop's CPU, hold it in the kernel for a few hundred microseconds at a
//! time. The loop alone on one CPU with the simulated bench on another was worse than no
//! pinning (see [`super::realtime`]); the loop and the simulated bench together, the rest
//! elsewhere, was better (docs/src/performance.md#a-cpu-of-its-own).

use rustix::thread::{CpuSet, Pid, sched_getaffinity, sched_setaffinity};
use serde::{Deserialize, Serialize};

/// Which CPU `loop_cpu` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LoopCpu {
    /// That CPU, by its number.
    Index(usize),
    /// `"last"`: the highest-numbered CPU the process may use (where `isolcpus` usually
    /// leaves one).
    Named(LastCpu),
}

/// The word `"last"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LastCpu {
    /// The highest-numbered CPU the process may use.
    Last,
}

/// The CPUs the calling thread may use.
fn allowed() -> Result<Vec<usize>, String> {
    let set = sched_getaffinity(None).map_err(|e| format!("loop_cpu: the CPU mask: {e}"))?;
    Ok((0..CpuSet::MAX_CPU).filter(|&c| set.is_set(c)).collect())
}

/// The CPU `choice` names among those the calling thread may use; an error naming the
/// setting when it is not one of them, or when there is no other CPU for the rest.
pub fn choose(choice: LoopCpu) -> Result<usize, String> {
    let cpus = allowed()?;
    if cpus.len() < 2 {
        return Err(format!(
            "loop_cpu: this process may use {} CPU only; nothing pinned",
            cpus.len()
        ));
    }
    match choice {
        LoopCpu::Named(LastCpu::Last) => Ok(cpus[cpus.len() - 1]),
        LoopCpu::Index(i) if cpus.contains(&i) => Ok(i),
        LoopCpu::Index(i) => Err(format!(
            "loop_cpu = {i}: not among the CPUs this process may use ({cpus:?}); nothing pinned"
        )),
    }
}

/// The run's CPU, held until dropped (every thread of the process then may use every CPU it
/// could before).
#[derive(Debug)]
pub struct Pinned {
    cpu: usize,
    before: CpuSet,
}

impl Pinned {
    /// Pins the calling thread (the loop) and the process's other real-time threads to the CPU
    /// `choice` names and moves every other thread off it.
    pub fn apply(choice: LoopCpu) -> Result<Pinned, String> {
        let cpu = choose(choice)?;
        let before = sched_getaffinity(None).map_err(|e| format!("loop_cpu: {e}"))?;
        let mut own = CpuSet::new();
        own.set(cpu);
        let mut rest = before;
        rest.unset(cpu);
        for (tid, realtime) in threads() {
            // A thread that ended meanwhile has nothing to pin.
            let _ = sched_setaffinity(Some(tid), if realtime { &own } else { &rest });
        }
        sched_setaffinity(None, &own).map_err(|e| format!("loop_cpu = {cpu}: {e}"))?;
        Ok(Pinned { cpu, before })
    }

    /// The CPU the run's real-time threads share.
    pub fn cpu(&self) -> usize {
        self.cpu
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        for (tid, _) in threads() {
            let _ = sched_setaffinity(Some(tid), &self.before);
        }
    }
}

/// The process's threads, each with whether it runs under a real-time policy (SCHED_FIFO or
/// SCHED_RR: field 41 of `/proc/self/task/TID/stat`).
fn threads() -> Vec<(Pid, bool)> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let raw: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // The fields after the command name (which may hold spaces), from field 3 on.
            let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
            let policy: u32 = fields.get(41 - 3)?.parse().ok()?;
            Some((Pid::from_raw(raw)?, policy == 1 || policy == 2))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setting_reads_a_number_or_last() {
        #[derive(Deserialize)]
        struct T {
            loop_cpu: LoopCpu,
        }
        let parse = |s: &str| toml::from_str::<T>(s).map(|t| t.loop_cpu);
        assert_eq!(parse("loop_cpu = 3").unwrap(), LoopCpu::Index(3));
        assert_eq!(
            parse("loop_cpu = \"last\"").unwrap(),
            LoopCpu::Named(LastCpu::Last)
        );
        assert!(parse("loop_cpu = \"first\"").is_err());
        assert!(parse("loop_cpu = -1").is_err());
    }

    #[test]
    fn a_cpu_outside_the_mask_is_refused_by_name() {
        let e = choose(LoopCpu::Index(CpuSet::MAX_CPU - 1)).unwrap_err();
        assert!(e.starts_with("loop_cpu"), "{e}");
    }

    /// The loop's thread and the process's other threads are moved, and put back: on a
    /// machine with one CPU there is nothing to pin, and the setting says so.
    #[test]
    fn the_loop_gets_its_cpu_and_the_others_get_it_back() {
        let cpus = allowed().unwrap();
        let spare =
            std::thread::spawn(|| std::thread::park_timeout(std::time::Duration::from_secs(5)));
        match Pinned::apply(LoopCpu::Named(LastCpu::Last)) {
            Ok(p) => {
                assert_eq!(p.cpu(), *cpus.last().unwrap());
                assert_eq!(allowed().unwrap(), vec![p.cpu()]);
                drop(p);
                assert_eq!(allowed().unwrap(), cpus);
            }
            Err(e) => assert_eq!(cpus.len(), 1, "{e}"),
        }
        spare.thread().unpark();
        spare.join().unwrap();
    }
}
