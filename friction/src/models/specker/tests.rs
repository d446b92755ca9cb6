//! Tests of the Specker model: the static map, both integrators from 0.1 to 10 ms, robustness.

use super::*;
use crate::model::{FrictionModel, Model};
use crate::scenario::{Profile, Scenario, simulate};

/// S0 Table 2, `T_s = 10 ms` row, with the printed `vt = 0.05` or the scaled `0.005`.
fn table2(vt: f64) -> Params {
    Params {
        vt,
        vsp: 0.01,
        v0: 0.01,
        t1: 0.03,
        ..Params::default()
    }
}

#[test]
fn peak_amplitude_and_peak_value_match_s0() {
    let p = Params::default();
    assert!((p.f_delta() - 0.43596).abs() < 5e-6, "{}", p.f_delta());
    assert!((table2(0.05).f_delta() - 1.20162).abs() < 5e-6);
    assert!((table2(0.005).f_delta() - 0.43497).abs() < 5e-6);
    for q in [p.clone(), table2(0.05), table2(0.005)] {
        assert!((q.f_sigma(q.vsp) - q.fs).abs() < 1e-12);
        assert!((q.f_sigma(-q.vsp) + q.fs).abs() < 1e-12);
    }
    assert!((p.step_ratio(1e-4) - 1.0 / 3.0).abs() < 1e-12);
    assert!((table2(0.05).step_ratio(1e-2) - 1.0 / 3.0).abs() < 1e-12);
    // Slope at rest (docs/src/models/specker.md) against a central difference.
    let h = 1e-9;
    let fd = (p.f_sigma(h) - p.f_sigma(-h)) / (2.0 * h);
    let s0 = p.d + p.fc / p.vt + 0.5f64.exp() * p.f_delta() / p.vsp;
    assert!((p.f_sigma_slope(0.0) - s0).abs() < 1e-9 * s0);
    assert!((fd - s0).abs() < 1e-5 * s0, "{fd} vs {s0}");
}

#[test]
fn steady_state_is_the_static_map() {
    for p in [Params::default(), table2(0.005)] {
        for &r in &[0.1, 1.0, 3.0, 100.0, -2.0, -500.0] {
            let v = r * p.vsp;
            let mut m = Model::<Specker>::new(p.clone()).unwrap();
            let mut f = 0.0;
            // 40 time constants T1/a(v) (the filter is slow below v0).
            let dt = 1e-3;
            for _ in 0..(40.0 * p.t1 / (p.a(v) * dt)).ceil() as usize {
                f = m.step(&Input::velocity(v), dt);
            }
            let ss = p.f_sigma(v);
            assert!((f - ss).abs() < 1e-9, "v={v}: {f} vs {ss}");
            assert_eq!(m.steady_state(v), Some(ss));
        }
    }
}

#[test]
fn force_is_held_forever_at_standstill() {
    for integrator in [Integrator::Exact, Integrator::Rk4] {
        let p = Params {
            integrator,
            ..Params::default()
        };
        let mut s = State::default();
        // At rest from the start the memory stays at its initial 0 (S0 Fig. 7).
        assert_eq!(step(&p, &mut s, &Input::velocity(0.0), 1e-4), 0.0);
        for k in 0..500 {
            let v = 2e-3 * (1.0 - k as f64 / 500.0);
            step(&p, &mut s, &Input::velocity(v), 1e-4);
        }
        let held = s.f_fr;
        assert!(held > 1.0 && held < p.fs, "{held}");
        for _ in 0..1_000_000 {
            assert_eq!(step(&p, &mut s, &Input::velocity(0.0), 1e-4), held);
        }
    }
}

#[test]
fn rk4_matches_the_exact_update_at_small_steps_and_never_diverges() {
    let exact = Params::default();
    let rk4 = Params {
        integrator: Integrator::Rk4,
        ..Params::default()
    };
    // h/T1 = 1/3: RK4 error per step ~ z^5/120.
    let z: f64 = 1.0 / 3.0;
    assert!((exact.retention(1.0, 1e-4) - rk4.retention(1.0, 1e-4)).abs() < z.powi(5) / 100.0);
    // Far beyond the RK4 limit (h/T1 = 33) the step stays a convex combination.
    for dt in [1e-3, 1e-2] {
        let e = rk4.retention(1.0, dt);
        assert!((0.0..=1.0).contains(&e), "{e}");
    }
}

