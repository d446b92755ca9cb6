//! Every kind's shipped quick spec run on the simulated bench ([`bench_sim::Sim`]: its plant,
//! drive, encoder and torque sensor, in simulated time in this process, through the daemon's
//! control loop with its sequencer and outer loops at the plan's period:
//! [`crate::util::SimBench::bare`]), its analysis checked against the simulator's own truth
//! ([`bench_sim::default_truth`], an asymmetric GMS): the numbers a tribologist reads off each
//! kind must be the physics of that truth, within stated tolerances. Each test prints its rows
//! of the table kind → result → truth → error
//! (`cargo test -p bench-daemon --test integration truth -- --nocapture`).

use crate::util::{record_sim_run, truth_model};
use experiments::{BenchLimits, Results, Spec};

/// One simulated tick's ground truth: true velocity and true friction.
#[derive(Clone, Copy, Debug)]
struct TrueTick {
    v: f64,
    friction: f64,
}

/// A quick spec run on the simulated bench and analysed.
struct QuickRun {
    spec: Spec,
    samples: Vec<experiments::Sample>,
    truth: Vec<TrueTick>,
    results: Results,
}

/// Runs `experiments/specs/<kind>.json` on the simulated bench with its default parameters
/// and true friction ([`record_sim_run`]), keeping the ground truth of every tick beside the
/// samples as recorded.
fn run_quick(kind: &str) -> QuickRun {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let store = run_store::Store::open(dir.path().join("runs.db"))
            .await
            .unwrap();
        let file = format!("{kind}.json");
        let run = record_sim_run(&store, &file, &bench_sim::default_truth()).await;
        let stored = store
            .samples(run.id, &run_store::SampleQuery::default())
            .await
            .unwrap();
        let samples: Vec<experiments::Sample> = stored
            .samples
            .iter()
            .map(bench_daemon::session::to_experiment_sample)
            .collect();
        assert_eq!(samples.len(), run.truth.len(), "one truth per sample");
        let text = std::fs::read_to_string(crate::util::spec(&file)).unwrap();
        QuickRun {
            spec: Spec::from_json(&text).unwrap(),
            samples,
            truth: run
                .truth
                .iter()
                .map(|t| TrueTick {
                    v: t.v_rad_s,
                    friction: t.friction_nm,
                })
                .collect(),
            results: serde_json::from_value(run.finished.results.clone().unwrap()).unwrap(),
        }
    })
}

/// The truth's breakaway level per direction: its steady-state curve at the limit of zero
/// speed (`s(0) = f_s` of the GMS side), signed.
fn true_fs(direction: f64) -> f64 {
    truth_model().steady_state(direction * 1e-9).unwrap()
}

/// The truth's Coulomb level per direction, signed: its steady-state curve is straight
/// (`f_c + sigma2 v`) far beyond the Stribeck speed, so `2 F(v) - F(2 v)` at 5 rad/s.
fn true_fc(direction: f64) -> f64 {
    let m = truth_model();
    2.0 * m.steady_state(direction * 5.0).unwrap() - m.steady_state(direction * 10.0).unwrap()
}

/// The truth's presliding stiffness at rest, `Σ k_i` of its elements \[N m/rad\].
fn true_stiffness() -> f64 {
    let spec = bench_sim::default_truth();
    spec.params["k"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_f64().unwrap())
        .sum()
}

/// The simulated bench's rotor inertia \[kg m²\].
fn true_inertia() -> f64 {
    bench_sim::SimParams::default().inertia_kg_m2
}

/// Prints one row of the closing table and returns the relative error.
fn row(kind: &str, what: &str, result: f64, truth: f64) -> f64 {
    let err = (result - truth) / truth.abs();
    println!(
        "TRUTH | {kind} | {what} | {result:.5} | {truth:.5} | {:+.2} %",
        100.0 * err
    );
    err
}

