//! Stepping through a plan tick by tick: which segment is active, its setpoint, and when its
//! stop conditions end it. Pure state machine; the daemon's control loop owns one per run.

use crate::plan::{Anchor, DriveMode, Plan, Stop, StopReason};

/// The latest measurement the loop has, in run coordinates.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Measurement {
    /// Time since the run started \[s\].
    pub t: f64,
    /// Position relative to the run's start \[rad\].
    pub x: f64,
    /// Velocity \[rad/s\].
    pub v: f64,
}

/// A segment that just ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ended {
    /// Its index.
    pub segment: usize,
    /// Which stop ended it.
    pub reason: StopReason,
    /// Run time at which it ended \[s\].
    pub t: f64,
}

/// What to command on this tick.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tick {
    /// Index of the active segment.
    pub segment: usize,
    /// Drive mode of the active segment.
    pub mode: DriveMode,
    /// Setpoint in run coordinates (anchor applied), unit of `mode`.
    pub value: f64,
    /// Time derivative of the setpoint (feedforward for the outer loop).
    pub rate: f64,
    /// Time since the segment started \[s\].
    pub t_segment: f64,
    /// True on the first tick of a segment.
    pub started: bool,
    /// The segment that ended on this tick, if any (the last one, when several were skipped).
    pub ended: Option<Ended>,
}

/// Walks a [`Plan`]: call [`Sequencer::tick`] once per control period with the latest
/// measurement; it returns the command, or `None` once the last segment has ended.
#[derive(Clone, Debug, Default)]
pub struct Sequencer {
    index: usize,
    started: bool,
    t0: f64,
    x0: f64,
    settled_s: f64,
    last_t: f64,
    finished: Option<Ended>,
    /// Segments passed over without a tick (measured whole by the run this one continues).
    skip: Vec<usize>,
}

impl Sequencer {
    /// At the start of the plan.
    pub fn new() -> Sequencer {
        Sequencer::default()
    }

    /// At the start of the plan, passing over the segments `skip` (a continuation measures
    /// only what the run it continues did not finish; the segments keep their indices, so
    /// the samples of a chain line up with one plan).
    pub fn skipping(skip: Vec<usize>) -> Sequencer {
        Sequencer {
            skip,
            ..Sequencer::default()
        }
    }

    /// Index of the active segment (== number of segments when finished).
    pub fn segment(&self) -> usize {
        self.index
    }

    /// How the last segment ended, once the plan is done.
    pub fn finished(&self) -> Option<Ended> {
        self.finished
    }

    fn stop_reason(&mut self, plan: &Plan, m: &Measurement) -> Option<StopReason> {
        let seg = &plan.segments[self.index];
        let t = m.t - self.t0;
        let dt = (m.t - self.last_t).max(0.0);
        let half = 0.5 * plan.period_s();
        let target_v = match seg.mode {
            DriveMode::Velocity => seg.setpoint.value(t),
            _ => 0.0,
        };
        let mut reason = None;
        for stop in &seg.stops {
            let hit = match stop {
                Stop::Duration { s } => (t >= s - half).then_some(StopReason::Duration),
                Stop::Motion { threshold_rad, .. } => {
                    ((m.x - self.x0).abs() > *threshold_rad).then_some(StopReason::Motion)
                }
                Stop::Settled {
                    tolerance_rad_s,
                    hold_s,
                } => {
                    if (m.v - target_v).abs() <= *tolerance_rad_s {
                        self.settled_s += dt;
                    } else {
                        self.settled_s = 0.0;
                    }
                    (self.settled_s >= hold_s - half).then_some(StopReason::Settled)
                }
                Stop::Limit { level } => {
                    (seg.setpoint.value(t).abs() > *level).then_some(StopReason::Limit)
                }
                Stop::TrackingError { bound_rad } => {
                    let reference = seg.setpoint.value(t) + self.offset(seg);
                    ((m.x - reference).abs() > *bound_rad).then_some(StopReason::TrackingError)
                }
            };
            if reason.is_none() {
                reason = hit;
            }
        }
        reason
    }

    /// What a position setpoint of `seg` is measured from, in run coordinates.
    fn offset(&self, seg: &crate::Segment) -> f64 {
        match (seg.mode, seg.anchor) {
            (DriveMode::Position, Anchor::SegmentStart) => self.x0,
            _ => 0.0,
        }
    }

    fn begin(&mut self, m: &Measurement) {
        self.started = true;
        self.t0 = m.t;
        self.x0 = m.x;
        self.settled_s = 0.0;
    }