#[test]
fn plant_law_is_monotone_and_equals_the_velocity_step() {
    for p in [Params::default(), table2(0.05)] {
        let s = State { f_fr: 0.3 };
        for &v in &[0.0, 1e-5, 1e-4, 2e-4, -3e-3, 0.05] {
            let inp = Input::velocity(v);
            let StepLaw::Smooth { damping, .. } = Specker::law(&p, &s, &inp, 1e-3) else {
                panic!("smooth law expected")
            };
            assert!(damping >= 0.0);
            let mut s2 = s;
            let f = step(&p, &mut s2, &inp, 1e-3);
            let g = Specker::law(&p, &s, &inp, 1e-3).force_at(v, 0.0);
            assert!((f - g).abs() < 1e-12, "{f} vs {g}");
        }
    }
}

#[test]
fn invalid_parameters_are_named() {
    let bad = Params {
        fs: 0.5,
        ..Params::default()
    };
    assert_eq!(bad.validate().unwrap_err().field, "fs");
    let bad = Params {
        vt: 0.0,
        ..Params::default()
    };
    assert_eq!(bad.validate().unwrap_err().field, "vt");
    let bad = Params {
        d: 1e4,
        ..Params::default()
    };
    assert!(bad.validate().unwrap_err().rule.contains("eq. 9"));
}

/// Slip onsets (v crosses 0.05 m/s upwards), peak friction before 5 s, the smallest speed
/// between successive slips, and the friction band from 7 s to 10 s (after the spring stopped).
#[derive(Debug)]
struct StickSlip {
    slips: Vec<f64>,
    peak: f64,
    stick_v: Vec<f64>,
    v_max: f64,
    f_max: f64,
    held_band: f64,
}

impl StickSlip {
    fn period(&self) -> f64 {
        let n = self.slips.len();
        (self.slips[n - 1] - self.slips[0]) / (n - 1) as f64
    }
}

/// Records one run; `v`, `f` are the samples at `t`.
#[derive(Default)]
struct Recorder {
    slips: Vec<f64>,
    stick_v: Vec<f64>,
    peak: f64,
    v_max: f64,
    f_max: f64,
    last_v: f64,
    v_min: f64,
    ref_f: Option<f64>,
    band: f64,
}

impl Recorder {
    fn push(&mut self, t: f64, v: f64, f: f64) {
        assert!(v.is_finite() && f.is_finite());
        if self.last_v < 0.05 && v >= 0.05 {
            if !self.slips.is_empty() {
                self.stick_v.push(self.v_min);
            }
            self.slips.push(t);
            self.v_min = v;
        }
        self.v_min = self.v_min.min(v.abs());
        self.last_v = v;
        self.v_max = self.v_max.max(v.abs());
        self.f_max = self.f_max.max(f.abs());
        if t < 5.0 {
            self.peak = self.peak.max(f);
        }
        if t >= 7.0 {
            let f0 = *self.ref_f.get_or_insert(f);
            self.band = self.band.max((f - f0).abs());
        }
    }

    fn finish(self) -> StickSlip {
        StickSlip {
            slips: self.slips,
            peak: self.peak,
            stick_v: self.stick_v,
            v_max: self.v_max,
            f_max: self.f_max,
            held_band: self.band,
        }
    }
}

/// docs/src/reproduction.md#check-9 through the library's plant (`scenario::simulate`).
fn stick_slip(p: Params, dt: f64) -> StickSlip {
    let scenario: Scenario = serde_json::from_str(
        r#"{"kind":"spring_pull","mass":0.1,"stiffness":10,"pull_velocity":0.1,"pull_stop_s":5}"#,
    )
    .unwrap();
    let mut m = Model::<Specker>::new(p).unwrap();
    let mut rec = Recorder::default();
    simulate(&mut m, &scenario, dt, 10.0, 1, |r| {
        assert!(r.x.is_finite());
        rec.push(r.t, r.v, r.friction)
    });
    assert_eq!(m.quarantined(), 0);
    rec.finish()
}