#[test]
fn sweep_stribeck_points_lie_on_the_truth_curve_unless_flagged() {
    let run = run_quick("constant_velocity_sweep");
    let Results::ConstantVelocitySweep(out) = &run.results else {
        panic!("{:?}", run.results)
    };
    let model = truth_model();
    let mut valid = [0, 0];
    for (side, points) in [(0, &out.positive), (1, &out.negative)] {
        for p in points {
            let truth = model.steady_state(p.setpoint_rad_s).unwrap();
            let what = format!(
                "F_ss({:+} rad/s){}",
                p.setpoint_rad_s,
                if p.stick_slip { " [stick-slip]" } else { "" }
            );
            let err = row("constant_velocity_sweep", &what, p.mean_torque_nm, truth);
            println!(
                "  v mean {:+.4} windowed std {:.4} torque std {:.4}",
                p.velocity_rad_s, p.velocity_std_rad_s, p.std_torque_nm
            );
            if !p.stick_slip {
                valid[side] += 1;
                assert!(err.abs() < 0.03, "{p:?} vs truth {truth}");
            }
        }
    }
    // The velocity loop holds the set point from 0.2 rad/s on: those points must be valid.
    assert!(valid[0] >= 6 && valid[1] >= 6, "valid points {valid:?}");
}

#[test]
fn torque_ramp_breakaway_is_fs_at_slow_rates() {
    let run = run_quick("torque_ramp");
    let Results::TorqueRamp(out) = &run.results else {
        panic!("{:?}", run.results)
    };
    let experiments::Kind::TorqueRamp(p) = &run.spec.kind else {
        panic!()
    };
    assert!(p.rates_nm_s.len() >= 5, "phi_s needs 5 rates: {p:?}");
    for (d, rows) in [(1.0, &out.positive), (-1.0, &out.negative)] {
        assert_eq!(rows.len(), p.rates_nm_s.len(), "{rows:?}");
        for r in rows.iter() {
            row(
                "torque_ramp",
                &format!("breakaway at {:+} N m/s", r.rate_nm_s),
                r.breakaway_torque_nm,
                true_fs(d),
            );
        }
        let slow = &rows[0];
        let err = (slow.breakaway_torque_nm - true_fs(d)) / true_fs(d).abs();
        assert!(err.abs() < 0.03, "{slow:?} vs fs {}", true_fs(d));
    }
}

#[test]
fn presliding_stiffness_is_the_truth_per_direction() {
    let run = run_quick("presliding");
    let Results::Presliding(out) = &run.results else {
        panic!("{:?}", run.results)
    };
    let k = true_stiffness();
    for r in &out.ramps {
        println!(
            "  ramp {:+}: k0 {:?}",
            r.direction, r.initial_stiffness_nm_rad
        );
    }
    for (what, got) in [
        ("stiffness, positive ramps", out.positive_stiffness_nm_rad),
        ("stiffness, negative ramps", out.negative_stiffness_nm_rad),
    ] {
        let err = row("presliding", what, got.unwrap(), k);
        assert!(err.abs() < 0.1, "{what}: {got:?} vs Σk {k}");
    }
    let sine = out.sine.as_ref().unwrap();
    row(
        "presliding",
        "stiffness, torque sine (A/theta0)",
        sine.stiffness_nm_rad.unwrap(),
        k,
    );
    for r in &out.ramps {
        let fs = true_fs(f64::from(r.direction));
        row(
            "presliding",
            &format!("ramp {:+} peak torque", r.direction),
            r.breakaway_torque_nm,
            fs,
        );
    }
}

