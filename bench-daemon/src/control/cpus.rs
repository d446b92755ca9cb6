//! A CPU of the run's own (`loop_cpu` in bench.toml): while a run goes on, the process's
//! real-time threads (the control loop, and the simulated bench when it runs in process) share
//! one CPU, and every other thread of the process (the recorder, SQLite, HTTP) keeps off it.
//! That CPU may be one `isolcpus` set aside (outside every process's mask), as on a bench PC.
//!
//! Why both halves: on a 2-vCPU VM at 4 kHz, a tick whose Modbus round trip crosses to the
//! other CPU waits for that CPU to wake, and shares its stalls; and the recorder's SQLite
//! checkpoints, run on the loop's CPU, hold it in the kernel for a few hundred microseconds at a
//! time. The loop alone on one CPU with the simulated bench on another was worse than no
//! pinning (see [`super::realtime`]); the loop and the simulated bench together, the rest
//! elsewhere, was better (docs/src/performance.md#a-cpu-of-its-own).

pub use crate::config::{LastCpu, LoopCpu};
use rustix::thread::{CpuSet, Pid, sched_getaffinity, sched_setaffinity};

/// The CPUs the calling thread may use.
fn allowed() -> Result<Vec<usize>, String> {
    let set = sched_getaffinity(None).map_err(|e| format!("loop_cpu: the CPU mask: {e}"))?;
    Ok((0..CpuSet::MAX_CPU).filter(|&c| set.is_set(c)).collect())
}

/// The CPUs the kernel keeps out of every process's mask (`isolcpus=`), read from sysfs:
/// exactly the ones a bench PC sets aside for the loop.
fn isolated() -> Vec<usize> {
    std::fs::read_to_string("/sys/devices/system/cpu/isolated")
        .map(|list| cpu_list(&list))
        .unwrap_or_default()
}

/// A kernel CPU list (`0-2,5`); what does not parse is left out.
fn cpu_list(text: &str) -> Vec<usize> {
    let one = |s: &str| s.trim().parse::<usize>().ok();
    text.trim()
        .split(',')
        .filter_map(|part| match part.split_once('-') {
            Some((a, b)) => Some((one(a)?..=one(b)?).collect::<Vec<_>>()),
            None => one(part).map(|c| vec![c]),
        })
        .flatten()
        .collect()
}

/// The CPU `choice` names among those the loop may take (the calling thread's, and the
/// isolated ones); an error naming the setting when it is not one of them, or when no other
/// CPU would be left for the rest of the process.
pub fn choose(choice: LoopCpu) -> Result<usize, String> {
    let mask = allowed()?;
    let mut cpus: Vec<usize> = mask.iter().copied().chain(isolated()).collect();
    cpus.sort_unstable();
    cpus.dedup();
    let cpu = match choice {
        LoopCpu::Named(LastCpu::Last) => *cpus.last().ok_or("loop_cpu: no CPU in the mask")?,
        LoopCpu::Index(i) if cpus.contains(&i) => i,
        LoopCpu::Index(i) => {
            return Err(format!(
                "loop_cpu = {i}: neither among the CPUs this process may use nor isolated \
                 ({cpus:?}); nothing pinned"
            ));
        }
    };
    if !mask.iter().any(|&c| c != cpu) {
        return Err(format!(
            "loop_cpu: this process may use CPU {cpu} only, none would be left for the rest of \
             it; nothing pinned"
        ));
    }
    Ok(cpu)
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
    use serde::Deserialize;

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
    fn kernel_cpu_lists_read_as_the_kernel_writes_them() {
        assert_eq!(cpu_list("0-2,5\n"), vec![0, 1, 2, 5]);
        assert_eq!(cpu_list("3"), vec![3]);
        assert!(cpu_list("\n").is_empty());
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
        let last = choose(LoopCpu::Named(LastCpu::Last));
        match Pinned::apply(LoopCpu::Named(LastCpu::Last)) {
            Ok(p) => {
                assert_eq!(Ok(p.cpu()), last);
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
