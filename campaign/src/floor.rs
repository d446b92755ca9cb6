//! The floor no model can beat on the validation run (`answer.floor_mse`), measured in two
//! parts (`answer.floor_parts`):
//!
//! - **repeat** (`repeat_mse`): the validation profile runs [`REPEATS`] times in one run after
//!   a lead-in that leaves the bench in the state each pass ends in
//!   ([`super::design::validation`]), and the measured friction of the second pass is set
//!   against the first's at the same time into its piece. Each pass is the bench's friction
//!   plus its own noise, so half the mean squared difference is the noise's variance.
//! - **resolution** (`resolution_mse`): what the encoder cannot tell. The best model is
//!   replayed [`DITHERS`] times on the validation run as the comparison replays it, each time
//!   on another angle the encoder's readings could have come from ([`dithered`]: the angle
//!   crosses between counts where the reading changes, at a random time within the sample
//!   interval, and lies anywhere in a count it holds); the mean over the scored samples of the
//!   replays' variance is the part of a model's error the encoder's resolution alone accounts
//!   for. A presliding
//!   element of stiffness `k` turns an unseen fraction of a count into `k` times it in torque.
//!
//! Both parts are taken over the passes only, the samples the models are scored on (the
//! comparison replays the lead-in without scoring it). On the default simulated bench (`cargo
//! test -p campaign --test replay_floor -- --nocapture`): the repeat part is 1.0e-4 N² m² (the
//! sensor's noise alone 1.1e-5), the resolution part of the true GMS 2.7e-4, and the true
//! model's validation MSE on the passes, 5.7e-4, is 1.50 × that floor. Before the lead-in the
//! first pass started from rest and the second from the end of the first, their opening
//! pieces differed by 7.6e-2 and 1.8e-3 N² m², and the floor of the passes alone (5.3e-3) was
//! nine times what the true model left.
//!
//! Not counted: what the samples cannot tell of the motion between them. The true GMS replayed
//! on the plant's true angle at the samples still leaves 3.7e-4; on the default bench the
//! dithered crossing times cover it, on a LuGre truth (its damping acting on the speed) they
//! do not, and the true model leaves 28 × the floor (docs/src/characterise.md#floor).

use experiments::Sample;
use friction::identify::procedures::output_error::{Replay, Segment, Speed, residuals_with};
use run_store::Store;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::design::REPEATS;

/// Dithered replays of the resolution part.
pub const DITHERS: usize = 4;

/// The floor's parts (the answer's `floor_parts`; `floor_mse` is their sum).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FloorParts {
    /// The bench's repeatability: half the mean squared difference of the two passes.
    pub repeat_mse: f64,
    /// The encoder's resolution: the variance of the best model's replays on dithered angles
    /// (null when no model could be replayed).
    pub resolution_mse: Option<f64>,
    /// The model replayed for `resolution_mse`.
    #[serde(default)]
    pub model: Option<String>,
}

impl FloorParts {
    /// The floor: the sum of the parts.
    pub fn total(&self) -> f64 {
        self.repeat_mse + self.resolution_mse.unwrap_or(0.0)
    }
}

/// Where the passes lie in the validation run: `lead` lead-in pieces, then [`REPEATS`] passes
/// of `pass` pieces each (one piece per segment).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layout {
    /// Lead-in pieces (0 in campaigns made before the lead-in).
    pub lead: usize,
    /// Pieces of one pass.
    pub pass: usize,
}

impl Layout {
    /// The layout of a validation run of `pieces` pieces whose pass has `pass` pieces; `None`
    /// when they do not hold [`REPEATS`] passes.
    pub fn of(pieces: usize, pass: usize) -> Option<Layout> {
        let lead = pieces.checked_sub(REPEATS * pass)?;
        (pass > 0 && lead <= pass).then_some(Layout { lead, pass })
    }

    /// Whether segment `s` is scored (after the lead-in).
    pub fn scored(&self, s: u32) -> bool {
        s as usize >= self.lead
    }
}

/// The layout of the validation run a step record's `spec` describes, and the duration of its
/// lead-in \[s\] (the comparison replays it without scoring it). `None` when the spec holds no
/// [`REPEATS`] passes of [`super::design::validation_pass`].
pub fn layout_of(spec: &Value) -> Option<(Layout, f64)> {
    use experiments::kinds::validation_profile::Piece;
    let pieces: Vec<Piece> =
        serde_json::from_value(spec.get("params")?.get("pieces")?.clone()).ok()?;
    let layout = Layout::of(pieces.len(), super::design::validation_pass().len())?;
    let lead_s = pieces[..layout.lead]
        .iter()
        .map(|p| match p {
            Piece::Hold { duration_s }
            | Piece::Ramp { duration_s, .. }
            | Piece::Step { duration_s, .. } => *duration_s,
        })
        .sum();
    Some((layout, lead_s))
}

