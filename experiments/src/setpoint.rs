//! Setpoint generators: pure functions of the time since their segment started.
//!
//! The unit is the segment's drive mode: N m (torque), rad/s (velocity) or rad (position).

use serde::{Deserialize, Serialize};

/// A setpoint as a function of segment time `t` \[s\].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Setpoint {
    /// `value`.
    Constant {
        /// The value.
        value: f64,
    },
    /// `start + rate t` (a torque ramp `tau = m t`, a displacement ramp).
    Ramp {
        /// Value at `t = 0`.
        start: f64,
        /// Slope per second.
        rate: f64,
    },
    /// `offset + amplitude sin(omega t + phase)`.
    Sine {
        /// Offset.
        offset: f64,
        /// Amplitude.
        amplitude: f64,
        /// Angular frequency \[rad/s\].
        omega_rad_s: f64,
        /// Phase \[rad\].
        phase_rad: f64,
    },
    /// `offset + amplitude sin(phi(t))` with the angular frequency rising linearly from `omega0`
    /// to `omega1` over `duration_s`, then holding `omega1` (phase-continuous): Nnaji eq. 13.
    Chirp {
        /// Offset.
        offset: f64,
        /// Amplitude.
        amplitude: f64,
        /// Start angular frequency \[rad/s\].
        omega0_rad_s: f64,
        /// End angular frequency \[rad/s\].
        omega1_rad_s: f64,
        /// Sweep duration \[s\].
        duration_s: f64,
    },
    /// `step (k + 1)` on `[k dwell, (k + 1) dwell)`: increments of `step` held `dwell_s` each,
    /// starting one step above zero (Nouailletas §IV.B).
    Staircase {
        /// Increment (signed).
        step: f64,
        /// Hold time of each level \[s\].
        dwell_s: f64,
    },
    /// `offset + levels[k]` on `[k step_s, (k + 1) step_s)`, the last level held (PRBS).
    Steps {
        /// Duration of one level \[s\].
        step_s: f64,
        /// Offset added to every level.
        offset: f64,
        /// The levels.
        levels: Vec<f64>,
    },
    /// Linear interpolation of `(t_s, value)`, held beyond the ends; equal consecutive times
    /// make a jump (the later value holds from that time).
    Samples {
        /// Non-decreasing times \[s\].
        t_s: Vec<f64>,
        /// Values at those times.
        value: Vec<f64>,
    },
}

impl Setpoint {
    /// A constant.
    pub fn constant(value: f64) -> Setpoint {
        Setpoint::Constant { value }
    }

    fn chirp_phase(t: f64, w0: f64, w1: f64, d: f64) -> (f64, f64) {
        // (phase [rad], angular frequency [rad/s]).
        if d <= 0.0 {
            return (w1 * t, w1);
        }
        if t <= d {
            (
                w0 * t + (w1 - w0) * t * t / (2.0 * d),
                w0 + (w1 - w0) * t / d,
            )
        } else {
            ((w0 + w1) * d / 2.0 + w1 * (t - d), w1)
        }
    }

    /// The value at segment time `t`.
    pub fn value(&self, t: f64) -> f64 {
        match self {
            Setpoint::Constant { value } => *value,
            Setpoint::Ramp { start, rate } => start + rate * t,
            Setpoint::Sine {
                offset,
                amplitude,
                omega_rad_s,
                phase_rad,
            } => offset + amplitude * (omega_rad_s * t + phase_rad).sin(),
            Setpoint::Chirp {
                offset,
                amplitude,
                omega0_rad_s,
                omega1_rad_s,
                duration_s,
            } => {
                offset
                    + amplitude
                        * Self::chirp_phase(t, *omega0_rad_s, *omega1_rad_s, *duration_s)
                            .0
                            .sin()
            }
            Setpoint::Staircase { step, dwell_s } => {
                let k = if *dwell_s > 0.0 {
                    (t.max(0.0) / dwell_s).floor()
                } else {
                    0.0
                };
                step * (k + 1.0)
            }
            Setpoint::Steps {
                step_s,
                offset,
                levels,
            } => {
                if levels.is_empty() {
                    return *offset;
                }
                let k = if *step_s > 0.0 {
                    (t.max(0.0) / step_s).floor() as usize
                } else {
                    0
                };
                offset + levels[k.min(levels.len() - 1)]
            }
            Setpoint::Samples { t_s, value } => {
                if t_s.is_empty() || value.len() != t_s.len() {
                    return 0.0;
                }
                let i = t_s.partition_point(|&x| x <= t);
                if i == 0 {
                    value[0]
                } else if i == t_s.len() {
                    value[i - 1]
                } else {
                    let (t0, t1) = (t_s[i - 1], t_s[i]);
                    let a = if t1 > t0 { (t - t0) / (t1 - t0) } else { 1.0 };
                    value[i - 1] + a * (value[i] - value[i - 1])
                }
            }
        }
    }

    /// The time derivative at `t` (0 across steps); a feedforward for the outer loop.
    pub fn rate(&self, t: f64) -> f64 {
        match self {
            Setpoint::Constant { .. } | Setpoint::Staircase { .. } | Setpoint::Steps { .. } => 0.0,
            Setpoint::Ramp { rate, .. } => *rate,
            Setpoint::Sine {
                amplitude,
                omega_rad_s,
                phase_rad,
                ..
            } => amplitude * omega_rad_s * (omega_rad_s * t + phase_rad).cos(),
            Setpoint::Chirp {
                amplitude,
                omega0_rad_s,
                omega1_rad_s,
                duration_s,
                ..
            } => {
                let (ph, w) = Self::chirp_phase(t, *omega0_rad_s, *omega1_rad_s, *duration_s);
                amplitude * w * ph.cos()
            }
            Setpoint::Samples { t_s, value } => {
                if t_s.len() < 2 || value.len() != t_s.len() {
                    return 0.0;
                }
                let i = t_s.partition_point(|&x| x <= t);
                if i == 0 || i == t_s.len() || t_s[i] <= t_s[i - 1] {
                    0.0
                } else {
                    (value[i] - value[i - 1]) / (t_s[i] - t_s[i - 1])
                }
            }
        }
    }

