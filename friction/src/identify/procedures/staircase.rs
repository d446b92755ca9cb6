//! Breakaway `f_s` by torque increments (S2 §IV.B, Fig. 7; docs/src/identification.md#staircase) and the speed
//! threshold Σ from the stick oscillation (S2 §IV.C; docs/src/identification.md#hybrid-tuning).
//!
//! **Staircase.** From standstill the torque rises from 0 in steps of `xi` (S2: 0.005 N m), each
//! held until the transients settle; when motion is detected the torque is stored as one `f_s`
//! sample, the torque is reset to 0 and the staircase starts again, in both directions. Here the
//! recorded run is scanned: an attempt is *armed* once the body has been still for `rest_s`
//! (its rest position `x_rest` is taken then); *motion* is `|x - x_rest| > x_detect`; the
//! *onset* is the last sample before that at which the body was still at `x_rest` (within
//! `x_detect/10`), and the sample is the measured torque at the onset, averaged over the
//! `window_s` before it (0 = the onset sample alone: the crest of the staircase, S2 Fig. 8).
//! The sign of the sample is the direction. Then
//!
//! $$f_s^+ = \overline{u^+},\quad f_s^- = \overline{u^-},\quad f_s = (|f_s^+| + |f_s^-|)/2$$
//!
//! (S2 takes the mean of the absolute values: (0.0777 + 0.0853)/2 = 0.0815 N m). A symmetric
//! model gets `fs` = that mean; an asymmetric one `fs` = `f_s^+` and `negative.fs` = `|f_s^-|`.
//! Standard errors: the samples' standard deviation over `sqrt(n)`.
//!
//! **Σ tuning** (`given.part = "sigma"`, `hybrid` only). A constant position reference is held
//! in closed loop with a small Σ; if the speed oscillates around 0, Σ is set above the largest
//! oscillation amplitude. Here: `sigma_v = margin * max |v|` over the last half of the run
//! (`margin` = 1.2, given), with `v` from the `v` column.
//!
//! **Requirements on the data.** Staircase: columns `t` \[s\], `x` \[rad or m\], `u` \[N m or N\] of a
//! staircase run (several go-and-returns, both directions), starting at rest; each attempt must
//! end with the body still for `rest_s` (default 0.02 s) before the next one; `x_detect` (default
//! 1e-3) must exceed the position noise and be reached soon after breakaway. Σ tuning: columns
//! `t`, `v` of a constant-reference run whose second half is the settled oscillation.

use super::typed::{Positive, typed};
use super::{FitReport, Given, Offset, Procedure, Reads, Table, mean, need_rows};
use crate::identify::FitError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// What `staircase` takes in `given`.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StaircaseOptions {
    /// breakaway: the staircase's breakaway levels; sigma: Σ tuning from the stick oscillation (hybrid)
    #[serde(default)]
    pub part: StaircasePart,
    /// Displacement that marks a breakaway
    #[serde(default = "x_detect")]
    #[schemars(extend("x-unit" = "rad or m"))]
    pub x_detect: Positive,
    /// Time at rest before a step counts
    #[serde(default = "rest_s")]
    #[schemars(extend("x-unit" = "s"))]
    pub rest_s: Positive,
    /// Window before the breakaway averaged for its level (0: the sample itself)
    #[serde(default)]
    #[schemars(extend("x-unit" = "s"))]
    pub window_s: f64,
    /// Σ tuning: the margin over the stick oscillation
    #[serde(default = "sigma_margin")]
    pub margin: Positive,
    /// A constant in the measured force: true fits it (params.offset), a number is a known offset subtracted first
    #[serde(default)]
    pub offset: Offset,
}

/// What of a staircase run `staircase` reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StaircasePart {
    /// The breakaway levels of the steps.
    #[default]
    Breakaway,
    /// Σ tuning from the stick oscillation.
    Sigma,
}

fn x_detect() -> Positive {
    Positive(X_DETECT)
}
fn rest_s() -> Positive {
    Positive(REST_S)
}
fn sigma_margin() -> Positive {
    Positive(SIGMA_MARGIN)
}

