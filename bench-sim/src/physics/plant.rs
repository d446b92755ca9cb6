//! One step of the simulated bench: drive loop, current loop, plant with the true friction
//! and the known load, encoder and torque sensor, and the sensor's noise generator.

use super::{FaultCause, Mode, Sim};
use friction::plant::{self, Applied, PlantParams as MassParams, PlantState};
use serde::{Deserialize, Serialize};
use std::f64::consts::TAU;

/// Plant time, angle and speed (a serde copy of [`PlantState`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlantStateData {
    /// Time \[s\].
    pub t: f64,
    /// Angle \[rad\].
    pub x: f64,
    /// Speed [rad/s].
    pub v: f64,
}

impl Sim {
    /// Advances the bench by `dt` \[s\] in internal steps of at most `params.step_s`.
    pub fn advance(&mut self, dt: f64) {
        let h = self.params.step_s;
        let n = (dt / h).round().max(1.0) as u64;
        let hh = dt / n as f64;
        for _ in 0..n {
            self.step(hh);
        }
    }

    /// One plant step of `dt` \[s\].
    pub fn step(&mut self, dt: f64) {
        let cap = self.max_torque_nm();
        let p = &self.params;
        let s = &mut self.state;
        if p.watchdog_s > 0.0 && s.command.enabled && s.plant.t - s.last_command_s > p.watchdog_s {
            s.fault = Some(FaultCause::Watchdog);
            s.command.enabled = false;
        }
        let rpc = p.rad_per_count();
        let angle = s.counts as f64 * rpc;
        // Drive loop → torque demand.
        let demand = if !s.command.enabled {
            0.0
        } else {
            match s.command.mode {
                Mode::Torque => s.command.torque_nm,
                Mode::Velocity => {
                    let e = s.command.velocity_rad_s - s.velocity_est_rad_s;
                    let unsat = p.velocity_kp * e + s.velocity_integral + p.velocity_ki * e * dt;
                    // Conditional integration (anti-windup).
                    if unsat.abs() < cap || unsat.signum() != e.signum() {
                        s.velocity_integral += p.velocity_ki * e * dt;
                    }
                    p.velocity_kp * e + s.velocity_integral
                }
                Mode::Position => {
                    let e = s.command.position_rad - angle;
                    let de = (e - s.position_error_prev) / dt;
                    s.position_error_prev = e;
                    let unsat = p.position_kp * e
                        + p.position_ki * (s.position_integral + e * dt)
                        + p.position_kd * de;
                    if unsat.abs() < cap || unsat.signum() != e.signum() {
                        s.position_integral += e * dt;
                    }
                    p.position_kp * e + p.position_ki * s.position_integral + p.position_kd * de
                }
            }
        };
        let demand = demand.clamp(-cap, cap);
        // Current loop: exact first-order lag; off means no torque at once.
        let prev = s.torque_nm;
        s.torque_nm = if !s.command.enabled {
            0.0
        } else if p.current_lag_s > 0.0 {
            demand + (prev - demand) * (-dt / p.current_lag_s).exp()
        } else {
            demand
        };
        // Plant with the true friction.
        let mut ps = PlantState {
            t: s.plant.t,
            x: s.plant.x,
            v: s.plant.v,
        };
        let applied = Applied::force(s.torque_nm, (s.torque_nm - prev) / dt);
        let applied = p.load.on(&applied, &ps, dt);
        s.friction_nm = plant::step(
            &mut *self.truth,
            &MassParams {
                mass: p.inertia_kg_m2,
            },
            &mut ps,
            &applied,
            dt,
        );
        s.plant = PlantStateData {
            t: ps.t,
            x: ps.x,
            v: ps.v,
        };
        // Encoder and the drive's velocity estimate.
        let counts = (ps.x / rpc).floor() as i64;
        let v_raw = (counts - s.counts) as f64 * rpc / dt;
        s.counts = counts;
        let a = if p.velocity_filter_s > 0.0 {
            1.0 - (-dt / p.velocity_filter_s).exp()
        } else {
            1.0
        };
        s.velocity_est_rad_s += a * (v_raw - s.velocity_est_rad_s);
        // Torque sensor: shaft torque into the friction element, offset, noise, low-pass,
        // resolution.
        let raw = s.friction_nm + p.sensor_offset_nm + p.sensor_noise_nm * self.rng.normal();
        let b = if p.sensor_lowpass_s > 0.0 {
            1.0 - (-dt / p.sensor_lowpass_s).exp()
        } else {
            1.0
        };
        s.sensor_filtered_nm += b * (raw - s.sensor_filtered_nm);
        s.sensor_nm = if p.sensor_resolution_nm > 0.0 {
            (s.sensor_filtered_nm / p.sensor_resolution_nm).round() * p.sensor_resolution_nm
        } else {
            s.sensor_filtered_nm
        };
    }
}

/// SplitMix64 with Box–Muller normals: seeded, reproducible, no dependency.
#[derive(Clone, Debug)]
pub(super) struct Rng {
    state: u64,
    spare: Option<f64>,
}

impl Rng {
    pub(super) fn new(seed: u64) -> Rng {
        Rng {
            state: seed,
            spare: None,
        }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1].
    fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        let r = (-2.0 * self.uniform().ln()).sqrt();
        let th = TAU * self.uniform();
        self.spare = Some(r * th.sin());
        r * th.cos()
    }
}
