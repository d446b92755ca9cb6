//! Unit tests of `compensation_trial`: the order of the trials, the plan, the checks and the
//! analysis.

use super::analysis::TRACE_POINTS;
use super::*;
use crate::Sample;
use serde_json::json;

fn quick() -> Params {
    Params {
        references: vec![Reference::Sine {
            amplitude_rad: 0.25,
            frequency_hz: 1.0,
            cycles: 2,
        }],
        compensators: vec![
            Compensator::none(),
            Compensator {
                params: json!({"fc": 1.0, "fv": 0.05}),
                ..Compensator::model_named("cv", "coulomb_viscous")
            },
        ],
        repeats: 3,
        ..Params::default()
    }
}

#[test]
fn every_pair_runs_once_per_repeat_in_a_seeded_order() {
    let p = Params::default();
    let order = p.order();
    assert_eq!(order.len(), 5 * 3 * 2);
    for r in 0..2 {
        let mut round: Vec<(usize, usize)> = order
            .iter()
            .filter(|o| o.2 == r)
            .map(|o| (o.0, o.1))
            .collect();
        round.sort_unstable();
        let all: Vec<(usize, usize)> = (0..5).flat_map(|c| (0..3).map(move |j| (c, j))).collect();
        assert_eq!(round, all);
    }
    assert_eq!(order, p.order(), "the same seed gives the same order");
    let other = Params {
        seed: 2,
        ..Params::default()
    };
    assert_ne!(order, other.order(), "another seed, another order");
}

#[test]
fn a_trial_tracks_from_where_it_starts_and_stops_on_a_runaway_error() {
    let plan = crate::Spec::from_json(
        &json!({"kind": "compensation_trial", "params": serde_json::to_value(quick()).unwrap()})
            .to_string(),
    )
    .unwrap()
    .plan(&BenchLimits::sim_default())
    .unwrap();
    assert_eq!(plan.segments.len(), 2 * 2 * 3);
    let track = &plan.segments[0];
    assert_eq!(
        (track.mode, track.anchor),
        (DriveMode::Position, Anchor::SegmentStart)
    );
    assert!(track.compensator.is_some());
    assert!(
        track
            .stops
            .contains(&Stop::TrackingError { bound_rad: 0.5 })
    );
    // A sine from rest: 0 at the start and the end, 2A at the middle.
    assert!(track.setpoint.value(0.0).abs() < 1e-12);
    assert!((track.setpoint.value(0.5) - 0.5).abs() < 1e-12);
    assert!(track.setpoint.rate(0.0).abs() < 1e-12);
    assert_eq!(plan.segments[1].tag.role, Role::Rest);
}

#[test]
fn bad_compensators_are_refused_naming_the_field() {
    let bad = |c: Compensator| {
        let p = Params {
            compensators: vec![Compensator::none(), c],
            ..quick()
        };
        p.segments(&BenchLimits::sim_default())
            .unwrap_err()
            .to_string()
    };
    let e = bad(Compensator::model_named("x", "no_such_model"));
    assert!(e.starts_with("params.compensators[1].model"), "{e}");
    let e = bad(Compensator {
        observer_gain: Some(10.0),
        ..Compensator::model_named("x", "gms")
    });
    assert!(
        e.contains("observer_gain") && e.contains("lugre only"),
        "{e}"
    );
    let e = bad(Compensator {
        velocity: Some(Velocity::Reference),
        ..Compensator::model_named("x", "gms")
    });
    assert!(e.contains("velocity") && e.contains("dynamic"), "{e}");
    let e = bad(Compensator {
        params: json!({"fc": -1}),
        ..Compensator::model_named("x", "coulomb_viscous")
    });
    assert!(e.starts_with("params.compensators[1].params"), "{e}");
    let e = bad(Compensator::none());
    assert!(e.contains("used twice"), "{e}");
    let e = bad(Compensator {
        params: json!("mine"),
        ..Compensator::model_named("x", "gms")
    });
    assert!(e.contains("set:NAME"), "{e}");
}

/// A synthetic run: the baseline lags by a glitch after each reversal, the compensator
/// tracks with a tenth of the error.
#[test]
fn the_analysis_ranks_by_rms_error_and_measures_the_glitch_at_reversals() {
    let p = quick();
    let plan = Kind::CompensationTrial(p.clone())
        .plan("t", &BenchLimits::sim_default())
        .unwrap();
    let mut samples = Vec::new();
    let mut t = 0.0;
    for (k, seg) in plan.segments.iter().enumerate() {
        let n = (seg.expected_s / 1e-3).round() as usize;
        let scale = match seg.compensator {
            Some(0) => 1.0,
            Some(_) => 0.1,
            None => 0.0,
        };
        for i in 0..n {
            let ts = i as f64 * 1e-3;
            // 0.02 rad of error decaying after each reversal (0.5, 1 and 1.5 s).
            let since = [0.5, 1.0, 1.5]
                .iter()
                .filter(|&&r| ts >= r)
                .map(|r| ts - r)
                .fold(f64::INFINITY, f64::min);
            let e = if since.is_finite() {
                0.02 * (-since / 0.05).exp()
            } else {
                0.0
            };
            samples.push(Sample {
                t,
                x: seg.setpoint.value(ts) * f64::from(seg.tag.role == Role::Track) + scale * e,
                u_cmd: scale,
                segment: k as u32,
                ..Sample::default()
            });
            t += 1e-3;
        }
    }
    let out = p.analyse(&plan, &samples).unwrap();
    assert_eq!(out.baseline.as_deref(), Some("none"));
    let names: Vec<&str> = out.ranking.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["cv", "none"]);
    let (best, base) = (&out.ranking[0], &out.ranking[1]);
    assert_eq!(best.trials, 3);
    // Three reversals per trial (twice at 2A, once at 0 between the cycles).
    assert!(
        (base.reversal_glitch.unwrap() - 0.02).abs() < 1e-3,
        "{base:?}"
    );
    assert!(
        (best.improvement_pct.unwrap() - 90.0).abs() < 1e-6,
        "{best:?}"
    );
    assert_eq!(base.improvement_pct, Some(0.0));
    assert!(!best.unstable && !base.unstable);
    assert_eq!(out.reversal_traces.len(), 2);
    assert!(out.reversal_traces[0].t_s.len() <= TRACE_POINTS);
}

use crate::Kind;
