//! The outer loop the daemon closes itself when the drive only has torque mode: a PI on
//! velocity and a PID on position, with gains from the bench configuration and anti-windup.

use crate::plan::DriveMode;
use crate::sequencer::{Measurement, Tick};
use serde::{Deserialize, Serialize};

/// Gains of one loop. The output is a torque \[N m\].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PidGains {
    /// Proportional gain \[N m per unit of error\].
    pub kp: f64,
    /// Integral gain \[N m per unit of error per second\].
    pub ki: f64,
    /// Derivative gain on the error rate \[N m per unit of error rate\]; the velocity loop
    /// ignores it (no acceleration is measured).
    #[serde(default)]
    pub kd: f64,
}

/// Gains of both outer loops (`[controller]` in `bench.toml`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopGains {
    /// Velocity PI.
    pub velocity: PidGains,
    /// Position PID.
    pub position: PidGains,
}

impl Default for LoopGains {
    /// Gains for the simulated bench (inertia 1e-3 kg m², 1 kHz): the same as its drive's own
    /// loops (velocity 0.3 N m s/rad and 30 N m/rad; position 20 N m/rad, 200 N m/(rad s),
    /// 0.3 N m s/rad).
    fn default() -> LoopGains {
        LoopGains {
            velocity: PidGains {
                kp: 0.3,
                ki: 30.0,
                kd: 0.0,
            },
            position: PidGains {
                kp: 20.0,
                ki: 200.0,
                kd: 0.3,
            },
        }
    }
}

/// The integrator of one loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PidState {
    /// Integral term \[N m\].
    pub integral: f64,
}

/// One PID update: `u = kp e + I + kd de/dt + ff`, clamped to `±limit`, where the integral
/// `I += ki e dt` is only taken when it does not push a saturated output further
/// (conditional integration) and is itself kept within `±limit`. Pure: state by `&mut`.
pub fn pid_step(
    g: &PidGains,
    s: &mut PidState,
    error: f64,
    error_rate: f64,
    feedforward: f64,
    dt: f64,
    limit: f64,
) -> f64 {
    let base = g.kp * error + g.kd * error_rate + feedforward;
    let candidate = (s.integral + g.ki * error * dt).clamp(-limit, limit);
    let u = base + candidate;
    let winding = u.abs() > limit && u.signum() == error.signum();
    if !winding {
        s.integral = candidate;
    }
    (base + s.integral).clamp(-limit, limit)
}

/// The daemon's outer loop: turns a [`Tick`] into a torque command.
#[derive(Clone, Debug, Default)]
pub struct OuterLoop {
    /// Gains.
    pub gains: LoopGains,
    velocity: PidState,
    position: PidState,
    mode: Option<DriveMode>,
}

impl OuterLoop {
    /// A loop with these gains, integrators empty.
    pub fn new(gains: LoopGains) -> OuterLoop {
        OuterLoop {
            gains,
            ..OuterLoop::default()
        }
    }

    /// The torque to command \[N m\], within `±torque_limit`. Torque segments pass through;
    /// velocity segments use the PI, position segments the PID (error rate = setpoint rate -
    /// measured velocity). Integrators reset when the mode changes.
    pub fn torque(&mut self, tick: &Tick, m: &Measurement, dt: f64, torque_limit: f64) -> f64 {
        self.torque_with(tick, m, dt, torque_limit, 0.0)
    }

    /// [`OuterLoop::torque`] with `feedforward` \[N m\] added to the PI or PID output inside
    /// its clamp (a friction compensator's torque: the anti-windup sees the sum). Torque
    /// segments pass through unchanged.
    pub fn torque_with(
        &mut self,
        tick: &Tick,
        m: &Measurement,
        dt: f64,
        torque_limit: f64,
        feedforward: f64,
    ) -> f64 {
        if self.mode != Some(tick.mode) {
            self.velocity = PidState::default();
            self.position = PidState::default();
            self.mode = Some(tick.mode);
        }
        match tick.mode {
            DriveMode::Torque => tick.value.clamp(-torque_limit, torque_limit),
            DriveMode::Velocity => {
                let g = PidGains {
                    kd: 0.0,
                    ..self.gains.velocity
                };
                pid_step(
                    &g,
                    &mut self.velocity,
                    tick.value - m.v,
                    0.0,
                    feedforward,
                    dt,
                    torque_limit,
                )
            }
            DriveMode::Position => pid_step(
                &self.gains.position,
                &mut self.position,
                tick.value - m.x,
                tick.rate - m.v,
                feedforward,
                dt,
                torque_limit,
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integrator_does_not_wind_up_in_saturation() {
        let g = PidGains {
            kp: 1.0,
            ki: 100.0,
            kd: 0.0,
        };
        let mut s = PidState::default();
        for _ in 0..10_000 {
            assert_eq!(pid_step(&g, &mut s, 5.0, 0.0, 0.0, 1e-3, 2.0), 2.0);
        }
        // Saturated by the proportional term alone: the integral did not grow.
        assert_eq!(s.integral, 0.0);
        // The error reverses: the output leaves saturation at once.
        let u = pid_step(&g, &mut s, -0.5, 0.0, 0.0, 1e-3, 2.0);
        assert!((u - (-0.5 - 0.05)).abs() < 1e-12, "{u}");
    }

    #[test]
    fn pi_removes_a_constant_disturbance() {
        // J dv/dt = u - d with d = 0.3: the PI settles v on the setpoint, I = d.
        let g = LoopGains::default().velocity;
        let mut s = PidState::default();
        let (mut v, j, dt) = (0.0, 1e-3, 1e-3);
        for _ in 0..5000 {
            let u = pid_step(&g, &mut s, 1.0 - v, 0.0, 0.0, dt, 2.0);
            v += dt * (u - 0.3) / j;
        }
        assert!((v - 1.0).abs() < 1e-6, "{v}");
        assert!((s.integral - 0.3).abs() < 1e-6, "{}", s.integral);
    }
}
