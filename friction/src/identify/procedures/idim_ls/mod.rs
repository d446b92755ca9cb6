//! `idim_ls`: the inverse dynamic identification model by least squares (Gautier & Khalil's
//! IDIM-LS; Gautier 1997; the method of the EMPS benchmark, Janot, Gautier & Brunot 2019);
//! docs/src/identification.md#idim_ls.
//!
//! The measured force of a one-axis drive is linear in the dynamic parameters:
//!
//! $$u = J\,\ddot q + f_v\,\dot q + f_c\,\operatorname{sgn}(\dot q) + \text{offset}$$
//!
//! Only the position `q` and the force `u` are recorded. `q` is low-passed by a zero-phase
//! Butterworth filter (order 4, forward and backward), `q̇` and `q̈` are central differences of
//! the filtered position, the observation matrix `W = [q̈, q̇, sgn q̇, 1]` and `u` are decimated
//! together (parallel decimation: the same zero-phase low-pass on every column, then every
//! `r`-th row), and `W θ = u` is solved by ordinary least squares. The standard errors are those
//! of [`stats::least_squares`] (the residual variance,
//! corrected for serial correlation), with the relative standard errors.
//!
//! **Defaults from the data.** The bandwidth `f_b` of the record is the 99 % occupied bandwidth
//! of `u` ([`occupied_bandwidth`](crate::identify::signal::occupied_bandwidth)); the position filter's cut-off is `5 f_b` (at most 0.4 of the
//! sampling rate) and the decimation `r = round(0.8 f_nyq / (2 f_b))` (the decimation filter
//! passes `2 f_b`), as in the EMPS scripts (`f_b` = 20 Hz there: 100 Hz, 10). `cutoff_hz` and
//! `decimation` override them; both, with `f_b`, are recorded in the provenance. Samples within
//! three periods of the lower cut-off of either end are left out (filter transients).
//!
//! **Second stage** (models with a Stribeck curve, `stribeck_exp`): `f_c sgn q̇` is replaced by
//! `sgn(q̇) [f_c + (f_s - f_c) exp(-|q̇/v_s|^δ)]` (δ from `given.delta` or the model's default)
//! and the same decimated rows are fitted by Levenberg–Marquardt, started from the first
//! stage's optimum (`f_s = f_c`, which is that optimum exactly) and from a grid of `v_s` over the
//! speeds of the record; the best is kept, so it is never worse than the first stage.
//!
//! **Requirements on the data.** Columns `t` \[s\], `x` \[m or rad\], `u` [N or N m] of a
//! closed-loop run rich in velocity and acceleration (both directions), sampled well above the
//! axis's bandwidth. Time stamps need not be uniform: a record whose steps differ by more than
//! 1 % is resampled on its median step (noted), unless a gap exceeds `max_gap_steps` (default
//! 10) steps, which is refused naming it. Known values (`j`, `fv`, `fc`) are held fixed.
//!
//! **Per direction** (`given.asymmetric = true`, Janot, Gautier & Brunot's asymmetric EMPS
//! model): `f_v q̇ + f_c sgn q̇` becomes `f_v⁺ q̇⁺ + f_c⁺ [q̇ > 0] + f_v⁻ q̇⁻ - f_c⁻ [q̇ < 0]`
//! (`q̇⁺ = max(q̇, 0)`, `q̇⁻ = min(q̇, 0)`), the split columns decimated with the others; a
//! Stribeck curve gets `f_s`, `v_s` per side too. The positive side is reported under `params`,
//! the negative under `params.negative`, and `directions` says whether they differ beyond their
//! standard errors ([`super::sides`]). A fitted offset is refused with it (it trades off
//! exactly with the two Coulomb levels); a known one is subtracted as usual. Samples at rest
//! (`|q̇| < v_min`, default 5 % of the speed's 99th percentile) and within three periods of the
//! lowest cut-off of rest are left out: a stuck axis's filtered velocity has the sign of the
//! filter's ringing, which would credit one direction with the other's force.
//!
//! **A held force** (`given.force_held = true`): when `u` is the command a drive holds over the
//! following sample (a zero-order hold, as a simulated bench and most drives record it), it
//! leads the position's central differences by half a sample; `u[k]` is replaced by
//! `(u[k-1] + u[k]) / 2`. On the simulated ball screw this removes a bias of about 1 % in `fv`.

mod options;
mod problem;
mod regression;
mod validate;

pub use options::{Conditioning, IdimLsOptions, Known};
pub use regression::{Regression, Side, regression};
pub use validate::predict;

