//! Every scan of a DAQ's hardware-timed stream recorded as a sample, stamped with the DAQ's
//! own clock (mapped onto the bench's, [`super::super::daq::ClockMap`]), however slow the
//! control period: at 2 kHz scans and a 1 kHz loop a run stores two samples a tick.
//!
//! **Alignment.** A scan carries the torque (and, when the counter is the position source,
//! the position); the drive's feedback is read once a tick, stamped at the middle of its
//! transaction. A scan between the previous tick's drive read and this tick's takes the
//! drive's position and velocity linearly interpolated between the two; a scan at or after
//! this tick's read (taken during the transaction's second half) holds this read's values.
//! The command, segment and motor torque are the tick's. The stamps are the DAQ's scan clock
//! from the run's first scan on, so consecutive samples are exactly a scan period apart. The lockstep models step on every
//! scan, over the scan period.

use super::{LoopState, push_row};
use crate::control::io::{AlignedScan, BenchIo};
use crate::control::stop::StopReason;
use experiments::{DriveMode, Flags, Sample, Tick};

/// What the loop keeps for the scans between ticks.
#[derive(Debug)]
pub(super) struct ScanRows {
    /// This tick's scans (reused: no allocation at a tick).
    scans: Vec<AlignedScan>,
    /// The previous tick's drive read: (t, x, v).
    prev: Option<(f64, f64, f64)>,
    /// A segment started at a tick that had no scan: its first scan says so.
    start_pending: bool,
    /// Bench time − DAQ time fixed at the run's first scan: the recorded stamps are the
    /// DAQ's own clock, evenly spaced (the clock map, which a faster packet may move by
    /// microseconds, only aligns the drive's reads).
    origin: Option<f64>,
}

impl Default for ScanRows {
    fn default() -> ScanRows {
        ScanRows {
            scans: Vec::with_capacity(4096),
            prev: None,
            start_pending: false,
            origin: None,
        }
    }
}

/// Records the scans that arrived since the last tick, one sample each (`at_read`: the tick's
/// sample, stamped at the drive's read; `dt`: the scan period). Scans before the run's first
/// tick are not part of the run.
pub(super) async fn record(
    state: &mut LoopState<'_>,
    io: &mut impl BenchIo,
    tick: &Tick,
    at_read: &Sample,
    dt: f64,
) -> Result<(), StopReason> {
    let mut scans = std::mem::take(&mut state.scans.scans);
    scans.clear();
    io.take_scans(&mut scans);
    let now = (at_read.t, at_read.x, at_read.v);
    let prev = state.scans.prev.replace(now).unwrap_or(now);
    let torque_mode = tick.mode == DriveMode::Torque;
    let mut started = tick.started || state.scans.start_pending;
    let mut result = Ok(());
    for s in &scans {
        let t = s.t_s - state.t0;
        if t < 0.0 {
            continue;
        }
        let origin = *state.scans.origin.get_or_insert(s.t_s - s.t_daq_s);
        let stamp = s.t_daq_s + origin - state.t0;
        let row = row(
            at_read,
            s,
            (stamp, between(prev, now, t)),
            state.x0,
            started,
        );
        result = push_row(state, &row, torque_mode, started, dt).await;
        started = false;
        if result.is_err() {
            break;
        }
    }
    state.scans.start_pending = started;
    state.scans.scans = scans;
    result
}

/// The sample of scan `s` at run time `t`, the drive's (x, v) aligned to it as `xv`.
fn row(
    at_read: &Sample,
    s: &AlignedScan,
    (t, xv): (f64, (f64, f64)),
    x0: f64,
    started: bool,
) -> Sample {
    let mut flags = Flags(at_read.flags.0 & !(Flags::SEGMENT_START.0 | Flags::SENSOR_STALE.0));
    if started {
        flags = flags.with(Flags::SEGMENT_START);
    }
    Sample {
        t,
        x: s.position_rad.map_or(xv.0, |p| p - x0),
        v: xv.1,
        torque_sensor: s.torque_nm,
        flags,
        ..*at_read
    }
}

/// The drive's (x, v) at run time `t`: linear between the reads `a` and `b` (t, x, v) when
/// `t` is before `b`, `b`'s from it on (and `a`'s before `a`).
pub(super) fn between(a: (f64, f64, f64), b: (f64, f64, f64), t: f64) -> (f64, f64) {
    if t >= b.0 || b.0 <= a.0 {
        return (b.1, b.2);
    }
    let w = ((t - a.0) / (b.0 - a.0)).max(0.0);
    (a.1 + w * (b.1 - a.1), a.2 + w * (b.2 - a.2))
}

#[cfg(test)]
mod tests {
    use super::between;

    #[test]
    fn a_scan_between_two_drive_reads_is_interpolated_and_one_after_the_newest_holds_it() {
        let (a, b) = ((1.0e-3, 0.0, 10.0), (2.0e-3, 4.0, 20.0));
        assert_eq!(between(a, b, 1.25e-3), (1.0, 12.5));
        assert_eq!(between(a, b, 1.0e-3), (0.0, 10.0));
        assert_eq!(between(a, b, 2.0e-3), (4.0, 20.0));
        assert_eq!(
            between(a, b, 2.4e-3),
            (4.0, 20.0),
            "after the newest read: held"
        );
        assert_eq!(
            between(a, b, 0.5e-3),
            (0.0, 10.0),
            "before the older read: its values"
        );
        assert_eq!(
            between(b, b, 1.5e-3),
            (4.0, 20.0),
            "the first tick: one read"
        );
    }
}