/// Decelerating minus accelerating true friction at equal true speed, averaged over 20 speed
/// bins (speeds below `rest_v` left out), direction of motion removed, the acceleration from
/// the true speed `w` ticks either side: the opening of the truth's own lag loop over
/// `ticks`, computed here from the simulator's friction and speed.
fn true_loop_opening(ticks: &[TrueTick], rest_v: f64, w: usize) -> Option<f64> {
    let moving: Vec<(usize, &TrueTick)> = ticks
        .iter()
        .enumerate()
        .filter(|(k, t)| *k >= w && *k + w < ticks.len() && t.v.abs() > rest_v)
        .collect();
    let (lo, hi) = moving
        .iter()
        .fold((f64::INFINITY, 0.0_f64), |(a, b), (_, t)| {
            (a.min(t.v.abs()), b.max(t.v.abs()))
        });
    if hi <= lo {
        return None;
    }
    let mut acc = [[0.0_f64; 2]; 20];
    let mut cnt = [[0_usize; 2]; 20];
    for (k, t) in moving {
        let b = (((t.v.abs() - lo) / (hi - lo)) * 20.0)
            .floor()
            .clamp(0.0, 19.0) as usize;
        let decelerating = usize::from((ticks[k + w].v - ticks[k - w].v) * t.v < 0.0);
        acc[b][decelerating] += t.friction * t.v.signum();
        cnt[b][decelerating] += 1;
    }
    let diffs: Vec<f64> = (0..20)
        .filter(|&b| cnt[b][0] > 0 && cnt[b][1] > 0)
        .map(|b| acc[b][1] / cnt[b][1] as f64 - acc[b][0] / cnt[b][0] as f64)
        .collect();
    (!diffs.is_empty()).then(|| diffs.iter().sum::<f64>() / diffs.len() as f64)
}

#[test]
fn frictional_lag_loops_open_in_the_truths_direction() {
    let run = run_quick("frictional_lag");
    let Results::FrictionalLag(out) = &run.results else {
        panic!("{:?}", run.results)
    };
    let limits = BenchLimits::sim_default();
    let plan = run.spec.plan(&limits).unwrap();
    let rest_v = 3.0 * limits.rad_per_count() / limits.period_s;
    // The loops in the analysis's order: the sinusoids, then the chirp, each in plan order.
    let mut segs = Vec::new();
    for role in [experiments::Role::Lag, experiments::Role::Chirp] {
        segs.extend(
            plan.segments
                .iter()
                .enumerate()
                .filter(|(_, s)| s.tag.role == role),
        );
    }
    assert_eq!(segs.len(), out.loops.len());
    for ((i, seg), l) in segs.into_iter().zip(&out.loops) {
        let ticks: Vec<usize> = (0..run.samples.len())
            .filter(|&k| run.samples[k].segment as usize == i)
            .collect();
        let t0 = run.samples[ticks[0]].t;
        // The analysis leaves out the first cycle of a sinusoid (its transient).
        let skip = if l.chirp {
            0.0
        } else {
            std::f64::consts::TAU / seg.tag.value
        };
        let kept: Vec<TrueTick> = ticks
            .into_iter()
            .filter(|&k| run.samples[k].t - t0 >= skip)
            .map(|k| run.truth[k])
            .collect();
        // The true speed carries the velocity loop's ripple: its acceleration is taken over
        // ±10 ms, as the analysis takes the encoder's.
        let truth = true_loop_opening(&kept, rest_v, 10).unwrap();
        let got = l.hysteresis_nm.unwrap();
        row(
            "frictional_lag",
            &format!(
                "loop opening, {} w={} dir {:+}",
                if l.chirp { "chirp" } else { "sine" },
                l.omega_rad_s,
                l.direction
            ),
            got,
            truth,
        );
        assert_eq!(got.signum(), truth.signum(), "{l:?} vs truth {truth}");
        assert!(
            (got - truth).abs() < 0.2 * truth.abs() + 0.003,
            "loop opening {got} vs truth {truth}"
        );
    }
}

#[test]
fn staircase_fs_is_the_truths_per_direction() {
    let run = run_quick("breakaway_staircase");
    let Results::BreakawayStaircase(out) = &run.results else {
        panic!("{:?}", run.results)
    };
    let experiments::Kind::BreakawayStaircase(p) = &run.spec.kind else {
        panic!()
    };
    for s in &out.stairs {
        println!(
            "  staircase {:+} #{}: {:?}",
            s.direction, s.repeat, s.breakaway
        );
    }
    let mut errs = Vec::new();
    for (d, est) in [(1.0, &out.positive), (-1.0, &out.negative)] {
        let est = est.as_ref().unwrap();
        let fs = true_fs(d);
        row("breakaway_staircase", &format!("f_s {d:+}"), est.fs_nm, fs);
        errs.push((est.clone(), fs));
    }
    for (est, fs) in errs {
        // The level that moved is within one increment of the true breakaway: the level
        // below f_s may already break away, as the slipping elements relax towards the lower
        // sliding level while each increment's transient moves the body.
        assert!(
            (est.fs_nm - fs).abs() <= p.step_nm + 1e-3,
            "{est:?} vs fs {fs} (step {})",
            p.step_nm
        );
    }
}

