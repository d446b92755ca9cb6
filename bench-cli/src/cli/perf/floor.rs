//! `--floor` of `bench perf loop`: the machine's own wake-up floor, measured by `cyclictest`
//! (Debian's `rt-tests`) at the loop's period and priority, on the same CPUs, in the same run,
//! so a late tick can be told apart: the machine's, when the floor shows it too, or ours.
//!
//! cyclictest runs one thread that only sleeps to absolute deadlines and records how late it
//! woke, in a histogram of 1 µs bins (`--histfile`); the percentiles here are read off that
//! histogram the same way the loop's are read off its own (the upper edge of the bin holding
//! the rank), and wake-ups past the histogram's last bin count at cyclictest's exact maximum.

use super::super::InputError;
use serde::Serialize;
use std::path::PathBuf;
use std::process::Command;

/// The histogram's range \[µs\] (the loop's own histogram has the same).
const HIST_US: usize = 100_000;

/// The Debian package that ships `cyclictest`.
pub const PACKAGE: &str = "rt-tests";

/// One row of the side-by-side table: wake-up lateness against the absolute deadlines.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Figures {
    /// Median lateness \[µs\].
    pub p50_us: f64,
    /// 99th percentile \[µs\].
    pub p99_us: f64,
    /// 99.9th percentile \[µs\].
    pub p999_us: f64,
    /// Largest \[µs\].
    pub max_us: f64,
    /// Wake-ups later than the tick's budget (for the loop: ticks whose work ended after the
    /// next deadline).
    pub late: u64,
    /// Wake-ups measured.
    pub samples: u64,
}

/// How the floor is measured: as the loop runs.
#[derive(Clone, Copy, Debug)]
pub struct FloorRun {
    /// Control rate \[Hz\].
    pub rate_hz: f64,
    /// Duration \[s\].
    pub seconds: f64,
    /// SCHED_FIFO priority (0: normal scheduling).
    pub priority: u8,
    /// Whether the loop locks its memory.
    pub mlock: bool,
    /// The CPU the loop is pinned to (`loop_cpu`), if any: cyclictest's thread then wakes there.
    pub cpu: Option<usize>,
}

/// A cyclictest lateness histogram.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    /// Wake-ups in each 1 µs bin.
    bins: Vec<u64>,
    /// Wake-ups past the last bin.
    overflows: u64,
    /// Largest lateness \[µs\].
    max_us: f64,
}

/// `cyclictest` on PATH, or an error naming the package that ships it.
pub fn find() -> Result<PathBuf, InputError> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("cyclictest"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            InputError(format!(
                "--floor needs cyclictest, which is not on PATH: install Debian's {PACKAGE} \
                 package (apt-get install {PACKAGE})"
            ))
        })
}

/// Runs cyclictest as `run` says; returns its histogram and a note when it could not get
/// real-time priority (it then measures at normal priority, as the loop would).
pub fn measure(
    exe: &std::path::Path,
    run: FloorRun,
) -> anyhow::Result<(Histogram, Option<String>)> {
    match once(exe, run) {
        Err(e) if run.priority > 0 => {
            let fallback = FloorRun { priority: 0, ..run };
            Ok((
                once(exe, fallback)?,
                Some(format!("floor at normal priority: {e}")),
            ))
        }
        other => Ok((other?, None)),
    }
}

fn once(exe: &std::path::Path, run: FloorRun) -> anyhow::Result<Histogram> {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("histogram");
    let mut cmd = Command::new(exe);
    cmd.arg("--quiet")
        .arg(format!("--interval={}", (1e6 / run.rate_hz).round()))
        .arg(format!("--loops={}", (run.seconds * run.rate_hz).ceil()))
        .arg(format!("--histogram={HIST_US}"))
        .arg(format!("--histfile={}", file.display()));
    if run.priority > 0 {
        // cyclictest holds /dev/cpu_dma_latency at 0 by default, as the loop does then.
        cmd.arg(format!("--priority={}", run.priority));
    } else {
        cmd.args(["--policy=other", "--priority=0", "--default-system"]);
    }
    if run.mlock {
        cmd.arg("--mlockall");
    }
    if let Some(cpu) = run.cpu {
        cmd.arg(format!("--affinity={cpu}"));
    }
    let out = cmd.output()?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        anyhow::bail!(
            "cyclictest failed ({}): {}",
            out.status,
            err.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("")
        );
    }
    let text = std::fs::read_to_string(&file)?;
    Histogram::parse(&text).map_err(|e| anyhow::anyhow!("cyclictest's histogram: {e}"))
}

impl Histogram {
    /// Reads cyclictest's `--histfile` text: `BIN COUNT` lines of the first thread, then
    /// `# Max Latencies:` and `# Histogram Overflows:`.
    pub fn parse(text: &str) -> Result<Histogram, String> {
        let mut h = Histogram::default();
        let (mut max, mut overflows) = (None, None);
        for (n, line) in text.lines().enumerate() {
            let field = |prefix: &str| {
                line.strip_prefix(prefix).map(|v| {
                    let first = v.split_whitespace().next().unwrap_or("");
                    first
                        .parse::<u64>()
                        .map_err(|_| format!("line {}: {prefix} {v:?}", n + 1))
                })
            };
            if let Some(v) = field("# Max Latencies:") {
                max = Some(v?);
            } else if let Some(v) = field("# Histogram Overflows:") {
                overflows = Some(v?);
            } else if !line.starts_with('#') && !line.trim().is_empty() {
                let mut cols = line.split_whitespace().map(str::parse::<u64>);
                match (cols.next(), cols.next()) {
                    (Some(Ok(bin)), Some(Ok(count))) if bin as usize == h.bins.len() => {
                        h.bins.push(count)
                    }
                    _ => return Err(format!("line {}: not a histogram bin: {line:?}", n + 1)),
                }
            }
        }
        h.max_us = max.ok_or("no `# Max Latencies:` line")? as f64;
        h.overflows = overflows.ok_or("no `# Histogram Overflows:` line")?;
        Ok(h)
    }