/// The same benchmark as S0 integrates it: fixed-step RK4 on the coupled ODE
/// `x' = v, m v' = k (s_spr - x) - F, F' = a(v)/T1 (F~Σ(v) - F)` (S0 eqs. 17, 20, 21).
fn stick_slip_rk4(p: &Params, h: f64) -> StickSlip {
    let (m, k) = (0.1, 10.0);
    let rhs = |t: f64, y: [f64; 3]| {
        let spring = k * (0.1 * t.min(5.0) - y[0]);
        [
            y[1],
            (spring - y[2]) / m,
            p.a(y[1]) / p.t1 * (p.f_sigma(y[1]) - y[2]),
        ]
    };
    let mut y = [0.0; 3];
    let mut rec = Recorder::default();
    for i in 0..=(10.0 / h).round() as usize {
        let t = i as f64 * h;
        rec.push(t, y[1], y[2]);
        let add = |y: [f64; 3], k: [f64; 3], c: f64| [0, 1, 2].map(|j| y[j] + c * k[j]);
        let k1 = rhs(t, y);
        let k2 = rhs(t + h / 2.0, add(y, k1, h / 2.0));
        let k3 = rhs(t + h / 2.0, add(y, k2, h / 2.0));
        let k4 = rhs(t + h, add(y, k3, h));
        y = [0, 1, 2].map(|j| y[j] + h / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]));
    }
    rec.finish()
}

fn report(label: &str, r: &StickSlip) {
    eprintln!(
        "{label}: slips {:?}, peak {:.4} N, min |v| between slips {:?}, v_max {:.3} m/s, \
         f_max {:.3} N, band 7-10 s {:.2e} N",
        r.slips, r.peak, r.stick_v, r.v_max, r.f_max, r.held_band
    );
}

fn near(x: f64, target: f64, rel: f64) -> bool {
    (x - target).abs() <= rel * target.abs()
}

#[test]
fn stick_slip_at_0_1_ms_reproduces_the_rk4_figures() {
    // docs/src/reproduction.md#check-9, indicative RK4 values at 0.1 ms: 1.422 s, 1.105 s, 1.4075 N.
    let p = Params::default();
    let r = stick_slip(p.clone(), 1e-4);
    report("specker 0.1 ms (plant)", &r);
    assert!(near(r.slips[0], 1.422, 2e-3), "{r:?}");
    assert!(r.slips.len() >= 4 && near(r.period(), 1.105, 5e-3), "{r:?}");
    assert!(near(r.peak, 1.4075, 1e-3), "{r:?}");
    // Real sticks between slips (S0: no remarkable drift), bounded motion and force.
    assert!(r.stick_v.iter().all(|&v| v < 1e-3), "{r:?}");
    assert!(r.v_max < 1.0 && r.f_max < p.fs * 1.01);
    // Memory: the force is held after the spring stops (S0 §3).
    assert!(r.held_band < 1e-3, "{r:?}");
    // S0's own integration (coupled RK4) agrees with the library's plant.
    let q = stick_slip_rk4(&p, 1e-4);
    report("specker 0.1 ms (coupled RK4)", &q);
    assert!(near(q.slips[0], r.slips[0], 1e-3) && near(q.period(), r.period(), 2e-3));
}

