//! Tests of the Nnaji model: the Stribeck curve, presliding, breakaway, branch rules, robustness.

use super::*;
use crate::model::{FrictionModel, Model};
use crate::scenario::{Profile, Scenario, simulate};
use std::f64::consts::PI;

fn model() -> Model<Nnaji> {
    Model::new(Params::default()).unwrap()
}

#[test]
fn steady_state_is_the_stribeck_curve() {
    for &v in &[1e-4, 5e-4, 1e-3, 2e-3, 0.01, 0.1, 0.45, -2e-3, -0.05] {
        for &dt in &[1e-4, 1e-3, 1e-2] {
            let mut m = model();
            let mut f = 0.0;
            for _ in 0..(15.0 / dt) as usize {
                f = m.step(&Input::velocity(v), dt);
            }
            let ss = m.steady_state(v).unwrap();
            assert!((f - ss).abs() < 1e-9, "v={v} dt={dt}: {f} vs {ss}");
        }
    }
}

#[test]
fn velocity_sweep_follows_the_stribeck_curve() {
    // S3 Fig. 5 / docs/src/reproduction.md#check-7: from rest to 0.45 m/s. The velocity is held at
    // v0 = 1e-4 m/s until the bristle saturates (gross slide), then rises geometrically to
    // 0.45 m/s in 60 s. In gross slide F = gamma + fv v and gamma lags g(v) by tau, so
    // |F - F_ss(v)| <= tau |g'(v)| dv/dt (to first order).
    let p = Params::default();
    let (dt, v0, v1, t_sweep) = (1e-4f64, 1e-4, 0.45, 60.0);
    let mut s = Nnaji::initial_state(&p);
    for _ in 0..(15.0 / dt) as usize {
        step(&p, &mut s, &Input::velocity(v0), dt);
    }
    let growth = (v1 / v0).ln() / t_sweep;
    let n = (t_sweep / dt).round() as usize;
    let (mut f_max, mut f_min) = (0.0f64, f64::INFINITY);
    let mut worst = 0.0f64;
    let (mut f, mut v) = (0.0, 0.0);
    for k in 0..=n {
        v = v0 * (growth * k as f64 * dt).exp();
        f = step(&p, &mut s, &Input::velocity(v), dt);
        f_max = f_max.max(f);
        f_min = f_min.min(f);
        let r = (v / p.vs).powi(2);
        let g_slope = (p.fs - p.fc) * 2.0 * v / (p.vs * p.vs) * (-r).exp();
        let bound = 1.05 * p.tau * g_slope * growth * v + 1e-9;
        let err = (f - Nnaji::steady_state(&p, v).unwrap()).abs();
        worst = worst.max(err / bound);
    }
    assert!(worst <= 1.0, "lag error {worst} x the bound");
    // The Stribeck hump: from about fs down to fc, then the viscous rise.
    assert!(f_max > 1.49 && f_max <= p.fs, "peak {f_max}");
    assert!(f_min > p.fc && f_min < p.fc + 2e-3, "minimum {f_min}");
    assert!((f - Nnaji::steady_state(&p, v).unwrap()).abs() < 1e-9);
}

#[test]
fn presliding_stiffness_from_rest_is_pi_fs_over_2zb() {
    let p = Params::default();
    assert!((p.presliding_stiffness() - 2356.194).abs() < 1e-3);
    let mut s = Nnaji::initial_state(&p);
    let (v, dt) = (1e-6, 1e-3);
    let mut f = 0.0;
    for _ in 0..10 {
        f = step(&p, &mut s, &Input::velocity(v), dt);
    }
    let x = 10.0 * v * dt;
    let spring = f - (p.sigma + p.fv) * v;
    assert!(
        (spring / x - p.presliding_stiffness()).abs() < 1e-6 * p.presliding_stiffness(),
        "{}",
        spring / x
    );
}

#[test]
fn sigma_from_an_assumed_damping_ratio() {
    // docs/src/identification.md#nnaji, docs/src/reproduction.md#check-5: S3's 0.0174 with the text's fv = 0.0403.
    let sigma = sigma_from_damping(6.528e-5, 0.0994, 0.0060, 0.0403, 0.7);
    assert!((sigma - 0.017403).abs() < 5e-7, "{sigma}");
    // Table 3's fv = 0.0603 gives a negative sigma (S3 is inconsistent).
    let neg = sigma_from_damping(6.528e-5, 0.0994, 0.0060, 0.0603, 0.7);
    assert!((neg + 0.0026).abs() < 5e-5 && neg < 0.0, "{neg}");
}

