//! The analysis of a trial: tracking error, reversal glitch and effort per compensator, ranked.

use super::Params;
use crate::plan::{Role, Segment};
use crate::{Error, Plan, Sample};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Points of each reversal trace in the results.
pub(super) const TRACE_POINTS: usize = 240;

/// One compensator's results (ranked; errors in rad, effort in N m).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Ranked {
    /// 1 = best (lowest RMS error); unstable compensators rank last.
    pub rank: usize,
    /// The compensator's name.
    pub name: String,
    /// Its law: `none`, `feedforward MODEL` or `lugre observer`.
    pub law: String,
    /// RMS tracking error over all its trials \[rad\].
    pub rms_error: f64,
    /// Largest |tracking error| \[rad\].
    pub max_error: f64,
    /// Peak |error| within the glitch window of a reversal, averaged over reversals \[rad\]
    /// (null without reversals).
    pub reversal_glitch: Option<f64>,
    /// RMS of the torque command \[N m\].
    pub effort_rms: f64,
    /// Reduction of the RMS error against the baseline \[%\] (negative: worse; null without a
    /// baseline).
    pub improvement_pct: Option<f64>,
    /// A trial exceeded the error bound and was stopped.
    pub unstable: bool,
    /// Trials run.
    pub trials: usize,
    /// Per reference: RMS error, max error and glitch \[rad\].
    pub per_reference: Vec<PerReference>,
}

/// One compensator on one reference.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PerReference {
    /// The reference's label.
    pub reference: String,
    /// RMS tracking error \[rad\].
    pub rms_error: f64,
    /// Largest |error| \[rad\].
    pub max_error: f64,
    /// Mean reversal glitch \[rad\].
    pub reversal_glitch: Option<f64>,
}

/// The tracking error around one reversal, for plotting every compensator on one axis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Trace {
    /// The compensator.
    pub name: String,
    /// Time from the reversal \[s\].
    pub t_s: Vec<f64>,
    /// Tracking error \[rad\].
    pub error_rad: Vec<f64>,
}

/// Compensation-trial results.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "TrialResults")]
pub struct Output {
    /// The baseline compensator's name, if the trial had one.
    pub baseline: Option<String>,
    /// Every compensator, best first.
    pub ranking: Vec<Ranked>,
    /// The error around the first reversal of the first reference, per compensator.
    pub reversal_traces: Vec<Trace>,
    /// The reference those traces come from.
    pub trace_reference: Option<String>,
}

/// Sums over the samples of some trials.
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    sse: f64,
    n: usize,
    max: f64,
    glitch_sum: f64,
    reversals: usize,
    effort_ss: f64,
    unstable: bool,
    trials: usize,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.sse += o.sse;
        self.n += o.n;
        self.max = self.max.max(o.max);
        self.glitch_sum += o.glitch_sum;
        self.reversals += o.reversals;
        self.effort_ss += o.effort_ss;
        self.unstable |= o.unstable;
        self.trials += o.trials;
    }
    fn rms(&self) -> f64 {
        (self.sse / self.n.max(1) as f64).sqrt()
    }
    fn glitch(&self) -> Option<f64> {
        (self.reversals > 0).then(|| self.glitch_sum / self.reversals as f64)
    }
}

/// The tracking error of a trial's samples and the times of the reference's reversals.
struct Tracked {
    t: Vec<f64>,
    error: Vec<f64>,
    reversals: Vec<f64>,
}

fn tracked(seg: &Segment, xs: &[Sample], anchor: f64) -> Tracked {
    let t0 = xs[0].t;
    let mut reversals = Vec::new();
    let mut last_sign = 0.0;
    let mut last_t = t0;
    let (mut t, mut error) = (Vec::with_capacity(xs.len()), Vec::with_capacity(xs.len()));
    for s in xs {
        let ts = s.t - t0;
        t.push(ts);
        error.push(s.x - (seg.setpoint.value(ts) + anchor));
        let v_ref = seg.setpoint.rate(ts);
        let sign = if v_ref.abs() > 1e-12 {
            v_ref.signum()
        } else {
            0.0
        };
        if sign != 0.0 {
            if last_sign != 0.0 && sign != last_sign {
                reversals.push(0.5 * (last_t + ts));
            }
            last_sign = sign;
            last_t = ts;
        }
    }
    Tracked {
        t,
        error,
        reversals,
    }
}

impl Params {
    /// A trial's tally and its tracked error. `cut_short`: the trial ended before its
    /// duration while the run went on, which only its tracking-error stop does.
    fn tally(
        &self,
        seg: &Segment,
        xs: &[Sample],
        anchor: f64,
        cut_short: bool,
    ) -> (Tally, Tracked) {
        let tr = tracked(seg, xs, anchor);
        let w = self.glitch_window_s;
        let glitches: Vec<f64> = tr
            .reversals
            .iter()
            .map(|&tc| {
                tr.t.iter()
                    .zip(&tr.error)
                    .filter(|(t, _)| (**t - tc).abs() <= w)
                    .fold(0.0_f64, |m, (_, e)| m.max(e.abs()))
            })
            .collect();
        let max = tr.error.iter().fold(0.0_f64, |m, e| m.max(e.abs()));
        let tally = Tally {
            sse: tr.error.iter().map(|e| e * e).sum(),
            n: tr.error.len(),
            max,
            glitch_sum: glitches.iter().sum(),
            reversals: glitches.len(),
            effort_ss: xs.iter().map(|s| s.u_cmd * s.u_cmd).sum(),
            unstable: cut_short || max > self.error_bound_rad,
            trials: 1,
        };
        (tally, tr)
    }

