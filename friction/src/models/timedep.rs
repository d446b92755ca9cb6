//! Shared parts of the time-dependent models (`rising_static`, `frictional_memory`,
//! `seven_parameter`, `ruina`): the frictional-memory delay line of docs/src/models/numerics.md#switched-models and docs/src/models/frictional_memory.md.
//!
//! Frictional memory (Hess & Soom, S1 8.18) evaluates the Stribeck level at the delayed velocity
//! `v(t - tau)`. At sample `k` the delayed value is read by linear interpolation between the
//! stored samples (a fractional delay):
//!
//! $$v(t_k - \tau) \approx (1 - \varphi)\, v_{k-n} + \varphi\, v_{k-n-1},\qquad
//!   n = \lfloor \tau/h \rfloor,\ \varphi = \tau/h - n$$
//!
//! When the lag is shorter than one step (`tau < h`, e.g. Hess & Soom's 3–9 ms at h = 10 ms), or
//! when [`Memory::Lag`] is chosen, the delay is replaced (docs/src/models/numerics.md#switched-models) by a first-order lag of
//! time constant `tau`, discretised exactly for a velocity held over the step:
//!
//! $$y_k = v_k + (y_{k-1} - v_k)\, e^{-h/\tau}$$
//!
//! Both forms reduce to `v_k` for `tau = 0`, are convex combinations of past velocities (so they
//! never leave the range of the input) and are unconditionally stable. The ring holds
//! `floor(tau/h) + 2` samples; it is sized at the first step (the step is not known before) and
//! resized if the step changes. Above [`MAX_RING`] samples the lag is used instead, so a tiny step
//! cannot allocate without bound.

use serde::{Deserialize, Serialize};

/// Largest ring the delay line allocates (samples); beyond it the first-order lag is used.
pub const MAX_RING: usize = 1 << 16;

/// How the frictional memory `v(t - tau)` is realised.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Memory {
    /// Pure delay: ring buffer with linear interpolation; a first-order lag when `tau < h`.
    #[default]
    Delay,
    /// First-order lag of time constant `tau` at every step.
    Lag,
}

/// Past velocities for the frictional memory; at rest (all zero) initially.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DelayLine {
    /// Ring of past samples; `head` indexes the newest one, `v_{k-1}` while stepping sample k.
    buf: Vec<f64>,
    head: usize,
    /// Step the ring is sized for \[s\]; 0 before the first push.
    dt: f64,
    /// Last sample pushed; stands for history the ring does not hold.
    last: f64,
    /// First-order lag output at the last push.
    lag: f64,
    /// The delayed velocity returned by the last push \[m/s\].
    pub out: f64,
}

impl Clone for DelayLine {
    fn clone(&self) -> DelayLine {
        DelayLine {
            buf: self.buf.clone(),
            head: self.head,
            dt: self.dt,
            last: self.last,
            lag: self.lag,
            out: self.out,
        }
    }

    /// Reuses the ring's allocation (the model wrapper copies the state every step).
    fn clone_from(&mut self, src: &DelayLine) {
        self.buf.clone_from(&src.buf);
        self.head = src.head;
        self.dt = src.dt;
        self.last = src.last;
        self.lag = src.lag;
        self.out = src.out;
    }
}

impl DelayLine {
    /// Ring length for a delay of `tau` at step `dt`, or `None` when the lag is used instead.
    fn ring_len(tau: f64, dt: f64, memory: Memory) -> Option<usize> {
        if memory == Memory::Lag || tau < dt {
            return None;
        }
        let n = (tau / dt).floor();
        if n + 2.0 > MAX_RING as f64 {
            None
        } else {
            Some(n as usize + 2)
        }
    }

    /// The sample `i` steps back, with `v` as sample 0 (the current one).
    fn sample(&self, v: f64, i: usize, dt: f64) -> f64 {
        if i == 0 {
            v
        } else if self.dt == dt && i <= self.buf.len() {
            let len = self.buf.len();
            self.buf[(self.head + len - (i - 1)) % len]
        } else {
            self.last
        }
    }

    /// `v(t_k - tau)` when the current velocity is `v`, without changing the line.
    pub fn peek(&self, v: f64, tau: f64, dt: f64, memory: Memory) -> f64 {
        if tau <= 0.0 {
            return v;
        }
        if Self::ring_len(tau, dt, memory).is_none() {
            return v + (self.lag - v) * (-dt / tau).exp();
        }
        let d = tau / dt;
        let n = d.floor();
        let frac = d - n;
        let n = n as usize;
        let a = self.sample(v, n, dt);
        if frac == 0.0 {
            a
        } else {
            a + frac * (self.sample(v, n + 1, dt) - a)
        }
    }