#[test]
fn dwell_time_breakaway_is_fs_at_every_dwell() {
    // The truth (GMS) has no rising static friction: the breakaway after any rest is f_s.
    let run = run_quick("dwell_time");
    let Results::DwellTime(out) = &run.results else {
        panic!("{:?}", run.results)
    };
    let experiments::Kind::DwellTime(p) = &run.spec.kind else {
        panic!()
    };
    for (d, rows) in [(1.0, &out.positive), (-1.0, &out.negative)] {
        assert_eq!(rows.len(), p.dwell_times_s.len(), "{rows:?}");
        let fs = true_fs(d);
        for r in rows.iter() {
            let err = row(
                "dwell_time",
                &format!("breakaway {:+} after {} s", d, r.dwell_s),
                r.breakaway_torque_nm,
                fs,
            );
            assert!(err.abs() < 0.03, "{r:?} vs fs {fs}");
        }
    }
}

/// The critically damped `1/(p/p_n + 1)^2` filter the PRBS analysis applies (exact for a
/// zero-order-hold input), written out again here: the filtered value at each sample's
/// mid-interval.
fn filter_mid(u: &[f64], dt: f64, pn: f64) -> Vec<f64> {
    let e = (-pn * dt).exp();
    let phi = [
        [e * (1.0 + pn * dt), e * dt],
        [-e * pn * pn * dt, e * (1.0 - pn * dt)],
    ];
    let mut y = [u.first().copied().unwrap_or(0.0), 0.0];
    u.iter()
        .map(|&uk| {
            let d = [y[0] - uk, y[1]];
            let next = [
                uk + phi[0][0] * d[0] + phi[0][1] * d[1],
                phi[1][0] * d[0] + phi[1][1] * d[1],
            ];
            let mid = 0.5 * (y[0] + next[0]);
            y = next;
            mid
        })
        .collect()
}

/// The PRBS analysis's filtered data obey the bench's power equation: the filtered applied
/// torque minus the true inertia times the filtered acceleration is the true friction,
/// filtered alike, within 5 % of its RMS. (The quick RLS summary's three-parameter model,
/// `J a + f_v v + f_c sgn v`, has no presliding, and on the GMS truth it lands far from it;
/// it is printed, not asserted.)
#[test]
fn prbs_data_obey_the_power_equation_of_the_true_bench() {
    let run = run_quick("prbs");
    let Results::Prbs(out) = &run.results else {
        panic!("{:?}", run.results)
    };
    let d = &out.data;
    let j = true_inertia();
    let t0 = d.t_s[0];
    let first = run.samples.iter().position(|s| s.t == t0).unwrap();
    let friction: Vec<f64> = run.truth[first..first + d.t_s.len()]
        .iter()
        .map(|t| t.friction)
        .collect();
    // The truth recorded at a tick is the friction at the end of the period before it (the
    // plant has just advanced through it); the analysis moves the held torque back by half a
    // period onto that same interval: compare with the friction's mean over it.
    let held: Vec<f64> = (0..friction.len())
        .map(|k| 0.5 * (friction[k.saturating_sub(1)] + friction[k]))
        .collect();
    let ff = filter_mid(&held, d.dt_s, d.filter_pole_rad_s);
    let skip = (5.0 / d.filter_pole_rad_s / d.dt_s).ceil() as usize;
    let (mut se, mut sf) = (0.0, 0.0);
    for ((u, a), f) in d.u_nm.iter().zip(&d.a_rad_s2).zip(&ff).skip(skip) {
        let e = u - j * a - f;
        se += e * e;
        sf += f * f;
    }
    let rel = (se / sf).sqrt();
    println!("TRUTH | prbs | power equation residual RMS / friction RMS | {rel:.5} | 0 | (< 5 %)");
    let rls = out.rls.as_ref().unwrap();
    println!("  {rls:?}, v_rms {}", out.v_rms_rad_s);
    row("prbs", "inertia J (RLS summary, eta = v^2)", rls.j_kg_m2, j);
    let fc = 0.5 * (true_fc(1.0) - true_fc(-1.0));
    row("prbs", "Coulomb level f_c (RLS summary)", rls.fc_nm, fc);
    assert!(rel < 0.05, "residual {rel}");
}

