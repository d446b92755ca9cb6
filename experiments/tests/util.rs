//! A bench without hardware: a `friction::plant` with a known friction model, an encoder, a
//! torque sensor and a drive emulation (torque mode directly; velocity and position modes
//! through the crate's own PI/PID), stepped at the plan's period.

use experiments::{Flags, LoopGains, Measurement, OuterLoop, Plan, Sample, Sequencer, Spec};
use friction::FrictionModel;
use friction::plant::{self, Applied, PlantParams, PlantState};
use friction::registry::{ModelSpec, build_model};
use std::path::PathBuf;

/// The simulated bench.
pub struct TestBench {
    /// True friction.
    pub truth: Box<dyn FrictionModel>,
    /// Inertia [kg m^2].
    pub inertia: f64,
    /// Plant steps per control period.
    pub substeps: usize,
    /// Torque-sensor noise, standard deviation [N m].
    pub sensor_noise_nm: f64,
    /// Outer-loop gains.
    pub gains: LoopGains,
    /// Time constant of the drive's velocity estimate [s].
    pub velocity_filter_s: f64,
}

impl TestBench {
    /// A bench with inertia 1e-3 kg m² (the simulated bench's) and the true model `model` with
    /// `params`.
    pub fn new(model: &str, params: serde_json::Value) -> TestBench {
        TestBench {
            truth: build_model(&ModelSpec {
                model: model.into(),
                params,
            })
            .unwrap(),
            inertia: 1e-3,
            substeps: 10,
            sensor_noise_nm: 0.0,
            gains: LoopGains::default(),
            velocity_filter_s: 1e-3,
        }
    }

    /// The simulated bench's default truth ([`bench_sim::default_truth`]): GMS with Coulomb
    /// 1 N m and breakaway 1.5 N m, the negative direction's levels 10 % lower, with 2 mN m of
    /// sensor noise.
    pub fn sim_default() -> TestBench {
        let truth = bench_sim::default_truth();
        let mut b = TestBench::new(&truth.model, truth.params);
        b.sensor_noise_nm = 0.002;
        b
    }

    /// The simulated bench's earlier truth: LuGre (Canudas 1995 set), the negative direction's
    /// Coulomb and breakaway levels at 80 %, with 2 mN m of sensor noise.
    pub fn lugre_asymmetric() -> TestBench {
        let mut b = TestBench::new(
            "lugre",
            serde_json::json!({"negative": {"fc": 0.8, "fs": 1.2}}),
        );
        b.sensor_noise_nm = 0.002;
        b
    }

    /// GMS with its default (symmetric) parameters,
    /// with 2 mN m of sensor noise.
    pub fn gms_default() -> TestBench {
        let mut b = TestBench::new("gms", serde_json::json!({}));
        b.sensor_noise_nm = 0.002;
        b
    }

    /// Runs `plan` to its end (or `max_s` of run time); returns the samples.
    pub fn run(&mut self, plan: &Plan, max_s: f64) -> Vec<Sample> {
        let lim = plan.limits;
        let ts = lim.period_s;
        let q = lim.rad_per_count();
        let h = ts / self.substeps as f64;
        let pp = PlantParams { mass: self.inertia };
        let mut st = PlantState::default();
        let mut seq = Sequencer::new();
        let mut outer = OuterLoop::new(self.gains);
        let mut out = Vec::new();
        let (mut x_prev, mut v_est, mut f_last, mut u_prev) = (0.0_f64, 0.0_f64, 0.0_f64, 0.0_f64);
        let mut rng = 0x2545_f491_4f6c_dd1d_u64;
        let mut noise = move || {
            // Sum of 12 uniforms minus 6: unit variance, deterministic.
            let mut s = 0.0;
            for _ in 0..12 {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                s += (rng >> 11) as f64 / (1u64 << 53) as f64;
            }
            s - 6.0
        };
        self.truth.reset();
        let a = ts / (self.velocity_filter_s + ts);
        for k in 0.. {
            let t = k as f64 * ts;
            if t > max_s {
                break;
            }
            let x = (st.x / q).round() * q;
            v_est += a * ((x - x_prev) / ts - v_est);
            x_prev = x;
            let m = Measurement { t, x, v: v_est };
            let Some(tick) = seq.tick(plan, &m) else {
                break;
            };
            let u = outer.torque(&tick, &m, ts, lim.torque_nm);
            let du_dt = match tick.mode {
                experiments::DriveMode::Torque => tick.rate,
                _ => (u - u_prev) / ts,
            };
            u_prev = u;
            out.push(Sample {
                t,
                x,
                v: v_est,
                u_cmd: u,
                torque_motor: u,
                torque_sensor: f_last + self.sensor_noise_nm * noise(),
                segment: tick.segment as u32,
                flags: if tick.started {
                    Flags::SEGMENT_START
                } else {
                    Flags::default()
                },
            });
            let mut f_sum = 0.0;
            for _ in 0..self.substeps {
                let ap = Applied::force(u, du_dt);
                f_sum += plant::step(&mut *self.truth, &pp, &mut st, &ap, h);
            }
            f_last = f_sum / self.substeps as f64;
        }
        out
    }
}

/// `experiments/specs/`.
pub fn specs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs")
}

/// Reads and parses a spec file.
pub fn read_spec(name: &str) -> Spec {
    let path = specs_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Spec::parse(&text, experiments::Format::from_path(&path))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}