/// Half the mean squared difference of the measured friction between the first and the second
/// pass, paired sample by sample within each piece (both passes run the same plan at the same
/// rate). `None` without a second pass to pair with.
pub fn repeat_mse(samples: &[Sample], layout: Layout) -> Option<f64> {
    let by_segment = |s: usize| -> Vec<f64> {
        samples
            .iter()
            .filter(|x| x.segment as usize == s)
            .map(Sample::measured_torque)
            .collect()
    };
    let (mut sum, mut n) = (0.0, 0usize);
    for s in layout.lead..layout.lead + layout.pass {
        let (a, b) = (by_segment(s), by_segment(s + layout.pass));
        for (x, y) in a.iter().zip(&b) {
            if x.is_finite() && y.is_finite() {
                sum += (x - y).powi(2);
                n += 1;
            }
        }
    }
    (n > 0).then(|| 0.5 * sum / n as f64)
}

/// The resolution part: `model` with `params` replayed [`DITHERS`] times on angles the
/// samples' readings could have come from ([`dithered`], seeds 1 to [`DITHERS`]), its speed the
/// encoder's centred difference and each interval moving the dithered displacement, as the
/// comparison replays; the mean over the scored samples of the replays' variance.
pub fn resolution_mse(
    samples: &[Sample],
    layout: Layout,
    model: &str,
    params: &Value,
    count: f64,
) -> anyhow::Result<f64> {
    let t: Vec<f64> = samples.iter().map(|s| s.t).collect();
    let x: Vec<f64> = samples.iter().map(|s| s.x).collect();
    let zero = vec![0.0; t.len()];
    let mut replays = Vec::with_capacity(DITHERS);
    for seed in 1..=DITHERS as u64 {
        let cols = [t.clone(), dithered(&t, &x, count, seed), zero.clone()];
        let mut seg = Segment::from_columns("dithered", &["t", "x", "friction"], &cols)?;
        super::encoder_velocity::from_encoder(&mut seg);
        let r = residuals_with(model, params, &[seg], Replay::Velocity, Speed::Displacement)?;
        replays.push(r.into_iter().next().unwrap_or_default());
    }
    let k = DITHERS as f64;
    let (mut sum, mut n) = (0.0, 0usize);
    for (i, s) in samples.iter().enumerate() {
        if !layout.scored(s.segment) {
            continue;
        }
        let y: Vec<f64> = replays.iter().map(|r| r[i]).collect();
        let mean = y.iter().sum::<f64>() / k;
        sum += y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (k - 1.0);
        n += 1;
    }
    anyhow::ensure!(n > 0, "no scored sample in the validation run");
    let mse = sum / n as f64;
    anyhow::ensure!(mse.is_finite(), "the dithered replays are not finite");
    Ok(mse)
}

/// One angle the encoder's readings `x` (its counts `count` apart, sampled at `t`) could have
/// come from, seeded by `seed`: where the reading changes the angle crossed the boundary
/// between the two counts, at a time uniform within that sample interval; across a count
/// entered and left the same way the angle moves linearly from one crossing to the next (it
/// traverses the count); a count left the way it was entered (a reversal within it, a hold
/// between opposite moves) or held at either end of the record holds one offset uniform in ±
/// half a count, drawn for it.
pub fn dithered(t: &[f64], x: &[f64], count: f64, seed: u64) -> Vec<f64> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    // Plateaus of one reading: [start, end).
    let mut bounds = vec![0];
    bounds.extend((1..x.len()).filter(|&i| x[i] != x[i - 1]));
    bounds.push(x.len());
    // The crossing into plateau p (p ≥ 1): its time.
    let crossing: Vec<f64> = (0..bounds.len() - 1)
        .map(|p| match p {
            0 => f64::NAN,
            _ => {
                let i = bounds[p];
                t[i - 1] + uniform(&mut state) * (t[i] - t[i - 1])
            }
        })
        .collect();
    let mut out = Vec::with_capacity(x.len());
    let plateaus = bounds.len() - 1;
    for p in 0..plateaus {
        let (a, b) = (bounds[p], bounds[p + 1]);
        let r = x[a];
        let d_in = (p > 0).then(|| (r - x[a - 1]).signum());
        let d_out = (p + 1 < plateaus).then(|| (x[b] - r).signum());
        match (d_in, d_out) {
            (Some(i), Some(o)) if i == o => {
                let (t_in, t_out) = (crossing[p], crossing[p + 1]);
                let (from, to) = (r - 0.5 * i * count, r + 0.5 * i * count);
                out.extend((a..b).map(|j| from + (t[j] - t_in) / (t_out - t_in) * (to - from)));
            }
            _ => {
                let offset = (uniform(&mut state) - 0.5) * count;
                out.extend((a..b).map(|_| r + offset));
            }
        }
    }
    out
}

