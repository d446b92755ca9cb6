//! The per-tick judgement of the control loop as a pure state machine: what the drive and the
//! sensor answered this tick (or that they did not), the time, the limits → the measured
//! values to record, or the reason the run must stop. No I/O and no clock: the loop's shell
//! (`tick.rs`) does the transactions and hands the results in, so every stop reason is
//! unit-tested here without devices.
//!
//! Each device has its own error budget and its own staleness watch, and both are judged on
//! every tick whether the device answered or not: a silent sensor cannot hide behind a healthy
//! drive (they used to share one counter that every drive reply reset), and a stall is noticed
//! while the reads are timing out, not only on the next successful one.

use super::safety::Guard;
use super::stop::{Device, StopReason};
use protocols::{DriveFeedback, TorqueReading};

/// Time constant of the low-pass filter on velocity derived from position \[s\].
///
/// Without velocity feedback the velocity is the backward difference of the position, filtered
/// by a first-order low-pass with this time constant (cut-off ≈ 32 Hz): one encoder count of
/// 2^17 per turn at 1 kHz is 0.048 rad/s of raw difference, 0.0096 rad/s after the filter's
/// first step, and the lag it adds (5 ms) is far below the limit checks' reaction.
pub const DERIVED_VELOCITY_TAU_S: f64 = 0.005;

/// The rules of one run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rules {
    /// Limits and margin.
    pub guard: Guard,
    /// Consecutive failed transactions tolerated per device (0: the first fails the run).
    pub comm_errors: u32,
    /// No new torque-sensor sample for this long fails the run \[s\] (0: never).
    pub sensor_stall_s: f64,
    /// No new drive heartbeat for this long fails the run \[s\] (0: never; only judged when the
    /// drive publishes a heartbeat).
    pub drive_stall_s: f64,
}

/// What the devices answered this tick.
#[derive(Clone, Debug, PartialEq)]
pub struct TickInput {
    /// Run time of the tick \[s\].
    pub t: f64,
    /// The drive's feedback, or why the transaction failed.
    pub drive: Result<DriveFeedback, String>,
    /// The sensor's reading, or why the read failed; `None` when the bench has no sensor.
    pub sensor: Option<Result<TorqueReading, String>>,
}

/// The judged measurements of one tick.
#[derive(Clone, Debug, PartialEq)]
pub struct Judged {
    /// Position relative to the run's start \[rad\].
    pub x: f64,
    /// Velocity \[rad/s\] (derived from position when the drive reports none).
    pub v: f64,
    /// Motor torque \[N m\] (NaN: not reported).
    pub torque_motor: f64,
    /// Sensor torque \[N m\] (NaN: no sensor; the last good value while a read failed).
    pub torque_sensor: f64,
    /// The sensor delivered a new sample this tick.
    pub sensor_fresh: bool,
    /// A tolerated fault to write into the run's log.
    pub note: Option<String>,
    /// A limit breach: record this sample, then stop.
    pub then_stop: Option<StopReason>,
}

/// Consecutive failures of one device against its budget.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Budget {
    failures: u32,
}

impl Budget {
    /// Counts a transaction; true when the failures in a row exceed `tolerated`.
    fn count(&mut self, ok: bool, tolerated: u32) -> bool {
        self.failures = if ok { 0 } else { self.failures + 1 };
        self.failures > tolerated
    }
}

/// Freshness of a published value, judged on its heartbeat (or, without one, on the value
/// changing), whether this tick's read succeeded or not.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Freshness {
    last_key: Option<u64>,
    since: f64,
}

impl Freshness {
    /// Notes a read value; returns whether it is new.
    fn seen(&mut self, t: f64, key: u64) -> bool {
        let fresh = self.last_key != Some(key);
        if fresh {
            self.last_key = Some(key);
            self.since = t;
        }
        fresh
    }

    /// How long nothing new has arrived, if longer than `limit_s` (> 0).
    fn stalled(&self, t: f64, limit_s: f64) -> Option<f64> {
        let age = t - self.since;
        (limit_s > 0.0 && age > limit_s).then_some(age)
    }
}

/// The judge of one run: owns the per-device health and the last good values.
#[derive(Clone, Debug, PartialEq)]
pub struct Judge {
    rules: Rules,
    x0: f64,
    drive_budget: Budget,
    sensor_budget: Budget,
    sensor: Freshness,
    drive_beat: Freshness,
    last_fb: DriveFeedback,
    last_torque: f64,
    /// (t, x) of the previous tick and the filtered derived velocity.
    derived: Option<(f64, f64, f64)>,
}