use super::quality::scaled_condition;
use super::sides::{self, Pair};
use super::typed::{parse, typed};
use super::{FitReport, Given, Offset, Procedure, Reads, Table, num};
use crate::identify::lm::LevenbergMarquardt;
use crate::identify::stats::{self, Uncertainty};
use crate::identify::{Bounds, FitError, Runner};
use problem::{FC, FS, FV, J, OFF, Problem, VS, count, idx, name, ols};
use serde_json::{Value, json};

/// `idim_ls`: Coulomb + viscous, and the Stribeck curve in a second stage.
pub const PROCEDURE: Procedure = Procedure {
    name: "idim_ls",
    models: &["coulomb_viscous", "stribeck_exp"],
    columns: &["t", "x", "u"],
    options: typed::<IdimLsOptions>(),
    known_params: true,
    reads: Reads::TimeSeries(Some(&["prbs", "validation_profile", "imported"])),
    part: None,
    iterates: false,
    offset_refused: None,
    fit,
};

/// Fraction of the energy of `u` outside the bandwidth.
pub const BANDWIDTH_FRACTION: f64 = 0.01;
/// Position filter cut-off in bandwidths.
pub const CUTOFF_PER_BANDWIDTH: f64 = 5.0;
/// Default largest gap, in steps, that is resampled across.
pub const MAX_GAP_STEPS: f64 = 10.0;

/// Identifies `j`, `fv`, `fc` (and `offset`; `fs`, `vs` in the second stage; per direction
/// with `given.asymmetric`).
pub fn fit(model: &str, table: &Table, given: &Given) -> Result<FitReport, FitError> {
    let opts: IdimLsOptions = PROCEDURE.options_of(given)?;
    let known: Known = parse(given)?;
    let asymmetric = opts.terms.asymmetric()?;
    let offset = opts.terms.offset;
    let t = table.column("t", PROCEDURE.name)?;
    let x = table.column("x", PROCEDURE.name)?;
    // A known load takes its share of the force before the regression sees it.
    let u = opts
        .terms
        .load()?
        .subtract(x, table.column("u", PROCEDURE.name)?);
    let reg = regression(t, x, &u, &opts.conditioning, asymmetric)?;
    let target: Vec<f64> = reg.u.iter().map(|u| u - offset.known()).collect();
    let stribeck = model != "coulomb_viscous";
    let delta = known.delta.unwrap_or_else(|| {
        crate::registry::entry(model)
            .ok()
            .and_then(|e| e.defaults().get("delta").and_then(Value::as_f64))
            .unwrap_or(1.0)
    });
    let sides = reg.sides.len();
    let mut full = vec![0.0; count(sides)];
    let mut free = Vec::new();
    let mut hold = |i: usize, value: Option<f64>| match value {
        Some(v) => full[i] = v,
        None => free.push(i),
    };
    hold(J, opts.j.map(|j| j.0));
    for side in 0..sides {
        hold(idx(side, FV), known.fv);
        hold(idx(side, FC), known.fc);
    }
    if offset.fitted() {
        free.push(OFF);
    }
    if free.is_empty() {
        return Err(FitError::Setting {
            field: "given".into(),
            rule: "holds j, fv and fc all fixed: nothing is left to fit".into(),
        });
    }
    let mut problem = Problem {
        r: &reg,
        u: &target,
        full,
        free,
        stribeck: false,
        delta,
    };
    let theta = ols(&problem, &target)?;
    let mut best = problem.expand(&theta);
    let mut first_sse = None;
    if stribeck {
        let (q, sse1) = second_stage(&mut problem, best, &known)?;
        first_sse = Some(sse1);
        best = q;
    }
    let held = Held {
        offset,
        bootstrap: opts.bootstrap.replicates(),
        names: [("j", opts.j.is_some()), ("fv", known.fv.is_some()), ("fc", known.fc.is_some())]
            .into_iter()
            .filter_map(|(n, held)| held.then_some(n))
            .collect(),
    };
    report(model, &problem, &best, first_sse, (given, &held), t)
}

/// What the user fixed: the offset, a bootstrap, the values held.
struct Held {
    offset: Offset,
    bootstrap: Option<(usize, u64)>,
    names: Vec<&'static str>,
}