    /// Returns `v(t_k - tau)` for the current velocity `v` and stores `v`. A non-finite `v` is
    /// replaced by the last finite sample.
    pub fn push(&mut self, v: f64, tau: f64, dt: f64, memory: Memory) -> f64 {
        let v = if v.is_finite() { v } else { self.last };
        let out = self.peek(v, tau, dt, memory);
        if tau > 0.0 {
            match Self::ring_len(tau, dt, memory) {
                None => self.lag = out,
                Some(need) => {
                    if self.dt != dt || self.buf.len() != need {
                        self.buf.clear();
                        self.buf.resize(need, self.last);
                        self.head = 0;
                        self.dt = dt;
                    }
                    self.head = (self.head + 1) % self.buf.len();
                    self.buf[self.head] = v;
                }
            }
        }
        self.last = v;
        self.out = out;
        out
    }
}

/// The robustness check of every model in this family (COMMON brief): default parameters, each
/// scenario kind, 60 s at 0.1, 1 and 10 ms; every output finite and bounded.
#[cfg(test)]
pub(crate) fn assert_robust<D: crate::model::ModelDef>(f_break: f64) {
    use crate::model::{FrictionModel, Model};
    use crate::scenario::{Profile, Scenario, simulate};
    let sine = |amplitude: f64, omega: f64| Profile::Sine {
        amplitude,
        omega,
        offset: 0.0,
        phase: 0.0,
    };
    let scenarios = [
        Scenario::SpringPull {
            mass: 1.0,
            stiffness: 2.0,
            pull_velocity: 0.1,
            pull_stop_s: None,
        },
        Scenario::Force {
            load: crate::Load::None,
            mass: 1.0,
            force: sine(0.5 * f_break, 1.0),
        },
        Scenario::Force {
            load: crate::Load::None,
            mass: 1.0,
            force: sine(2.0 * f_break, 1.0),
        },
        Scenario::Velocity {
            velocity: sine(0.1, 1.0),
        },
        Scenario::Position {
            position: sine(0.01, 2.0),
        },
    ];
    for dt in [1e-4, 1e-3, 1e-2] {
        for sc in &scenarios {
            let mut m = Model::<D>::new(D::Params::default()).unwrap();
            let mut worst = (0.0f64, 0.0f64);
            simulate(&mut m, sc, dt, 60.0, 1, |r| {
                assert!(
                    r.friction.is_finite()
                        && r.v.is_finite()
                        && r.x.is_finite()
                        && r.states.iter().all(|s| s.is_finite()),
                    "{} dt={dt} {sc:?}: non-finite at t={}",
                    D::ID,
                    r.t
                );
                worst.0 = worst.0.max(r.friction.abs());
                worst.1 = worst.1.max(r.v.abs());
            });
            assert!(
                worst.0 <= 4.0 * f_break && worst.1 <= 50.0,
                "{} dt={dt} {sc:?}: max |F| {} max |v| {}",
                D::ID,
                worst.0,
                worst.1
            );
            assert_eq!(m.quarantined(), 0, "{} dt={dt} {sc:?}", D::ID);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractional_delay_is_exact_on_a_ramp() {
        // Linear interpolation reproduces a linear signal exactly: v(t - tau) = c (t - tau).
        let (c, tau, dt) = (0.3, 2.5e-3, 1e-3);
        let mut line = DelayLine::default();
        for k in 0..100 {
            let t = k as f64 * dt;
            let out = line.push(c * t, tau, dt, Memory::Delay);
            if t >= tau + dt {
                assert!((out - c * (t - tau)).abs() < 1e-12, "t={t}: {out}");
            }
        }
    }

    #[test]
    fn integer_delay_returns_the_old_sample() {
        let (tau, dt) = (5e-3, 1e-3);
        let mut line = DelayLine::default();
        let mut outs = Vec::new();
        for k in 0..20 {
            outs.push(line.push(k as f64, tau, dt, Memory::Delay));
        }
        for (k, out) in outs.iter().enumerate().skip(6) {
            assert!((out - (k as f64 - 5.0)).abs() < 1e-9, "k={k}: {out}");
        }
    }

    #[test]
    fn sub_sample_delay_becomes_a_first_order_lag() {
        let (tau, dt) = (5e-3f64, 1e-2);
        let mut line = DelayLine::default();
        let a = (-dt / tau).exp();
        let mut y = 0.0;
        for _ in 0..5 {
            let out = line.push(1.0, tau, dt, Memory::Delay);
            y = 1.0 + (y - 1.0) * a;
            assert!((out - y).abs() < 1e-15);
        }
        // Same as the explicit lag option at any step.
        let mut lag = DelayLine::default();
        assert_eq!(lag.push(1.0, tau, dt, Memory::Lag), 1.0 - a);
        // peek does not change the line.
        let before = lag.clone();
        let _ = lag.peek(3.0, tau, dt, Memory::Lag);
        assert_eq!(lag, before);
    }
}