impl Judge {
    /// A judge for a run whose position is measured relative to `x0` (rad, as the drive reads).
    pub fn new(rules: Rules, x0: f64) -> Judge {
        Judge {
            rules,
            x0,
            drive_budget: Budget { failures: 0 },
            sensor_budget: Budget { failures: 0 },
            sensor: Freshness {
                last_key: None,
                since: 0.0,
            },
            drive_beat: Freshness {
                last_key: None,
                since: 0.0,
            },
            last_fb: DriveFeedback::default(),
            last_torque: f64::NAN,
            derived: None,
        }
    }

    /// Judges one tick: the measured values, or the reason to stop now.
    pub fn tick(&mut self, input: TickInput) -> Result<Judged, StopReason> {
        let t = input.t;
        let mut note = None;
        let fb = match input.drive {
            Ok(fb) => {
                self.drive_budget.count(true, self.rules.comm_errors);
                if let Some(beat) = fb.heartbeat {
                    self.drive_beat.seen(t, beat);
                }
                self.last_fb = fb;
                fb
            }
            Err(detail) => {
                let fault = StopReason::CommsFault {
                    device: Device::Drive,
                    detail,
                };
                if self.drive_budget.count(false, self.rules.comm_errors) {
                    return Err(fault);
                }
                note = Some(fault.to_string());
                self.last_fb
            }
        };
        if self.last_fb.heartbeat.is_some()
            && let Some(age) = self.drive_beat.stalled(t, self.rules.drive_stall_s)
        {
            return Err(StopReason::DriveStall { after_s: age });
        }
        let (torque_sensor, sensor_fresh) = match input.sensor {
            None => (f64::NAN, true),
            Some(reading) => {
                let (torque, fresh, sensor_note) = self.judge_sensor(t, reading)?;
                note = note.or(sensor_note);
                (torque, fresh)
            }
        };
        if fb.fault == Some(true) {
            return Err(StopReason::DriveFault {
                code: fb.fault_code.unwrap_or(0),
            });
        }
        if fb.enabled == Some(false) {
            return Err(StopReason::DriveDisabled {
                status: fb.status.unwrap_or(0),
            });
        }
        let x = fb.position_rad.map_or(f64::NAN, |p| p - self.x0);
        let v = match fb.velocity_rad_s {
            Some(v) => v,
            None => self.derive_velocity(t, x),
        };
        let torque_motor = fb.torque_nm.unwrap_or(f64::NAN);
        let then_stop = self
            .rules
            .guard
            .check(x, v, torque_motor)
            .map(StopReason::LimitBreach);
        Ok(Judged {
            x,
            v,
            torque_motor,
            torque_sensor,
            sensor_fresh,
            note,
            then_stop,
        })
    }

    /// The sensor's part: (torque, fresh, note) or the reason to stop.
    fn judge_sensor(
        &mut self,
        t: f64,
        reading: Result<TorqueReading, String>,
    ) -> Result<(f64, bool, Option<String>), StopReason> {
        let (torque, fresh, note) = match reading {
            Ok(r) => {
                self.sensor_budget.count(true, self.rules.comm_errors);
                if r.fault == Some(true) {
                    return Err(StopReason::SensorFault {
                        status: r.status.unwrap_or(0),
                    });
                }
                let fresh = self
                    .sensor
                    .seen(t, r.heartbeat.unwrap_or(r.torque_nm.to_bits()));
                self.last_torque = r.torque_nm;
                (r.torque_nm, fresh, None)
            }
            Err(detail) => {
                let fault = StopReason::CommsFault {
                    device: Device::TorqueSensor,
                    detail,
                };
                if self.sensor_budget.count(false, self.rules.comm_errors) {
                    return Err(fault);
                }
                (self.last_torque, false, Some(fault.to_string()))
            }
        };
        if let Some(age) = self.sensor.stalled(t, self.rules.sensor_stall_s) {
            return Err(StopReason::SensorStall { after_s: age });
        }
        Ok((torque, fresh, note))
    }