/// The Stribeck stage from the first stage's optimum `q1`; returns the best parameters and the
/// first stage's SSE.
fn second_stage(
    problem: &mut Problem<'_>,
    q1: Vec<f64>,
    known: &Known,
) -> Result<(Vec<f64>, f64), FitError> {
    let sse1 = problem.sse(&q1);
    let mut speeds: Vec<f64> = problem
        .r
        .v
        .iter()
        .map(|v| v.abs())
        .filter(|v| *v > 0.0)
        .collect();
    speeds.sort_by(f64::total_cmp);
    if speeds.is_empty() {
        return Err(FitError::Data("idim_ls: the axis never moves".into()));
    }
    let quantile = |f: f64| speeds[((speeds.len() - 1) as f64 * f) as usize];
    problem.stribeck = true;
    let sides = problem.r.sides.len();
    let mut full = q1.clone();
    for side in 0..sides {
        full[idx(side, FS)] = known.fs.unwrap_or(q1[idx(side, FC)]);
        full[idx(side, VS)] = known.vs.unwrap_or(quantile(0.2));
        for (w, value) in [(FS, known.fs), (VS, known.vs)] {
            if value.is_none() {
                problem.free.push(idx(side, w));
            }
        }
    }
    problem.full = full.clone();
    let (lo, hi): (Vec<f64>, Vec<f64>) = problem
        .free
        .iter()
        .map(|i| match (i.checked_sub(2).map(|j| j % 4), *i) {
            (_, J | OFF) => (f64::NEG_INFINITY, f64::INFINITY),
            (Some(VS), _) => (quantile(0.0) * 1e-2, quantile(1.0)),
            (Some(FS), _) => (0.0, f64::INFINITY),
            _ => (f64::NEG_INFINITY, f64::INFINITY),
        })
        .unzip();
    let bounds = Bounds {
        lower: lo,
        upper: hi,
    };
    // Start 0: the first stage exactly (fs = fc); then fs above fc at several vs.
    let mut starts = vec![full.clone()];
    for f in [0.05, 0.2, 0.5] {
        let mut s = full.clone();
        for side in 0..sides {
            s[idx(side, FS)] = 1.5 * q1[idx(side, FC)].abs();
            s[idx(side, VS)] = quantile(f);
        }
        starts.push(s);
    }
    let mut best = (q1, sse1);
    for s in starts {
        let p0: Vec<f64> = problem.free.iter().map(|i| s[*i]).collect();
        let lm = LevenbergMarquardt::new().with_bounds(bounds.clone());
        let r = Runner::new(&*problem, lm).max_iters(200).run(p0)?;
        if r.cost < best.1 {
            best = (problem.expand(&r.params), r.cost);
        }
    }
    Ok((best.0, sse1))
}

/// The values shown per side: `fv`, `fc` (and `fs`, `vs` of a Stribeck curve).
fn shown(stribeck: bool) -> &'static [usize] {
    if stribeck {
        &[FV, FC, FS, VS]
    } else {
        &[FV, FC]
    }
}

fn report(
    model: &str,
    problem: &Problem<'_>,
    q: &[f64],
    first_sse: Option<f64>,
    (given, held): (&Given, &Held),
    t: &[f64],
) -> Result<FitReport, FitError> {
    let offset = held.offset;
    let (m, reg) = (problem.u.len(), problem.r);
    let resid: Vec<f64> = (0..m).map(|k| problem.u[k] - problem.model(q, k)).collect();
    let jac = problem.jacobian_at(q);
    let unc = stats::least_squares(&jac, &resid, true);
    let method = if problem.stribeck {
        "ordinary_least_squares+levenberg_marquardt"
    } else {
        "ordinary_least_squares"
    };
    let mut rep = FitReport::new(PROCEDURE.name, model, method, PROCEDURE.columns, m, given);
    rep.time_range(t);
    let names: Vec<String> = problem.free.iter().map(|i| name(*i)).collect();
    let se_of = |i: usize| {
        let col = problem.free.iter().position(|f| *f == i)?;
        unc.as_ref().map(|u| u.std_errors[col])
    };
    rep.set("j", q[J], se_of(J));
    for (side, _) in reg.sides.iter().enumerate() {
        for w in shown(problem.stribeck) {
            let i = idx(side, *w);
            let base = problem::SIDE_NAMES[*w];
            if side == 0 {
                rep.set(base, q[i], se_of(i));
            } else {
                rep.set_negative(base, q[i], se_of(i));
            }
        }
    }
    if problem.stribeck {
        rep.set("delta", problem.delta, None);
    }
    match offset {
        Offset::Fit => rep.set("offset", q[OFF], se_of(OFF)),
        Offset::Known(c) => rep.set("offset", c, None),
        Offset::None => {}
    }
    if let Some(Uncertainty { n_eff, lag, .. }) = &unc {
        rep.n_eff = Some(*n_eff);
        rep.provenance
            .settings
            .insert("serial_correlation_window".into(), json!(lag));
    }
    if reg.sides.len() == 2 {
        rep.directions = directions(problem, q, &jac, &resid, rep.n_eff);
    }
    let sse: f64 = resid.iter().map(|r| r * r).sum();
    rep.mse = Some(sse / m as f64);
    rep.goodness(problem.u, &resid, names.len());
    rep.condition = scaled_condition(&jac);
    rep.provenance.settings.extend(reg.settings.clone());
    rep.provenance.notes.extend(reg.notes.iter().cloned());
    rep.provenance.notes.push(if reg.sides.len() == 2 {
        "mse is of the decimated force regression; j is the axis's inertia (mass on a linear axis); friction per direction: positive motion under params, negative under params.negative".into()
    } else {
        "mse is of the decimated force regression; j is the axis's inertia (mass on a linear axis), fc is symmetric (sgn v)".into()
    });
    rep.note_held(&held.names);
    if let Offset::Known(c) = offset {
        rep.provenance
            .notes
            .push(format!("known offset {c} subtracted from u"));
    }
    rep.details = details(&rep, problem, first_sse, sse, &names);
    if let Some((replicates, seed)) = held.bootstrap {
        let boot = bootstrap(problem, q, &resid, replicates, seed)?;
        rep.use_bootstrap(&names, &boot);
    }
    Ok(rep)
}

