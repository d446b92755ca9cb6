//! A simulated closed-loop ball-screw axis, the shape of the EMPS benchmark (Janot, Gautier &
//! Brunot 2019): known mass, viscous and Coulomb friction and force offset, a cascaded
//! position/velocity controller, a quantised encoder, force noise, 1 kHz records. The tests and
//! `bench perf fit` generate their `t, x, u` records with it (the real EMPS file is not shipped).

use super::Table;
use crate::identify::FitError;
use crate::identify::rng::Rng;
use crate::load::Load;
use crate::plant::{self, Applied, PlantParams, PlantState};
use crate::registry::{ModelSpec, build_model};

/// The axis, its controller and its sensors.
#[derive(Clone, Debug, PartialEq)]
pub struct BallScrew {
    /// Moving mass \[kg\].
    pub mass: f64,
    /// Viscous coefficient \[N s/m\].
    pub fv: f64,
    /// Coulomb level \[N\].
    pub fc: f64,
    /// `(fv, fc)` for negative motion when the friction differs by direction (`None`: the
    /// same both ways).
    pub negative: Option<(f64, f64)>,
    /// Constant force offset in the measured force \[N\] (the motor must supply it: gravity on an
    /// inclined axis, a drive's bias).
    pub offset: f64,
    /// Position gain \[1/s\].
    pub kp: f64,
    /// Velocity gain \[N s/m\].
    pub kv: f64,
    /// Encoder resolution \[m\].
    pub encoder_step: f64,
    /// Standard deviation of the white noise on the recorded force \[N\].
    pub force_noise: f64,
    /// Standard deviation of an unmeasured white force disturbance on the axis \[N\].
    pub disturbance: f64,
    /// Sampling step \[s\].
    pub dt: f64,
    /// Plant integration sub-steps per sample (the axis is continuous).
    pub substeps: usize,
    /// Record length \[s\].
    pub duration: f64,
    /// Seed of the noise and of the reference moves.
    pub seed: u64,
    /// The reference the controller follows.
    pub excitation: Excitation,
    /// A known load on the axis beside its mass ([`crate::load`]).
    pub load: Load,
}

/// The position reference of a [`BallScrew`] record.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Excitation {
    /// Trapezoidal-velocity moves between random positions with dwells (the identification
    /// record's kind).
    Moves,
    /// A sum of three sines about the middle of the stroke with random phases, and force
    /// pulses of this size \[N\] every 2 s on the axis (a held-out record of another kind, as
    /// the EMPS validation record is).
    Sines {
        /// Size of the force pulses \[N\], each 50 ms long.
        pulse: f64,
    },
}

impl Default for BallScrew {
    /// EMPS-like: 95 kg, 200 N s/m, 20 N, offset -3 N, kp 160 1/s, kv 8500 N s/m (the EMPS loop
    /// gains times its drive gain), encoder 0.1 µm, force noise 2 N, disturbance 2 N, 1 kHz,
    /// 10 sub-steps, 25 s.
    fn default() -> BallScrew {
        BallScrew {
            mass: 95.0,
            fv: 200.0,
            fc: 20.0,
            offset: -3.0,
            kp: 160.0,
            kv: 8500.0,
            encoder_step: 1e-7,
            force_noise: 2.0,
            disturbance: 2.0,
            dt: 1e-3,
            substeps: 10,
            duration: 25.0,
            seed: 1,
            negative: None,
            excitation: Excitation::Moves,
            load: Load::None,
        }
    }
}

impl BallScrew {
    /// The reference of the excitation.
    fn reference(&self, n: usize, rng: &mut Rng) -> Vec<f64> {
        match self.excitation {
            Excitation::Moves => self.moves(n, rng),
            Excitation::Sines { .. } => {
                let phase: Vec<f64> = (0..3)
                    .map(|_| std::f64::consts::TAU * rng.uniform())
                    .collect();
                let tone = [(0.06, 0.25), (0.025, 0.9), (0.006, 3.1)];
                (0..n)
                    .map(|k| {
                        let t = k as f64 * self.dt;
                        0.125
                            + tone
                                .iter()
                                .zip(&phase)
                                .map(|((a, f), p)| a * (std::f64::consts::TAU * f * t + p).sin())
                                .sum::<f64>()
                    })
                    .collect()
            }
        }
    }