    /// Advances to time `m.t` with measurement `m`; returns what to command on this tick.
    pub fn tick(&mut self, plan: &Plan, m: &Measurement) -> Option<Tick> {
        let mut ended = None;
        let mut fresh = false;
        loop {
            if self.index >= plan.segments.len() {
                self.finished = self.finished.or(ended);
                return None;
            }
            if !self.started && self.skip.contains(&self.index) {
                self.index += 1;
                continue;
            }
            if !self.started {
                self.begin(m);
                fresh = true;
                self.last_t = m.t;
            }
            match self.stop_reason(plan, m) {
                Some(reason) => {
                    let e = Ended {
                        segment: self.index,
                        reason,
                        t: m.t,
                    };
                    ended = Some(e);
                    self.finished = Some(e);
                    self.index += 1;
                    self.started = false;
                }
                None => break,
            }
        }
        self.finished = None;
        self.last_t = m.t;
        let seg = &plan.segments[self.index];
        let t = m.t - self.t0;
        let offset = self.offset(seg);
        Some(Tick {
            segment: self.index,
            mode: seg.mode,
            value: seg.setpoint.value(t) + offset,
            rate: seg.setpoint.rate(t),
            t_segment: t,
            started: fresh,
            ended,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Role, Segment, Tag};
    use crate::{BenchLimits, Setpoint};

    fn seg(mode: DriveMode, setpoint: Setpoint, stops: Vec<Stop>, anchor: Anchor) -> Segment {
        Segment {
            label: "s".into(),
            tag: Tag {
                role: Role::Ramp,
                value: 0.0,
                direction: 1,
                repeat: 0,
            },
            mode,
            setpoint,
            anchor,
            stops,
            expected_s: 1.0,
            compensator: None,
        }
    }

    fn plan(segments: Vec<Segment>) -> Plan {
        Plan {
            kind: "test".into(),
            name: "test".into(),
            limits: BenchLimits::sim_default(),
            segments,
        }
    }

    fn m(t: f64, x: f64, v: f64) -> Measurement {
        Measurement { t, x, v }
    }

    #[test]
    fn motion_limit_settled_and_duration_end_segments_in_order() {
        let p = plan(vec![
            seg(
                DriveMode::Torque,
                Setpoint::Ramp {
                    start: 0.0,
                    rate: 1.0,
                },
                vec![
                    Stop::Motion {
                        counts: 10,
                        threshold_rad: 1e-3,
                    },
                    Stop::Limit { level: 0.5 },
                    Stop::Duration { s: 10.0 },
                ],
                Anchor::Run,
            ),
            seg(
                DriveMode::Torque,
                Setpoint::Ramp {
                    start: 0.0,
                    rate: 1.0,
                },
                vec![Stop::Limit { level: 0.5 }, Stop::Duration { s: 10.0 }],
                Anchor::Run,
            ),
            seg(
                DriveMode::Velocity,
                Setpoint::constant(1.0),
                vec![
                    Stop::Settled {
                        tolerance_rad_s: 0.1,
                        hold_s: 0.01,
                    },
                    Stop::Duration { s: 10.0 },
                ],
                Anchor::Run,
            ),
            seg(
                DriveMode::Position,
                Setpoint::constant(0.5),
                vec![Stop::Duration { s: 0.005 }],
                Anchor::SegmentStart,
            ),
        ]);
        let mut s = Sequencer::new();
        let dt = 1e-3;
        let mut log = Vec::new();
        let mut t = 0.0;
        let mut x = 2.0;
        for k in 0..2000 {
            t = k as f64 * dt;
            // Motion of 2 mrad at t = 0.1 s ends the first segment.
            if k == 100 {
                x += 2e-3;
            }
            // Velocity reaches 0.95 from t = 0.8 s on.
            let v = if t >= 0.8 { 0.95 } else { 0.0 };
            let Some(tick) = s.tick(&p, &m(t, x, v)) else {
                break;
            };
            if let Some(e) = tick.ended {
                log.push((e.segment, e.reason, (e.t * 1e3).round() as i64));
                assert!(tick.started);
            }
            if tick.segment == 3 {
                // Anchored at the position where the segment started.
                assert!((tick.value - (x + 0.5)).abs() < 1e-12);
            }
        }
        assert_eq!(
            log,
            vec![
                (0, StopReason::Motion, 100),
                // 0.5 N m is reached at 0.5 s of segment time; the value beyond is not issued.
                (1, StopReason::Limit, 601),
                (2, StopReason::Settled, 809),
            ]
        );
        assert_eq!(s.finished().map(|e| e.reason), Some(StopReason::Duration));
        assert!(t < 0.82, "{t}");
        assert!(s.tick(&p, &m(t + dt, x, 0.0)).is_none());
    }

    #[test]
    fn a_continuation_passes_over_the_finished_segments_and_keeps_their_indices() {
        let timed = |v: f64| {
            seg(
                DriveMode::Velocity,
                Setpoint::constant(v),
                vec![Stop::Duration { s: 0.01 }],
                Anchor::Run,
            )
        };
        let p = plan(vec![timed(1.0), timed(2.0), timed(3.0), timed(4.0)]);
        let mut s = Sequencer::skipping(vec![0, 2]);
        let mut seen = Vec::new();
        for k in 0..100 {
            let Some(tick) = s.tick(&p, &m(k as f64 * 1e-3, 0.0, 0.0)) else {
                break;
            };
            if tick.started {
                seen.push((tick.segment, tick.value));
            }
        }
        // Segments 1 and 3 only, each from its own start, with its own index and setpoint.
        assert_eq!(seen, vec![(1, 2.0), (3, 4.0)]);
        assert_eq!(s.segment(), 4);
    }

    #[test]
    fn a_tracking_error_past_its_bound_ends_the_segment_at_once() {
        let mut track = seg(
            DriveMode::Position,
            Setpoint::Ramp {
                start: 0.0,
                rate: 1.0,
            },
            vec![
                Stop::TrackingError { bound_rad: 0.1 },
                Stop::Duration { s: 10.0 },
            ],
            Anchor::SegmentStart,
        );
        track.compensator = Some(0);
        let p = plan(vec![track.clone(), track]);
        let mut s = Sequencer::new();
        // Anchored at 2 rad; the bench stays there while the reference moves on at 1 rad/s.
        let at = |t: f64| Measurement { t, x: 2.0, v: 0.0 };
        let first = s.tick(&p, &at(0.0)).unwrap();
        assert_eq!(first.value, 2.0);
        let mut t = 0.0;
        let ended = loop {
            t += 1e-3;
            let tick = s.tick(&p, &at(t)).unwrap();
            if let Some(e) = tick.ended {
                break e;
            }
        };
        assert_eq!(
            (ended.segment, ended.reason),
            (0, StopReason::TrackingError)
        );
        assert!((t - 0.101).abs() < 1.5e-3, "{t}");
    }
}