    pub(crate) fn analyse(&self, plan: &Plan, samples: &[Sample]) -> Result<Output, Error> {
        let parts = crate::analysis::by_segment(plan, samples)?;
        let (nc, nr) = (self.compensators.len(), self.references.len());
        let mut cells = vec![Tally::default(); nc * nr];
        let mut traces: Vec<Option<Trace>> = vec![None; nc];
        for (i, seg, xs) in crate::analysis::with_role(plan, &parts, Role::Track) {
            let (Some(c), j) = (seg.compensator, seg.tag.value as usize) else {
                continue;
            };
            if c >= nc || j >= nr {
                return Err(Error::Analysis(format!(
                    "segment '{}' names compensator {c} / reference {j}, beyond the spec's",
                    seg.label
                )));
            }
            // The sequencer anchors the reference on the last measurement before the segment.
            let anchor = parts[..i]
                .iter()
                .rev()
                .find_map(|p| p.last())
                .map_or(xs[0].x, |s| s.x);
            let period = plan.limits.period_s;
            let lasted = xs[xs.len() - 1].t - xs[0].t + period;
            let run_went_on = parts[i + 1..].iter().any(|p| !p.is_empty());
            let cut_short = run_went_on && lasted < seg.max_s() - 1.5 * period;
            let (tally, tr) = self.tally(seg, xs, anchor, cut_short);
            cells[c * nr + j].add(&tally);
            if j == 0 && traces[c].is_none() {
                traces[c] =
                    reversal_trace(&self.compensators[c].name, &tr, 3.0 * self.glitch_window_s);
            }
        }
        let baseline = self
            .compensators
            .iter()
            .position(|c| c.model_id().is_none());
        let whole: Vec<Tally> = (0..nc)
            .map(|c| {
                let mut t = Tally::default();
                cells[c * nr..(c + 1) * nr].iter().for_each(|x| t.add(x));
                t
            })
            .collect();
        let base_rms = baseline.map(|b| whole[b].rms()).filter(|r| *r > 0.0);
        let mut ranking: Vec<Ranked> = (0..nc)
            .filter(|&c| whole[c].n > 0)
            .map(|c| {
                let t = &whole[c];
                let comp = &self.compensators[c];
                Ranked {
                    rank: 0,
                    name: comp.name.clone(),
                    law: match (comp.model_id(), comp.observer_gain) {
                        (None, _) => "none".into(),
                        (Some(_), Some(_)) => "lugre observer".into(),
                        (Some(m), None) => format!("feedforward {m}"),
                    },
                    rms_error: t.rms(),
                    max_error: t.max,
                    reversal_glitch: t.glitch(),
                    effort_rms: (t.effort_ss / t.n.max(1) as f64).sqrt(),
                    improvement_pct: base_rms.map(|b| 100.0 * (1.0 - t.rms() / b)),
                    unstable: t.unstable,
                    trials: t.trials,
                    per_reference: (0..nr)
                        .filter(|&j| cells[c * nr + j].n > 0)
                        .map(|j| {
                            let x = &cells[c * nr + j];
                            PerReference {
                                reference: self.references[j].label(),
                                rms_error: x.rms(),
                                max_error: x.max,
                                reversal_glitch: x.glitch(),
                            }
                        })
                        .collect(),
                }
            })
            .collect();
        ranking.sort_by(|a, b| {
            a.unstable
                .cmp(&b.unstable)
                .then(a.rms_error.total_cmp(&b.rms_error))
        });
        for (k, r) in ranking.iter_mut().enumerate() {
            r.rank = k + 1;
        }
        let reversal_traces: Vec<Trace> = traces.into_iter().flatten().collect();
        Ok(Output {
            baseline: baseline.map(|b| self.compensators[b].name.clone()),
            ranking,
            trace_reference: (!reversal_traces.is_empty()).then(|| self.references[0].label()),
            reversal_traces,
        })
    }
}

/// The error within `half` of the first reversal, at most [`TRACE_POINTS`] points.
fn reversal_trace(name: &str, tr: &Tracked, half: f64) -> Option<Trace> {
    let tc = *tr.reversals.first()?;
    let idx: Vec<usize> = (0..tr.t.len())
        .filter(|&i| (tr.t[i] - tc).abs() <= half)
        .collect();
    let every = idx.len().div_ceil(TRACE_POINTS).max(1);
    let picked: Vec<usize> = idx.into_iter().step_by(every).collect();
    Some(Trace {
        name: name.to_string(),
        t_s: picked.iter().map(|&i| tr.t[i] - tc).collect(),
        error_rad: picked.iter().map(|&i| tr.error[i]).collect(),
    })
}