/// `staircase`: models with a breakaway level `fs` (and `hybrid`'s Σ).
pub const PROCEDURE: Procedure = Procedure {
    name: "staircase",
    models: &[
        "hybrid",
        "static_coulomb_viscous",
        "stribeck_exp",
        "stribeck_lorentz",
        "tustin",
        "static_armstrong",
        "karnopp",
        "lugre",
        "improved_static",
        "improved_armstrong",
        "improved_lugre",
    ],
    columns: &["t"],
    options: typed::<StaircaseOptions>(),
    known_params: false,
    reads: Reads::TimeSeries(Some(&["breakaway_staircase"])),
    part: None,
    iterates: false,
    offset_refused: None,
    fit,
};

/// Default motion threshold on `|x - x_rest|` [rad or m].
pub const X_DETECT: f64 = 1e-3;
/// Default stillness time that arms an attempt \[s\].
pub const REST_S: f64 = 0.02;
/// Default safety margin of Σ over the oscillation amplitude.
pub const SIGMA_MARGIN: f64 = 1.2;

/// One breakaway sample: onset time \[s\] and torque \[N m or N\] (signed).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Breakaway {
    /// Onset time.
    pub t: f64,
    /// Torque at onset (averaged over the window).
    pub torque: f64,
}

/// Scans a staircase run for breakaway samples (see the module doc).
pub fn breakaways(
    t: &[f64],
    x: &[f64],
    u: &[f64],
    x_detect: f64,
    rest_s: f64,
    window_s: f64,
) -> Vec<Breakaway> {
    let still_tol = x_detect / 10.0;
    let mut out = Vec::new();
    let mut still_since = 0usize;
    let mut armed: Option<f64> = None; // x_rest
    for k in 1..t.len() {
        if (x[k] - x[k - 1]).abs() > still_tol * 0.1 {
            still_since = k;
        }
        match armed {
            None => {
                if t[k] - t[still_since] >= rest_s {
                    armed = Some(x[k]);
                }
            }
            Some(x_rest) => {
                if (x[k] - x_rest).abs() > x_detect {
                    let onset = (0..k)
                        .rev()
                        .find(|&j| (x[j] - x_rest).abs() <= still_tol)
                        .unwrap_or(k - 1);
                    let from = (0..=onset)
                        .rev()
                        .take_while(|&j| t[onset] - t[j] <= window_s)
                        .last()
                        .unwrap_or(onset);
                    out.push(Breakaway {
                        t: t[onset],
                        torque: mean(&u[from..=onset]),
                    });
                    armed = None;
                    still_since = k;
                }
            }
        }
    }
    out
}

fn stats(s: &[f64]) -> (f64, f64) {
    let m = mean(s);
    let sd = if s.len() > 1 {
        (s.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (s.len() - 1) as f64).sqrt()
    } else {
        f64::NAN
    };
    (m, sd / (s.len() as f64).sqrt())
}