#[test]
fn validation_profile_ramps_ride_the_truth_curve() {
    let run = run_quick("validation_profile");
    let Results::ValidationProfile(out) = &run.results else {
        panic!("{:?}", run.results)
    };
    let limits = BenchLimits::sim_default();
    let plan = run.spec.plan(&limits).unwrap();
    let model = truth_model();
    for (i, seg) in plan.segments.iter().enumerate() {
        let experiments::Setpoint::Ramp { rate, .. } = seg.setpoint else {
            continue;
        };
        // The middle half of the ramp: past the start transient, before the stop.
        let xs: Vec<&experiments::Sample> = run
            .samples
            .iter()
            .filter(|s| s.segment as usize == i)
            .collect();
        let mid = &xs[xs.len() / 4..3 * xs.len() / 4];
        let mean = mid.iter().map(|s| s.measured_torque()).sum::<f64>() / mid.len() as f64;
        let truth = model.steady_state(rate).unwrap();
        let err = row(
            "validation_profile",
            &format!("mean torque on ramp at {rate:+} rad/s"),
            mean,
            truth,
        );
        assert!(err.abs() < 0.03, "segment {i}: {mean} vs {truth}");
        println!("  {:?}", out.pieces[i]);
    }
}

/// The fits read what the analyses flag: `static_curve` from the quick sweep leaves out the
/// points in stick-slip (and says so), and `phi_s` fits the quick torque-ramp run (five rates
/// per direction) with breakaways at the truth's f_s level, not the creep onset.
#[test]
fn fits_from_quick_runs_leave_out_stick_slip_and_see_the_true_breakaway() {
    use crate::util::fit_run;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let (sweep, ramp) = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = run_store::Store::open(&db).await.unwrap();
        let truth = bench_sim::default_truth();
        let sweep = record_sim_run(&store, "constant_velocity_sweep.json", &truth).await;
        let ramp = record_sim_run(&store, "torque_ramp.json", &truth).await;
        (sweep.id, ramp.id)
    });
    let db = db.to_str().unwrap();
    let fit = |model: &str, procedure: &str, id: i64, given: &str| {
        fit_run(db, model, procedure, id, Some(given))
    };
    let out = fit("static_armstrong", "static_curve", sweep, "{}");
    let notes = out["provenance"]["notes"].to_string();
    println!("static_curve: {notes}");
    assert!(
        notes.contains("12 Stribeck points (+: 6, -: 6)")
            && notes.contains("4 in stick-slip left out"),
        "{notes}"
    );
    assert_eq!(out["provenance"]["n_points"], 12, "{out:#}");
    // Ramps of 0.5 to 5 N m/s never reach the Coulomb plateau of phi_s: f_c comes from the
    // static fit, as the procedure asks (S4 §4.3; one value for both directions, their mean).
    let fc = (out["params"]["fc"].as_f64().unwrap()
        + out["params"]["negative"]["fc"].as_f64().unwrap())
        / 2.0;
    let out = fit(
        "improved_static",
        "phi_s",
        ramp,
        &format!("{{\"fc\": {fc}}}"),
    );
    println!("phi_s: {}", out["params"]);
    assert_eq!(out["provenance"]["n_points"], 10, "{out:#}");
    for (d, key) in [(1.0, "fs"), (-1.0, "fs")] {
        let fs = if d > 0.0 {
            out["params"][key].as_f64()
        } else {
            out["params"]["negative"][key].as_f64()
        };
        let fs = fs.unwrap_or_else(|| panic!("{out:#}"));
        row(
            "torque_ramp",
            &format!("phi_s fit f_s {d:+}"),
            fs,
            true_fs(d).abs(),
        );
    }
}
