//! `prbs`: a pseudo-random binary excitation of the position or velocity reference
//! (Nouailletas §IV.A, S2 eqs. 5–10; docs/src/identification.md#power_rls).
//!
//! One `excite` segment (position or velocity mode) following a maximal-length PRBS of
//! `2^register_bits - 1` bits of `bit_s` each, levels `±amplitude`, `periods` times.
//!
//! Analysis: the data ready for the power-equation RLS, filtered as S2 eq. 6 with the
//! critically damped `1/(p/p_n + 1)^2` (`p_n = filter_pole_rad_s`, exact ZOH discretisation,
//! the same for every signal): the filtered applied torque `u`, velocity `v = p x_f` and
//! acceleration `a = p^2 x_f` from the encoder position alone; plus a quick weighted RLS
//! estimate of `(J, f_v, f_c)` with `eta = v^2` (S2's best weighting; `friction::identify::rls`,
//! `lambda1(0) = 0.9`, `lambda0 = 0.99`) as a summary. The full procedure with the three
//! weightings is `bench fit --procedure power_rls`.
//!
//! Defaults: position PRBS ±0.05 rad, 50 ms bits, 9-bit register (511 bits, 25.55 s),
//! `p_n = 200 rad/s` (S2).

use super::{segment, tag, within};
use crate::analysis::filter2;
use crate::caps::{self, Size};
use crate::error::{LimitKind, check};
use crate::plan::{DriveMode, Role, Segment, Stop};
use crate::setpoint::prbs;
use crate::{BenchLimits, Error, Plan, Sample, Setpoint};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which reference the PRBS drives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// The position reference (S2).
    #[default]
    Position,
    /// The velocity reference.
    Velocity,
}

/// Parameters of `prbs`: a pseudo-random binary excitation of the position or velocity reference →
/// filtered data for the power-equation RLS of (J, f_v, f_c) (Nouailletas §IV.A).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Which reference; default position.
    pub signal: Signal,
    /// Level of a position PRBS \[rad\] (±); default 0.05 (a swing of 0.1 rad asks about
    /// 2 N m of a position loop of 20 N m/rad).
    pub position_amplitude_rad: f64,
    /// Level of a velocity PRBS \[rad/s\] (±); default 5.
    pub velocity_amplitude_rad_s: f64,
    /// Duration of one bit \[s\], 2 control periods to a day (and the whole excitation at
    /// most a day); default 0.05.
    #[schemars(range(max = caps::MAX_SEGMENT_S))]
    pub bit_s: f64,
    /// LFSR length (2..=16): the sequence has `2^n - 1` bits; default 9.
    #[schemars(range(min = 2, max = 16))]
    pub register_bits: u32,
    /// Repetitions of the sequence, at most 10000, and at most 1e6 bits in all; default 1.
    #[schemars(range(min = 1, max = caps::MAX_REPEATS))]
    pub periods: u32,
    /// LFSR seed (phase of the sequence); default 1.
    pub seed: u32,
    /// Pole of the S2 eq. 6 filters \[rad/s\]; default 200.
    pub filter_pole_rad_s: f64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            signal: Signal::Position,
            position_amplitude_rad: 0.05,
            velocity_amplitude_rad_s: 5.0,
            bit_s: 0.05,
            register_bits: 9,
            periods: 1,
            seed: 1,
            filter_pole_rad_s: 200.0,
        }
    }
}

/// Filtered signals for the power-equation RLS, one row per sample.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PowerRlsData {
    /// Sample period \[s\].
    pub dt_s: f64,
    /// Filter pole `p_n` \[rad/s\].
    pub filter_pole_rad_s: f64,
    /// Time \[s\].
    pub t_s: Vec<f64>,
    /// Filtered applied torque \[N m\].
    pub u_nm: Vec<f64>,
    /// Filtered velocity \[rad/s\].
    pub v_rad_s: Vec<f64>,
    /// Filtered acceleration \[rad/s^2\].
    pub a_rad_s2: Vec<f64>,
    /// `F_u` applied to `sgn` of the drive's velocity: the Coulomb regressor filtered like
    /// the torque (S2 uses `sgn` of the filtered velocity, which the filter's lag smears at
    /// every reversal; this column keeps both sides of the regression filtered alike).
    pub sgn_v_filtered: Vec<f64>,
}

/// A quick RLS estimate (eta = v^2, Coulomb regressor `sgn_v_filtered`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RlsSummary {
    /// Inertia \[kg m^2\].
    pub j_kg_m2: f64,
    /// Viscous coefficient \[N m s/rad\].
    pub fv_nm_s_rad: f64,
    /// Coulomb level \[N m\].
    pub fc_nm: f64,
}

/// PRBS results.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "PrbsResults")]
pub struct Output {
    /// RMS of the filtered velocity \[rad/s\].
    pub v_rms_rad_s: f64,
    /// Largest filtered |velocity| \[rad/s\].
    pub v_max_rad_s: f64,
    /// The RLS summary (null with too little excitation).
    pub rls: Option<RlsSummary>,
    /// The filtered data.
    pub data: PowerRlsData,
}