    /// Backward difference of the position through a first-order low-pass
    /// ([`DERIVED_VELOCITY_TAU_S`]); 0 on the first tick.
    fn derive_velocity(&mut self, t: f64, x: f64) -> f64 {
        let v = match self.derived {
            Some((t_prev, x_prev, v_prev)) if t > t_prev && x.is_finite() => {
                let dt = t - t_prev;
                let raw = (x - x_prev) / dt;
                let a = dt / (DERIVED_VELOCITY_TAU_S + dt);
                v_prev + a * (raw - v_prev)
            }
            Some((_, _, v_prev)) => v_prev,
            None => 0.0,
        };
        self.derived = Some((t, x, v));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use experiments::BenchLimits;

    fn rules() -> Rules {
        Rules {
            guard: Guard::new(BenchLimits::sim_default(), 0.1),
            comm_errors: 1,
            sensor_stall_s: 0.05,
            drive_stall_s: 0.05,
        }
    }

    fn fb(x: f64, beat: u64) -> DriveFeedback {
        DriveFeedback {
            position_rad: Some(x),
            velocity_rad_s: Some(0.5),
            torque_nm: Some(0.2),
            status: Some(0x0237),
            enabled: Some(true),
            fault: Some(false),
            fault_code: Some(0),
            mode: None,
            heartbeat: Some(beat),
        }
    }

    fn reading(torque: f64, beat: u64) -> TorqueReading {
        TorqueReading {
            torque_nm: torque,
            status: Some(0),
            valid: Some(true),
            fault: Some(false),
            heartbeat: Some(beat),
        }
    }

    fn ok_tick(k: u64) -> TickInput {
        TickInput {
            t: k as f64 * 1e-3,
            drive: Ok(fb(10.0, k)),
            sensor: Some(Ok(reading(0.3, k))),
        }
    }

    fn failed(r: Result<Judged, StopReason>) -> String {
        match r {
            Err(s) if s.status() == run_store::RunStatus::Failed => s.to_string(),
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    #[test]
    fn a_healthy_tick_gives_values_relative_to_the_start() {
        let mut j = Judge::new(rules(), 9.0);
        let s = j.tick(ok_tick(0)).unwrap();
        assert_eq!(
            (s.x, s.v, s.torque_motor, s.torque_sensor),
            (1.0, 0.5, 0.2, 0.3)
        );
        assert!(s.sensor_fresh && s.note.is_none() && s.then_stop.is_none());
    }

    #[test]
    fn a_silent_sensor_fails_on_its_own_budget_while_the_drive_answers() {
        let mut j = Judge::new(rules(), 0.0);
        j.tick(ok_tick(0)).unwrap();
        let silent = |k: u64| TickInput {
            t: k as f64 * 1e-3,
            drive: Ok(fb(0.0, k)),
            sensor: Some(Err("timeout: no reply within 50 ms".into())),
        };
        let first = j.tick(silent(1)).unwrap();
        assert!(!first.sensor_fresh);
        assert_eq!(first.torque_sensor, 0.3, "the last good value is held");
        assert!(first.note.unwrap().contains("torque sensor"));
        assert!(failed(j.tick(silent(2))).starts_with("comms fault: torque sensor: timeout"));
    }

    #[test]
    fn a_stall_is_judged_while_reads_fail() {
        // A generous budget: the stall, not the budget, ends the run.
        let mut j = Judge::new(
            Rules {
                comm_errors: 100,
                ..rules()
            },
            0.0,
        );
        j.tick(ok_tick(0)).unwrap();
        for k in 1..=50 {
            let r = j.tick(TickInput {
                t: k as f64 * 1e-3,
                drive: Ok(fb(0.0, k)),
                sensor: Some(Err("timeout".into())),
            });
            assert!(r.is_ok(), "tick {k}: {r:?}");
        }
        let r = j.tick(TickInput {
            t: 0.051,
            drive: Ok(fb(0.0, 51)),
            sensor: Some(Err("timeout".into())),
        });
        assert_eq!(failed(r), "torque sensor stall: no new sample for 51 ms");
    }

    #[test]
    fn a_stuck_sensor_stalls_on_its_unchanged_heartbeat() {
        let mut j = Judge::new(rules(), 0.0);
        for k in 0..=50 {
            let r = j.tick(TickInput {
                t: k as f64 * 1e-3,
                drive: Ok(fb(0.0, k)),
                sensor: Some(Ok(reading(0.3, 7))),
            });
            assert!(r.is_ok());
        }
        assert!(
            failed(j.tick(TickInput {
                t: 0.052,
                drive: Ok(fb(0.0, 52)),
                sensor: Some(Ok(reading(0.3, 7))),
            }))
            .starts_with("torque sensor stall")
        );
    }

    #[test]
    fn a_silent_drive_fails_on_its_budget_and_a_stuck_one_on_its_heartbeat() {
        let mut j = Judge::new(rules(), 0.0);
        j.tick(ok_tick(0)).unwrap();
        let silent = |k: u64| TickInput {
            t: k as f64 * 1e-3,
            drive: Err("timeout".into()),
            sensor: Some(Ok(reading(0.3, k))),
        };
        assert!(j.tick(silent(1)).unwrap().note.is_some());
        assert_eq!(failed(j.tick(silent(2))), "comms fault: drive: timeout");

        let mut j = Judge::new(rules(), 0.0);
        for k in 0..=50 {
            j.tick(TickInput {
                t: k as f64 * 1e-3,
                drive: Ok(fb(0.0, 3)),
                sensor: Some(Ok(reading(0.3, k))),
            })
            .unwrap();
        }
        let r = j.tick(TickInput {
            t: 0.06,
            drive: Ok(fb(0.0, 3)),
            sensor: Some(Ok(reading(0.3, 60))),
        });
        assert!(failed(r).starts_with("drive stall: no new feedback"));
    }

    #[test]
    fn drive_and_sensor_faults_and_a_lost_enable_stop_the_run() {
        let mut j = Judge::new(rules(), 0.0);
        let mut tripped = fb(0.0, 1);
        tripped.fault = Some(true);
        tripped.fault_code = Some(0x2310);
        let r = j.tick(TickInput {
            drive: Ok(tripped),
            ..ok_tick(1)
        });
        assert_eq!(failed(r), "drive fault (code 0x2310)");

        let mut off = fb(0.0, 2);
        off.enabled = Some(false);
        off.status = Some(0x0250);
        let r = Judge::new(rules(), 0.0).tick(TickInput {
            drive: Ok(off),
            ..ok_tick(2)
        });
        assert_eq!(
            failed(r),
            "the drive left operation enabled (status 0x0250)"
        );

        let mut bad = reading(0.3, 1);
        bad.fault = Some(true);
        bad.status = Some(0x8001);
        let r = Judge::new(rules(), 0.0).tick(TickInput {
            sensor: Some(Ok(bad)),
            ..ok_tick(1)
        });
        assert_eq!(failed(r), "torque sensor fault (status 0x8001)");
    }

    #[test]
    fn a_breach_is_recorded_then_stops() {
        let mut j = Judge::new(rules(), 0.0);
        let mut fast = fb(0.0, 1);
        fast.velocity_rad_s = Some(-23.0);
        let s = j
            .tick(TickInput {
                drive: Ok(fast),
                ..ok_tick(1)
            })
            .unwrap();
        assert_eq!(s.v, -23.0);
        match s.then_stop {
            Some(r @ StopReason::LimitBreach(b)) => {
                assert_eq!((b.quantity, b.limit), ("velocity", 20.0));
                assert!(r.to_string().starts_with("limit breach: measured velocity"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn without_velocity_feedback_the_velocity_follows_the_position() {
        // 2 rad/s ramp sampled at 1 kHz: the filtered difference converges to 2 and the limit
        // check sees a derived overspeed.
        let mut j = Judge::new(rules(), 0.0);
        let mut v = 0.0;
        for k in 0..100u64 {
            let t = k as f64 * 1e-3;
            let mut f = fb(2.0 * t, k);
            f.velocity_rad_s = None;
            v = j
                .tick(TickInput {
                    t,
                    drive: Ok(f),
                    sensor: None,
                })
                .unwrap()
                .v;
        }
        assert!((v - 2.0).abs() < 1e-6, "{v}");
        let mut j = Judge::new(rules(), 0.0);
        let mut stop = None;
        for k in 0..100u64 {
            let t = k as f64 * 1e-3;
            let mut f = fb(30.0 * t, k);
            f.velocity_rad_s = None;
            stop = j
                .tick(TickInput {
                    t,
                    drive: Ok(f),
                    sensor: None,
                })
                .unwrap()
                .then_stop;
            if stop.is_some() {
                break;
            }
        }
        assert!(matches!(stop, Some(StopReason::LimitBreach(b)) if b.quantity == "velocity"));
    }
}