    /// A force pulse on the axis at `t` \[N\] (the sine excitation's disturbance).
    fn pulse(&self, t: f64) -> f64 {
        match self.excitation {
            Excitation::Sines { pulse } if (t % 2.0) >= 1.0 && (t % 2.0) < 1.05 => pulse,
            _ => 0.0,
        }
    }

    /// Trapezoidal-velocity moves between random positions in 0.01..0.24 m at
    /// random speeds of 0.02..0.125 m/s (acceleration 1 m/s²), each followed by a 0.2 s dwell.
    fn moves(&self, n: usize, rng: &mut Rng) -> Vec<f64> {
        let (acc, dwell) = (1.0, 0.2);
        let mut q = Vec::with_capacity(n);
        let (mut from, mut t_move, mut plan) = (0.1, 0.0, None::<(f64, f64, f64)>);
        for k in 0..n {
            let t = k as f64 * self.dt;
            let (to, speed, total) = *plan.get_or_insert_with(|| {
                let to = 0.01 + 0.23 * rng.uniform();
                let speed = 0.02 + 0.105 * rng.uniform();
                let d = (to - from).abs();
                let speed = speed.min((d * acc).sqrt());
                (to, speed, d / speed + speed / acc)
            });
            let tau = t - t_move;
            let d = (to - from).abs();
            let ta = speed / acc;
            let s = if tau < ta {
                0.5 * acc * tau * tau
            } else if tau < total - ta {
                0.5 * acc * ta * ta + speed * (tau - ta)
            } else if tau < total {
                d - 0.5 * acc * (total - tau).powi(2)
            } else {
                d
            };
            q.push(from + (to - from).signum() * s.min(d));
            if tau >= total + dwell {
                from = to;
                t_move = t;
                plan = None;
            }
        }
        q
    }

    /// Simulates the record: columns `t` \[s\], `x` (encoder) \[m\], `u` (recorded force) \[N\]
    /// and `qg` (reference) \[m\].
    pub fn simulate(&self) -> Result<Table, FitError> {
        let n = (self.duration / self.dt).round() as usize;
        let mut rng = Rng::new(self.seed);
        let qg = self.reference(n, &mut rng);
        let spec = ModelSpec {
            model: "coulomb_viscous".into(),
            params: match self.negative {
                None => serde_json::json!({"fc": self.fc, "fv": self.fv}),
                Some((fv, fc)) => serde_json::json!({"fc": self.fc, "fv": self.fv,
                    "negative": {"fc": fc, "fv": fv}}),
            },
        };
        let mut model = build_model(&spec).map_err(|e| FitError::Setting {
            field: "ball screw".into(),
            rule: e.to_string(),
        })?;
        let pp = PlantParams { mass: self.mass };
        let mut st = PlantState {
            t: 0.0,
            x: qg[0],
            v: 0.0,
        };
        let quantise = |x: f64| (x / self.encoder_step).round() * self.encoder_step;
        let (mut t, mut x, mut u) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let h = self.dt / self.substeps.max(1) as f64;
        let mut prev = [quantise(st.x); 2];
        for (k, q_ref) in qg.iter().enumerate() {
            let xm = quantise(st.x);
            // Velocity from the encoder: the two-step mean of the backward differences.
            let v_est = (xm - prev[1]) / (2.0 * self.dt);
            prev = [xm, prev[0]];
            let force = self.kv * (self.kp * (q_ref - xm) - v_est);
            t.push(k as f64 * self.dt);
            x.push(xm);
            u.push(force + self.force_noise * rng.normal());
            let w = self.disturbance * rng.normal() + self.pulse(k as f64 * self.dt);
            for _ in 0..self.substeps.max(1) {
                let a = self
                    .load
                    .on(&Applied::force(force - self.offset + w, 0.0), &st, h);
                plant::step(model.as_mut(), &pp, &mut st, &a, h);
            }
        }
        Table::new(vec![
            ("t".into(), t),
            ("x".into(), x),
            ("u".into(), u),
            ("qg".into(), qg),
        ])
    }
}