/// Peak friction of a 1 kg mass under `u = rate t` until it slides (v > 0.01 m/s).
fn breakaway_peak(rate: f64, dt: f64) -> f64 {
    let sc = Scenario::Force {
        load: crate::Load::None,
        mass: 1.0,
        force: Profile::Ramp { rate, offset: 0.0 },
    };
    let mut m = model();
    let (mut peak, mut sliding) = (0.0f64, false);
    simulate(&mut m, &sc, dt, 1.6 / rate, 1, |r| {
        sliding |= r.v > 0.01;
        if !sliding {
            peak = peak.max(r.friction);
        }
    });
    assert!(sliding, "rate {rate}: no breakaway");
    peak
}

#[test]
fn breakaway_force_vs_force_rate_lies_in_the_published_band() {
    // docs/src/reproduction.md#check-6 (weak check): S3 prints 1.491 / 1.498 / 1.499 N at 0.05 / 0.1 /
    // 0.2 N/s. Here (dt = 1e-4, fv = 0.4): 1.4965 / 1.4914 / 1.4792 N (1e-5: the same to
    // 5e-6), all in the 1.47–1.50 band and below fs, but with the opposite trend (docs/src/reproduction.md#check-6).
    let p = Params::default();
    let peaks: Vec<f64> = [0.05, 0.1, 0.2]
        .iter()
        .map(|&r| breakaway_peak(r, 1e-4))
        .collect();
    for (&pk, expected) in peaks.iter().zip([1.4965, 1.4914, 1.4792]) {
        assert!((1.47..=1.50).contains(&pk) && pk < p.fs, "{peaks:?}");
        assert!((pk - expected).abs() < 2e-4, "{peaks:?}");
    }
}

/// Position of a mass under `u = 0.6 - 0.5 cos(2 pi t)` (0.1 N to 1.1 N < fs) once a cycle,
/// and the largest |x|.
fn positions_per_cycle(m: &mut dyn FrictionModel, dt: f64, cycles: usize) -> (Vec<f64>, f64) {
    let sc = Scenario::Force {
        load: crate::Load::None,
        mass: 1.0,
        force: Profile::Sine {
            amplitude: 0.5,
            omega: std::f64::consts::TAU,
            offset: 0.6,
            phase: -std::f64::consts::FRAC_PI_2,
        },
    };
    let per = (1.0 / dt).round() as usize;
    let (mut xs, mut x_max, mut k) = (Vec::new(), 0.0f64, 0);
    simulate(m, &sc, dt, cycles as f64, 1, |r| {
        if k % per == 0 {
            xs.push(r.x);
        }
        k += 1;
        x_max = x_max.max(r.x.abs());
    });
    (xs, x_max)
}

#[test]
fn no_drift_under_an_oscillating_sub_breakaway_force() {
    let dt = 1e-3;
    for rule in [BranchRule::Symmetric, BranchRule::Masing] {
        let mut m = Model::<Nnaji>::new(Params {
            branch_rule: rule,
            ..Params::default()
        })
        .unwrap();
        let (xs, x_max) = positions_per_cycle(&mut m, dt, 40);
        assert!(x_max < 1e-3, "{rule:?}: presliding only, |x| <= {x_max}");
        // Masing loops close after the first cycle; the symmetric rule's branches differ up
        // and down, so the loop shakes down to a closed one (the change halves each cycle).
        let late = (xs[40] - xs[30]).abs();
        assert!(
            late < 1e-6 * x_max,
            "{rule:?}: drift {late} m over 10 cycles"
        );
        let d = |i: usize| (xs[i + 1] - xs[i]).abs();
        assert!(d(20) < 0.6 * d(10).max(1e-15), "{rule:?}: {xs:?}");
    }
    let mut lugre = Model::<crate::models::lugre::LuGre>::new(Default::default()).unwrap();
    let (xl, x_max) = positions_per_cycle(&mut lugre, dt, 40);
    assert!((xl[40] - xl[30]).abs() > 1e-2 * x_max, "LuGre should drift");
}