/// Whether the two sides differ, for each parameter fitted on both.
fn directions(
    problem: &Problem<'_>,
    q: &[f64],
    jac: &nalgebra::DMatrix<f64>,
    resid: &[f64],
    n_eff: Option<f64>,
) -> Option<sides::Directions> {
    let col = |i: usize| problem.free.iter().position(|f| *f == i);
    let pairs: Vec<Pair<'_>> = shown(problem.stribeck)
        .iter()
        .filter_map(|w| {
            let (p, n) = (idx(0, *w), idx(1, *w));
            Some(Pair {
                name: problem::SIDE_NAMES[*w],
                columns: (col(p)?, col(n)?),
                values: (q[p], q[n]),
            })
        })
        .collect();
    if pairs.is_empty() {
        return None;
    }
    let dof = n_eff.unwrap_or(resid.len() as f64) - problem.free.len() as f64;
    sides::compare(jac, resid, &pairs, dof)
}

/// `details`: the samples used, the relative error, the fitted names and, after a second
/// stage, the first stage's figures and whether the Stribeck parameters are supported.
fn details(
    rep: &FitReport,
    problem: &Problem<'_>,
    first_sse: Option<f64>,
    sse: f64,
    names: &[String],
) -> Value {
    let m = problem.u.len();
    let norm_u = problem.u.iter().map(|u| u * u).sum::<f64>().sqrt();
    let mut details = json!({
        "samples_used": m,
        "relative_error_pct": num(100.0 * sse.sqrt() / norm_u),
        "fitted": names,
    });
    if let Some(sse1) = first_sse {
        let k1 = names.len() - 2 * problem.r.sides.len();
        details["first_stage"] = json!({"mse": num(sse1 / m as f64), "parameters": k1});
        details["nested"] = super::nested::judge(
            rep,
            "the Coulomb + viscous first stage",
            (sse1, k1),
            (sse, names.len()),
            &["fs", "vs"],
        );
    }
    details
}

/// A moving-block bootstrap of the fit (the first stage by least squares, the second by
/// Levenberg–Marquardt from the optimum).
fn bootstrap(
    problem: &Problem<'_>,
    q: &[f64],
    resid: &[f64],
    replicates: usize,
    seed: u64,
) -> Result<stats::Bootstrap, FitError> {
    let fitted: Vec<f64> = (0..problem.u.len()).map(|k| problem.model(q, k)).collect();
    let block = stats::andrews_lag(resid);
    stats::block_bootstrap(&fitted, resid, block, replicates, seed, |y| {
        if problem.stribeck {
            let p0: Vec<f64> = problem.free.iter().map(|i| q[*i]).collect();
            let bp = Problem {
                r: problem.r,
                u: y,
                full: q.to_vec(),
                free: problem.free.clone(),
                stribeck: true,
                delta: problem.delta,
            };
            Ok(Runner::new(&bp, LevenbergMarquardt::new())
                .max_iters(100)
                .run(p0)?
                .params)
        } else {
            ols(problem, y)
        }
    })
}

#[cfg(test)]
mod tests;