    /// Wake-ups measured.
    pub fn samples(&self) -> u64 {
        self.bins.iter().sum::<u64>() + self.overflows
    }

    /// The `q` quantile \[µs\]: the upper edge of the bin holding the rank, never above the
    /// maximum; a rank among the overflows is the maximum. NaN when empty.
    fn quantile(&self, q: f64) -> f64 {
        let n = self.samples();
        if n == 0 {
            return f64::NAN;
        }
        let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
        let mut seen = 0;
        for (i, &c) in self.bins.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return ((i + 1) as f64).min(self.max_us.max(i as f64));
            }
        }
        self.max_us
    }

    /// The floor's row, counting as late the wake-ups later than `budget_us`.
    pub fn figures(&self, budget_us: f64) -> Figures {
        let first_late = budget_us.max(0.0).floor() as usize + 1;
        let late = self.bins.iter().skip(first_late).sum::<u64>() + self.overflows;
        Figures {
            p50_us: self.quantile(0.5),
            p99_us: self.quantile(0.99),
            p999_us: self.quantile(0.999),
            max_us: self.max_us,
            late,
            samples: self.samples(),
        }
    }
}

/// The floor's and a loop's rows as JSON (`floor`, `loop`, `late_ratio`, `budget_us`) and as a
/// table, for a loop of `ticks` at `rate_hz` with period statistics `stats`. A tick's budget
/// is the period less the loop's median work: a wake-up later than that ends its tick past
/// the deadline.
pub fn side_by_side(
    floor: &Histogram,
    stats: &run_store::TimingStats,
    ticks: u64,
    rate_hz: f64,
) -> (serde_json::Value, String) {
    let period_us = 1e6 / rate_hz;
    let budget_us = period_us - stats.tick_work_p50_us.unwrap_or(0.0).min(period_us);
    let floor = floor.figures(budget_us);
    let nan = |v: Option<f64>| v.unwrap_or(f64::NAN);
    let looped = Figures {
        p50_us: nan(stats.period_error_p50_us),
        p99_us: nan(stats.period_error_p99_us),
        p999_us: nan(stats.period_error_p999_us),
        max_us: nan(stats.period_error_max_us),
        late: stats.overruns,
        samples: ticks,
    };
    let late_ratio = looped.late as f64 / floor.late.max(1) as f64;
    let json = serde_json::json!({
        "floor": floor,
        "loop": looped,
        "late_ratio": late_ratio,
        "budget_us": budget_us,
    });
    (json, table(&floor, &looped, budget_us, late_ratio))
}

/// The side-by-side table for people.
pub fn table(floor: &Figures, looped: &Figures, budget_us: f64, late_ratio: f64) -> String {
    let head = format!(
        "{:<20}{:>9}{:>9}{:>10}{:>9}{:>7}{:>9}",
        "wake-up lateness", "p50 µs", "p99 µs", "p99.9 µs", "max µs", "late", "samples"
    );
    let row = |name: &str, f: &Figures| {
        format!(
            "{name:<20}{:>9.0}{:>9.0}{:>10.0}{:>9.0}{:>7}{:>9}",
            f.p50_us, f.p99_us, f.p999_us, f.max_us, f.late, f.samples
        )
    };
    format!(
        "{head}\n{}\n{}\nlate = later than the tick's budget of {budget_us:.0} µs (the period less \
         the loop's median tick work); loop late / floor late = {late_ratio:.2}",
        row("floor (cyclictest)", floor),
        row("loop", looped),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "# Histogram\n000000 000000\n000001 000002\n000002 000005\n\
        000003 000002\n000004 000000\n000005 000000\n# Total: 000000009\n\
        # Min Latencies: 00001\n# Avg Latencies: 00002\n# Max Latencies: 00750\n\
        # Histogram Overflows: 00001\n# Histogram Overflow at cycle number:\n# Thread 0: 00007\n";

    #[test]
    fn percentiles_late_wake_ups_and_overflows_come_from_the_histogram() {
        let h = Histogram::parse(FILE).unwrap();
        assert_eq!(h.samples(), 10);
        let f = h.figures(2.0);
        // Ranks 5 and 10 of 10: bin 2 (upper edge 3 µs), then the overflow at the maximum.
        assert_eq!(
            (f.p50_us, f.p99_us, f.p999_us, f.max_us),
            (3.0, 750.0, 750.0, 750.0)
        );
        // Later than 2 µs: the two in bin 3 and the overflow.
        assert_eq!((f.late, f.samples), (3, 10));
        assert_eq!(
            h.figures(1000.0).late,
            1,
            "an overflow is past any budget in range"
        );
    }

    #[test]
    fn a_damaged_histogram_is_refused_naming_the_line() {
        let gap = FILE.replace("000002 000005\n", "");
        assert!(Histogram::parse(&gap).unwrap_err().contains("line 4"));
        let cut = FILE.replace("# Max Latencies: 00750\n", "");
        assert!(
            Histogram::parse(&cut)
                .unwrap_err()
                .contains("Max Latencies")
        );
    }
}