#[test]
fn branches_follow_the_rule_and_hold_at_the_crest() {
    for rule in [BranchRule::Symmetric, BranchRule::Masing] {
        let p = Params {
            branch_rule: rule,
            ..Params::default()
        };
        let mut s = Nnaji::initial_state(&p);
        let (v, dt) = (1e-6, 1.0); // 1 µm per step, sigma v negligible: pre-slide
        for _ in 0..500 {
            step(&p, &mut s, &Input::velocity(v), dt);
        }
        // Virgin branch: fs sin(pi z / (2 zb)).
        let f_r = p.fs * (PI / 4.0).sin();
        let fh = |s: &State| Branch::current(&p, s).force(s.z);
        assert!((fh(&s) - f_r).abs() < 1e-9);
        for _ in 0..500 {
            step(&p, &mut s, &Input::velocity(-v), dt);
        }
        assert!((s.z_r - 5e-4).abs() < 1e-12 && (s.f_r - f_r).abs() < 1e-9);
        assert_eq!(s.dir, -1.0);
        let (dz, df) = match rule {
            BranchRule::Symmetric => (2.0 * (p.zb + 5e-4), 2.0 * (p.fs + f_r)),
            BranchRule::Masing => (2.0 * p.zb, 2.0 * p.fs),
        };
        let expected = f_r - df * (FRAC_PI_2 * 5e-4 / dz).sin();
        assert!(s.z.abs() < 1e-12);
        assert!((fh(&s) - expected).abs() < 1e-9, "{rule:?}");
    }
    // Guard: beyond the target the virgin branch holds at its crest, with zero slope.
    let p = Params::default();
    let b = Branch::new(&p, 0.0, 0.0, 1.0);
    assert_eq!(b.force(2.5 * p.zb), p.fs);
    assert_eq!(b.stiffness(2.5 * p.zb), 0.0);
    assert_eq!(b.force(-3.0 * p.zb), -p.fs);
}

#[test]
fn validation_and_branch_rule_serde() {
    let err = Params {
        zb: 0.0,
        ..Params::default()
    };
    assert_eq!(err.validate().unwrap_err().field, "zb");
    let err = Params {
        fs: 0.5,
        ..Params::default()
    };
    assert_eq!(
        err.validate().unwrap_err().to_string(),
        "fs (0.5) must be >= fc (1)"
    );
    let p: Params = serde_json::from_str(
        r#"{"fs":1.5,"fc":1.0,"vs":0.001,"zb":0.001,
            "sigma":316.0,"tau":0.002,"fv":0.4,"branch_rule":"masing"}"#,
    )
    .unwrap();
    assert_eq!(p.branch_rule, BranchRule::Masing);
    assert_eq!(
        serde_json::to_value(Params::default()).unwrap()["branch_rule"],
        "symmetric"
    );
}

#[test]
fn robust_in_every_scenario_at_every_step() {
    let p = Params::default();
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
            force: sine(1.0, PI),
        },
        Scenario::Force {
            load: crate::Load::None,
            mass: 1.0,
            force: sine(3.0, PI),
        },
        Scenario::Velocity {
            velocity: sine(0.1, 2.0),
        },
        Scenario::Position {
            position: sine(0.01, 2.0),
        },
        Scenario::Position {
            position: sine(5e-4, 2.0),
        },
    ];
    for sc in &scenarios {
        for &dt in &[1e-4, 1e-3, 1e-2] {
            let mut m = model();
            let (mut f_max, mut v_max) = (0.0f64, 0.0f64);
            simulate(&mut m, sc, dt, 60.0, 1, |r| {
                assert!(r.friction.is_finite() && r.v.is_finite() && r.x.is_finite());
                f_max = f_max.max(r.friction.abs());
                v_max = v_max.max(r.v.abs());
            });
            assert_eq!(m.quarantined(), 0);
            assert!(f_max < 3.0 * p.fs, "{sc:?} dt={dt}: |F| up to {f_max}");
            assert!(v_max < 10.0, "{sc:?} dt={dt}: |v| up to {v_max}");
        }
    }
}