/// Staircase analysis (or Σ tuning with `given.part = "sigma"`).
pub fn fit(model: &str, table: &Table, given: &Given) -> Result<FitReport, FitError> {
    let t = table.column("t", PROCEDURE.name)?;
    let opts: StaircaseOptions = PROCEDURE.options_of(given)?;
    if opts.part == StaircasePart::Sigma {
        return sigma(model, table, given, opts.margin.0);
    }
    let x = table.column("x", PROCEDURE.name)?;
    let u = table.column("u", PROCEDURE.name)?;
    need_rows(t.len(), 3, "staircase")?;
    let (x_detect, rest_s) = (opts.x_detect.0, opts.rest_s.0);
    let (window_s, offset) = (opts.window_s.max(0.0), opts.offset);
    let shifted: Vec<f64> = u.iter().map(|u| u - offset.known()).collect();
    let samples = breakaways(t, x, &shifted, x_detect, rest_s, window_s);
    let pos: Vec<f64> = samples
        .iter()
        .filter(|b| b.torque > 0.0)
        .map(|b| b.torque)
        .collect();
    let neg: Vec<f64> = samples
        .iter()
        .filter(|b| b.torque < 0.0)
        .map(|b| b.torque)
        .collect();
    if pos.is_empty() && neg.is_empty() {
        return Err(FitError::Data(format!(
            "staircase: no breakaway found (no attempt moved more than x_detect = {x_detect} after {rest_s} s at rest)"
        )));
    }
    let mut report = FitReport::new(
        PROCEDURE.name,
        model,
        "breakaway_staircase",
        &["t", "x", "u"],
        t.len(),
        given,
    );
    report.time_range(t);
    let (mp, sp) = if pos.is_empty() {
        (f64::NAN, f64::NAN)
    } else {
        stats(&pos)
    };
    let (mn, sn) = if neg.is_empty() {
        (f64::NAN, f64::NAN)
    } else {
        stats(&neg)
    };
    let both: Vec<f64> = [mp.abs(), mn.abs()]
        .into_iter()
        .filter(|x| x.is_finite())
        .collect();
    let fs = mean(&both);
    let asymmetric = crate::registry::entry(model)
        .map(|e| e.asymmetric)
        .unwrap_or(false);
    if offset.fitted() {
        if pos.is_empty() || neg.is_empty() {
            return Err(FitError::Data(
                "staircase: an offset needs breakaways in both directions (it is half their sum)"
                    .into(),
            ));
        }
        // The offset shifts both crests the same way: half the sum of the signed means.
        let se = (0.5 * (sp.powi(2) + sn.powi(2)).sqrt()).max(0.0);
        let se = Some(se).filter(|x| x.is_finite() && *x > 0.0);
        report.set("fs", 0.5 * (mp - mn), se);
        report.set("offset", 0.5 * (mp + mn), se);
        report.provenance.notes.push(
            "offset = (fs+ + fs-)/2 of the signed means, fs = (fs+ - fs-)/2 for both directions (an offset and a per-direction fs cannot be told apart)".into(),
        );
    } else if asymmetric && !pos.is_empty() && !neg.is_empty() {
        report.set("fs", mp, Some(sp).filter(|x| x.is_finite()));
        report.params.insert("negative".into(), json!({"fs": -mn}));
        if sn.is_finite() {
            report
                .std_errors
                .insert("negative".into(), json!({"fs": sn}));
        }
    } else {
        let se = (sp.powi(2).max(0.0) * f64::from(u8::from(sp.is_finite()))
            + sn.powi(2) * f64::from(u8::from(sn.is_finite())))
        .sqrt()
            / both.len() as f64;
        report.set("fs", fs, Some(se).filter(|x| x.is_finite() && *x > 0.0));
    }
    // Residual: spread of the samples about their direction's mean.
    let sse: f64 = pos.iter().map(|x| (x - mp).powi(2)).sum::<f64>()
        + neg.iter().map(|x| (x - mn).powi(2)).sum::<f64>();
    report.mse = Some(sse / (pos.len() + neg.len()) as f64);
    report.details = json!({
        "fs_positive": super::num(mp), "fs_negative": super::num(mn), "fs_mean_abs": super::num(fs),
        "n_positive": pos.len(), "n_negative": neg.len(),
        "samples": samples.iter().map(|b| json!({"t": b.t, "torque": b.torque})).collect::<Vec<_>>(),
        "settings": {"x_detect": x_detect, "rest_s": rest_s, "window_s": window_s},
    });
    Ok(report)
}

/// Σ tuning from the stick oscillation (S2 §IV.C).
fn sigma(model: &str, table: &Table, given: &Given, margin: f64) -> Result<FitReport, FitError> {
    if model != "hybrid" {
        return Err(FitError::NotApplicable {
            procedure: "staircase (part sigma)".into(),
            model: model.into(),
            applies_to: "hybrid".into(),
        });
    }
    let t = table.column("t", PROCEDURE.name)?;
    let v = table.column("v", PROCEDURE.name)?;
    need_rows(t.len(), 4, "staircase sigma tuning")?;
    let tail = &v[v.len() / 2..];
    let amp = tail.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let mut report = FitReport::new(
        PROCEDURE.name,
        model,
        "stick_oscillation_amplitude",
        &["t", "v"],
        tail.len(),
        given,
    );
    report.time_range(&t[t.len() / 2..]);
    report.set("sigma_v", margin * amp, None);
    report.details = json!({"oscillation_amplitude": amp, "margin": margin});
    if amp == 0.0 {
        report
            .provenance
            .notes
            .push("no speed oscillation: Σ may stay small (S2 §IV.C)".into());
    }
    Ok(report)
}