/// SplitMix64: a uniform number in [0, 1) (a seeded stream, the same on every machine).
fn uniform(state: &mut u64) -> f64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// The floor of stored validation run `run` laid out as `layout`: its repeat part, and the
/// resolution part of `best` (a model and its parameters) when given. `None` without a second
/// pass; a replay that fails leaves the resolution part null.
pub async fn of_run(
    store: &Store,
    run: i64,
    layout: Layout,
    best: Option<(&str, &Value)>,
) -> anyhow::Result<Option<FloorParts>> {
    let samples = bench_daemon::session::experiment_samples(store, run).await?;
    let Some(repeat_mse) = repeat_mse(&samples, layout) else {
        return Ok(None);
    };
    let count = super::encoder_velocity::count_of(&samples);
    let best = best.map(|(m, p)| (m.to_string(), p.clone()));
    let resolution = tokio::task::spawn_blocking(move || {
        best.filter(|_| count > 0.0).map(|(m, p)| {
            let mse = resolution_mse(&samples, layout, &m, &p, count).ok();
            (m, mse)
        })
    })
    .await?;
    let (model, resolution_mse) = match resolution {
        Some((m, mse)) => (Some(m), mse),
        None => (None, None),
    };
    Ok(Some(FloorParts {
        repeat_mse,
        resolution_mse,
        model,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(segment: u32, torque: f64) -> Sample {
        Sample {
            t: 0.0,
            x: 0.0,
            v: 0.0,
            u_cmd: 0.0,
            torque_motor: f64::NAN,
            torque_sensor: torque,
            segment,
            flags: experiments::Flags::default(),
        }
    }

    #[test]
    fn the_repeat_part_is_half_the_mean_squared_difference_of_the_two_passes_after_the_lead_in() {
        // A lead-in piece (segment 0, left out) and two pieces a pass; the second pass differs
        // by +0.2 and −0.2 on two of four samples.
        let lead = [(0, 9.0), (0, -9.0)];
        let first = [(1, 1.0), (1, 1.1), (2, -0.5), (2, -0.4)];
        let second = [(3, 1.2), (3, 1.1), (4, -0.7), (4, -0.4)];
        let s: Vec<Sample> = lead
            .iter()
            .chain(&first)
            .chain(&second)
            .map(|(g, t)| sample(*g, *t))
            .collect();
        let layout = Layout::of(5, 2).unwrap();
        assert_eq!(layout, Layout { lead: 1, pass: 2 });
        let floor = repeat_mse(&s, layout).unwrap();
        assert!((floor - 0.5 * (0.04 + 0.04) / 4.0).abs() < 1e-12, "{floor}");
        // Without a second pass there is nothing to pair.
        assert_eq!(repeat_mse(&s[..6], layout), None);
        // A run of fewer pieces than two passes has no layout.
        assert_eq!(Layout::of(3, 2), None);
    }

    #[test]
    fn the_dithered_angle_crosses_between_counts_where_the_reading_changes() {
        let t: Vec<f64> = (0..9).map(f64::from).collect();
        // Held at 0, up through 1 to 2 (1 traversed), back to 1 (2 left the way it was
        // entered), held there.
        let x = [0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 2.0, 1.0, 1.0];
        let d = dithered(&t, &x, 1.0, 7);
        for (a, b) in x.iter().zip(&d) {
            assert!((a - b).abs() <= 0.5, "{x:?} {d:?}");
        }
        // Held counts keep one offset; the traversed count rises through it.
        assert_eq!(d[0], d[1]);
        assert!(d[2] < d[3] && d[3] < d[4], "{d:?}");
        assert_eq!(d[5], d[6]);
        assert_eq!(d[7], d[8]);
        assert_eq!(d, dithered(&t, &x, 1.0, 7), "seeded");
        assert_ne!(d, dithered(&t, &x, 1.0, 8));
    }
}