impl Params {
    pub(crate) fn segments(&self, limits: &BenchLimits) -> Result<Vec<Segment>, Error> {
        caps::count("params.periods", self.periods.into(), caps::MAX_REPEATS)?;
        check::positive("params.bit_s", self.bit_s)?;
        caps::seconds("params.bit_s", self.bit_s, caps::MAX_SEGMENT_S)?;
        if self.bit_s < 2.0 * limits.period_s {
            return Err(Error::invalid(
                "params.bit_s",
                self.bit_s,
                format!("must be >= 2 control periods ({} s)", 2.0 * limits.period_s),
            ));
        }
        if !(2..=16).contains(&self.register_bits) {
            return Err(Error::invalid(
                "params.register_bits",
                self.register_bits,
                "must be in 2..=16",
            ));
        }
        check::at_least("params.periods", self.periods, 1)?;
        // Counted before the levels are built: one level per bit.
        let bits = u64::from(self.periods) * ((1u64 << self.register_bits) - 1);
        if bits > u64::from(caps::MAX_LEVELS) {
            return Err(Error::invalid(
                "params.periods",
                self.periods,
                format!(
                    "gives {bits} bits of {} per period, over the cap of {}",
                    (1u64 << self.register_bits) - 1,
                    caps::MAX_LEVELS
                ),
            ));
        }
        let dur = bits as f64 * self.bit_s;
        caps::segment_s("params.periods", self.periods.into(), "an excitation", dur)?;
        Size::new(1.0, dur).check("params.periods", self.periods, limits)?;
        check::positive("params.filter_pole_rad_s", self.filter_pole_rad_s)?;
        let (mode, amp) = match self.signal {
            Signal::Position => {
                let a = self.position_amplitude_rad;
                check::positive("params.position_amplitude_rad", a)?;
                within(
                    "params.position_amplitude_rad",
                    a,
                    LimitKind::Position,
                    limits.position_window_rad,
                )?;
                // A full swing within one bit: the speed the loop will need, at least.
                let v = 2.0 * a / self.bit_s;
                if v > limits.velocity_rad_s {
                    return Err(Error::limit(
                        "params.position_amplitude_rad: swing 2 × amplitude per bit_s",
                        v,
                        LimitKind::Velocity,
                        limits.velocity_rad_s,
                    ));
                }
                (DriveMode::Position, a)
            }
            Signal::Velocity => {
                let a = self.velocity_amplitude_rad_s;
                check::positive("params.velocity_amplitude_rad_s", a)?;
                within(
                    "params.velocity_amplitude_rad_s",
                    a,
                    LimitKind::Velocity,
                    limits.velocity_rad_s,
                )?;
                (DriveMode::Velocity, a)
            }
        };
        let seq = prbs(self.register_bits, self.seed);
        let mut levels = Vec::with_capacity(seq.len() * self.periods as usize);
        for _ in 0..self.periods {
            levels.extend(seq.iter().map(|b| b * amp));
        }
        Ok(vec![segment(
            format!(
                "prbs {} ±{amp}",
                if mode == DriveMode::Position {
                    "position"
                } else {
                    "velocity"
                }
            ),
            tag(Role::Excite, amp, 0, 0),
            mode,
            Setpoint::Steps {
                step_s: self.bit_s,
                offset: 0.0,
                levels,
            },
            vec![Stop::Duration { s: dur }],
            dur,
        )])
    }

    pub(crate) fn analyse(&self, plan: &Plan, samples: &[Sample]) -> Result<Output, Error> {
        let parts = crate::analysis::by_segment(plan, samples)?;
        let Some((_, _, xs)) = crate::analysis::with_role(plan, &parts, Role::Excite)
            .into_iter()
            .next()
        else {
            return Err(Error::Analysis("no sample of the PRBS segment".into()));
        };
        let dt = plan.period_s();
        let pn = self.filter_pole_rad_s;
        let xf = filter2(&xs.iter().map(|s| s.x).collect::<Vec<_>>(), dt, pn);
        let uf = filter2(
            &xs.iter().map(Sample::applied_torque).collect::<Vec<_>>(),
            dt,
            pn,
        );
        // The torque is truly held over each period while the position is a sample at its
        // start: the position's hold lags it by half a period. Average consecutive torque
        // outputs to move them back by that half period.
        let uf: Vec<f64> = (0..uf.len())
            .map(|k| 0.5 * (uf[k.saturating_sub(1)][0] + uf[k][0]))
            .collect();
        let data = PowerRlsData {
            dt_s: dt,
            filter_pole_rad_s: pn,
            t_s: xs.iter().map(|s| s.t).collect(),
            u_nm: uf,
            v_rad_s: xf.iter().map(|r| r[1]).collect(),
            a_rad_s2: xf.iter().map(|r| r[2]).collect(),
            sgn_v_filtered: {
                let sg: Vec<f64> = xs.iter().map(|s| sgn(s.v)).collect();
                let f = filter2(&sg, dt, pn);
                // The velocity is a sample like the position: no half-period shift.
                f.iter().map(|r| r[0]).collect()
            },
        };
        let (ms, _, n) = crate::analysis::mean_std(data.v_rad_s.iter().map(|v| v * v));
        let v_max = data.v_rad_s.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        // Skip the filter's start-up (5 time constants).
        let skip = ((5.0 / pn) / dt).ceil() as usize;
        let rls = (n > skip + 10 && v_max > 0.0).then(|| {
            let mut rls = friction::identify::rls::Rls::new(&[1e-3, 1e-2, 1.0], 1e6, 0.9, 0.99);
            for k in skip..n {
                let (u, v, a) = (data.u_nm[k], data.v_rad_s[k], data.a_rad_s2[k]);
                rls.update(&[a, v, data.sgn_v_filtered[k]], u, v * v);
            }
            let th = rls.theta();
            RlsSummary {
                j_kg_m2: th[0],
                fv_nm_s_rad: th[1],
                fc_nm: th[2],
            }
        });
        Ok(Output {
            v_rms_rad_s: ms.max(0.0).sqrt(),
            v_max_rad_s: v_max,
            rls,
            data,
        })
    }
}

fn sgn(v: f64) -> f64 {
    if v > 0.0 {
        1.0
    } else if v < 0.0 {
        -1.0
    } else {
        0.0
    }
}