    /// The largest `|value|` over `[0, t_end]` (exact for the piecewise kinds, sampled at
    /// 4096 points plus the ends for sines and chirps).
    pub fn max_abs(&self, t_end: f64) -> f64 {
        let t_end = t_end.max(0.0);
        match self {
            Setpoint::Constant { value } => value.abs(),
            Setpoint::Ramp { start, rate } => start.abs().max((start + rate * t_end).abs()),
            Setpoint::Staircase { .. } => self.value(t_end).abs().max(self.value(0.0).abs()),
            Setpoint::Steps {
                step_s,
                offset,
                levels,
            } => {
                let n = if *step_s > 0.0 {
                    ((t_end / step_s).floor() as usize + 1).min(levels.len())
                } else {
                    1
                };
                levels[..n.min(levels.len())]
                    .iter()
                    .map(|l| (offset + l).abs())
                    .fold(offset.abs(), f64::max)
            }
            Setpoint::Samples { t_s, value } => {
                let mut m = self.value(t_end).abs();
                for (t, v) in t_s.iter().zip(value) {
                    if *t <= t_end {
                        m = m.max(v.abs());
                    }
                }
                m.max(self.value(0.0).abs())
            }
            // A whole cycle or more reaches both peaks.
            Setpoint::Sine {
                offset,
                amplitude,
                omega_rad_s,
                ..
            } if omega_rad_s.abs() * t_end >= std::f64::consts::TAU => {
                offset.abs() + amplitude.abs()
            }
            Setpoint::Sine { .. } | Setpoint::Chirp { .. } => {
                const N: usize = 4096;
                (0..=N)
                    .map(|i| self.value(t_end * i as f64 / N as f64).abs())
                    .fold(0.0, f64::max)
            }
        }
    }
}

/// A maximal-length pseudo-random binary sequence of `2^bits - 1` bits (Fibonacci LFSR, taps
/// from the standard table for 2..=16 bits), as levels ±1. `seed` (non-zero after masking)
/// chooses the phase.
pub fn prbs(bits: u32, seed: u32) -> Vec<f64> {
    // Feedback taps (1-based bit positions) of maximal-length LFSRs, indexed by `bits`:
    // x^n + x^t (+ extra taps for 8, 12, 13, 14, 16).
    const TAP: [u32; 17] = [0, 0, 1, 2, 3, 3, 5, 6, 6, 5, 7, 9, 11, 12, 13, 14, 15];
    let bits = bits.clamp(2, 16);
    let extra: &[u32] = match bits {
        8 => &[5, 4],
        12 => &[10, 4],
        13 => &[11, 8],
        14 => &[12, 2],
        16 => &[13, 4],
        _ => &[],
    };
    let (a, b) = (bits, TAP[bits as usize]);
    let mask = (1u32 << bits) - 1;
    let mut state = seed & mask;
    if state == 0 {
        state = 1;
    }
    let n = (1usize << bits) - 1;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let bit_at = |s: u32, pos: u32| (s >> (pos - 1)) & 1;
        let mut fb = bit_at(state, a) ^ bit_at(state, b);
        for &e in extra {
            fb ^= bit_at(state, e);
        }
        out.push(if state & 1 == 1 { 1.0 } else { -1.0 });
        state = ((state << 1) | fb) & mask;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prbs_is_maximal_length_and_balanced() {
        for bits in 2..=12 {
            let s = prbs(bits, 1);
            assert_eq!(s.len(), (1 << bits) - 1);
            let ones = s.iter().filter(|x| **x > 0.0).count();
            // A maximal-length sequence has 2^(n-1) ones and 2^(n-1) - 1 zeros.
            assert_eq!(ones, 1 << (bits - 1), "bits {bits}");
        }
    }

    #[test]
    fn staircase_chirp_and_samples() {
        let s = Setpoint::Staircase {
            step: 0.005,
            dwell_s: 0.1,
        };
        assert_eq!(s.value(0.0), 0.005);
        assert!((s.value(0.25) - 0.015).abs() < 1e-15);
        let c = Setpoint::Chirp {
            offset: 1.0,
            amplitude: 0.5,
            omega0_rad_s: 0.0,
            omega1_rad_s: 10.0,
            duration_s: 10.0,
        };
        // Numerical derivative agrees with rate().
        let h = 1e-6;
        for t in [0.3, 4.0, 12.0] {
            let d = (c.value(t + h) - c.value(t - h)) / (2.0 * h);
            assert!((d - c.rate(t)).abs() < 1e-5, "{t}: {d} {}", c.rate(t));
        }
        let p = Setpoint::Samples {
            t_s: vec![0.0, 1.0, 1.0, 2.0],
            value: vec![0.0, 1.0, 3.0, 3.0],
        };
        assert_eq!(p.value(0.5), 0.5);
        assert_eq!(p.value(1.0), 3.0);
        assert_eq!(p.max_abs(0.9), 0.9);
        assert_eq!(p.max_abs(5.0), 3.0);
    }
}