#[test]
fn stick_slip_at_10_ms_is_stable_and_keeps_its_qualitative_behaviour() {
    // vt = 0.005 (the 100x-scaled value): stick-slip with the RK4 figures of docs/src/reproduction.md#check-9, 1.52 s and
    // 1.18 s (RK4 at 10 ms); the converged ODE (RK4 at 0.1 ms) gives 1.509 s and 1.196 s.
    let p = table2(0.005);
    let r = stick_slip(p.clone(), 1e-2);
    report("specker 10 ms vt=0.005 (plant)", &r);
    assert!(near(r.slips[0], 1.52, 0.02), "{r:?}");
    assert!(r.slips.len() >= 3 && near(r.period(), 1.18, 0.06), "{r:?}");
    assert!(r.stick_v.iter().all(|&v| v < 0.01), "{r:?}");
    assert!(r.v_max < 1.0 && r.f_max < p.fs && r.peak > p.fc);
    // S0 §3: at 10 ms the mass drifts slowly after the stop, so the force is held only
    // approximately (coupled RK4: 0.17 N over 7-10 s).
    assert!(r.held_band < 0.2, "{r:?}");

    // vt = 0.05 (as printed): the first slip matches (1.51 s); afterwards the implicit plant
    // settles into steady sliding at the pull speed. So does the converged ODE: coupled RK4
    // at h <= 1 ms slips at 1.503, 1.930, 2.030 s and then slides steadily. The sustained
    // 1.17 s cycle of docs/src/reproduction.md#check-9 is an artefact of RK4 at h = 10 ms.
    let p = table2(0.05);
    let r = stick_slip(p.clone(), 1e-2);
    report("specker 10 ms vt=0.05 (plant)", &r);
    assert!(near(r.slips[0], 1.51, 0.02), "{r:?}");
    assert!(r.v_max < 1.0 && r.f_max < p.fs && r.peak > p.fc);
    assert!(r.held_band < 0.2, "{r:?}");
    let coarse = stick_slip_rk4(&p, 1e-2);
    report("specker 10 ms vt=0.05 (coupled RK4, 10 ms)", &coarse);
    assert!(near(coarse.period(), 1.17, 0.01), "{coarse:?}");
    let fine = stick_slip_rk4(&p, 1e-3);
    report("specker 10 ms vt=0.05 (coupled RK4, 1 ms)", &fine);
    assert!(fine.slips.iter().all(|&t| t < 2.1), "{fine:?}");
    let plant_fine = stick_slip(p, 1e-4);
    report("specker 10 ms vt=0.05 (plant, 0.1 ms)", &plant_fine);
    for (a, b) in plant_fine.slips.iter().zip(&fine.slips) {
        assert!((a - b).abs() < 0.01, "{plant_fine:?} vs {fine:?}");
    }
}

/// COMMON robustness runs: every scenario kind for 60 s, all outputs finite and bounded.
fn robust(runs: &[(Params, f64)]) {
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
        Scenario::SpringPull {
            mass: 0.1,
            stiffness: 10.0,
            pull_velocity: 0.1,
            pull_stop_s: Some(5.0),
        },
        Scenario::Force {
            load: crate::Load::None,
            mass: 1.0,
            force: sine(1.0, 1.0),
        },
        Scenario::Force {
            load: crate::Load::None,
            mass: 1.0,
            force: sine(3.0, 1.0),
        },
        Scenario::Velocity {
            velocity: sine(0.1, 2.0),
        },
        Scenario::Position {
            position: sine(0.01, 5.0),
        },
    ];
    for (p, dt) in runs {
        for sc in &scenarios {
            let mut m = Model::<Specker>::new(p.clone()).unwrap();
            simulate(&mut m, sc, *dt, 60.0, 1, |r| {
                assert!(
                    r.friction.is_finite() && r.v.is_finite() && r.x.is_finite(),
                    "{sc:?} dt={dt}: {r:?}"
                );
                assert!(r.friction.abs() < 3.0 * p.fs, "{sc:?} dt={dt}: {r:?}");
                assert!(r.v.abs() < 10.0, "{sc:?} dt={dt}: {r:?}");
            });
            assert_eq!(m.quarantined(), 0);
        }
    }
}

#[test]
fn robust_in_every_scenario_at_0_1_ms() {
    robust(&[(Params::default(), 1e-4)]);
}

#[test]
fn robust_in_every_scenario_at_1_and_10_ms() {
    // The Table 1 set at the coarse steps too; the 10 ms sets at their own step.
    robust(&[
        (Params::default(), 1e-3),
        (Params::default(), 1e-2),
        (table2(0.05), 1e-2),
        (table2(0.005), 1e-2),
    ]);
}
