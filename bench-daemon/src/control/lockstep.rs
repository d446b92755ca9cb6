//! The lockstep models: every enabled friction model steps once per sample on the measured
//! signals, so its prediction is stored beside the measurement.
//!
//! Two uses per model: the friction it predicts from the measured motion (velocity-driven, all
//! segments), and, when a plant inertia is configured, the position it predicts under the
//! measured applied torque in torque-driven segments (the plant is re-anchored on the measured
//! position and velocity when such a segment starts, so each segment is one free-run
//! prediction, as in Sánchez-Mazuca's validation of breakaway under torque ramps).
//!
//! A model whose parameters carry a force offset (`params.offset`, a set fitted with
//! `given.offset`) sees the applied torque less that offset, in both uses: the offset belongs
//! to the measurement, not to the friction.

use super::fault_injection::InjectedFaults;
use experiments::Sample;
use friction::plant::{self, Applied, PlantParams, PlantState};
use friction::registry::{ModelSpec, build_model, split_offset};
use friction::{FrictionModel, Input, ModelBank, ModelOutput};

/// One model simulated under the applied torque.
#[derive(Debug)]
struct PlantSim {
    model: Box<dyn FrictionModel>,
    state: PlantState,
    /// Force offset subtracted from the applied torque.
    offset: f64,
}

/// The models of one run.
#[derive(Debug)]
pub struct Lockstep {
    bank: ModelBank,
    out: Vec<ModelOutput>,
    plant: Option<(PlantParams, Vec<PlantSim>)>,
    values: Vec<f64>,
    last_u: Option<f64>,
    /// Test-only fault injection (nothing in a release build).
    faults: InjectedFaults,
}

impl Lockstep {
    /// Builds the models (specs were validated when the configuration was loaded).
    pub fn new(specs: &[ModelSpec], plant_inertia: Option<f64>) -> anyhow::Result<Lockstep> {
        let split: Vec<(ModelSpec, f64)> = specs
            .iter()
            .map(|s| split_offset(s).map_err(|e| anyhow::anyhow!("{}: {e}", s.model)))
            .collect::<anyhow::Result<_>>()?;
        let offsets: Vec<f64> = split.iter().map(|(_, o)| *o).collect();
        let build = || -> anyhow::Result<Vec<Box<dyn FrictionModel>>> {
            split
                .iter()
                .map(|(s, _)| build_model(s).map_err(|e| anyhow::anyhow!("{}: {e}", s.model)))
                .collect()
        };
        let bank = ModelBank::new(build()?).with_offsets(offsets.clone());
        let plant = match plant_inertia {
            Some(mass) => Some((
                PlantParams { mass },
                build()?
                    .into_iter()
                    .zip(&offsets)
                    .map(|(model, offset)| PlantSim {
                        model,
                        state: PlantState::default(),
                        offset: *offset,
                    })
                    .collect(),
            )),
            None => None,
        };
        let n = specs.len() * if plant.is_some() { 2 } else { 1 };
        Ok(Lockstep {
            out: vec![ModelOutput::default(); specs.len()],
            bank,
            plant,
            values: vec![f64::NAN; n],
            last_u: None,
            faults: InjectedFaults::from_env(),
        })
    }

    /// Output column names, in the order of [`Lockstep::step`]'s values: the model ids
    /// (predicted friction, N m), then `ID:x_plant` (predicted position, rad) per model when
    /// the plant simulation is on.
    pub fn names(specs: &[ModelSpec], plant: bool) -> Vec<String> {
        let mut v: Vec<String> = specs.iter().map(|s| s.model.clone()).collect();
        if plant {
            v.extend(specs.iter().map(|s| format!("{}:x_plant", s.model)));
        }
        v
    }

    /// Number of output columns.
    pub fn width(&self) -> usize {
        self.values.len()
    }

    /// Steps every model once on sample `s`. `torque_driven` says whether the sample's segment
    /// commands torque; `segment_start` re-anchors the plant simulations.
    pub fn step(
        &mut self,
        s: &Sample,
        torque_driven: bool,
        segment_start: bool,
        dt: f64,
    ) -> &[f64] {
        self.faults.on_sample(s.t);
        let u = s.applied_torque();
        let du_dt = match self.last_u {
            Some(prev) if u.is_finite() && prev.is_finite() => (u - prev) / dt,
            _ => 0.0,
        };
        self.last_u = Some(u);
        let input = Input {
            t: s.t,
            x: s.x,
            v: s.v,
            u: if u.is_finite() { u } else { 0.0 },
            du_dt,
        };
        self.bank.step(&input, dt, &mut self.out);
        let n = self.out.len();
        for (v, o) in self.values.iter_mut().zip(&self.out) {
            *v = o.force;
        }
        if let Some((params, sims)) = &mut self.plant {
            for (sim, value) in sims.iter_mut().zip(&mut self.values[n..]) {
                if !torque_driven || segment_start {
                    sim.state = PlantState {
                        t: s.t,
                        x: s.x,
                        v: s.v,
                    };
                }
                let felt = Input {
                    u: input.u - sim.offset,
                    ..input
                };
                if torque_driven {
                    let a = Applied::force(felt.u, du_dt);
                    plant::step(&mut *sim.model, params, &mut sim.state, &a, dt);
                    *value = sim.state.x;
                } else {
                    // Tracks the measured motion so its state is right when torque takes over.
                    sim.model.step(&felt, dt);
                    *value = s.x;
                }
            }
        }
        &self.values
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn outputs_are_the_models_steady_state_at_constant_velocity() {
        let specs = vec![
            ModelSpec {
                model: "coulomb_viscous".into(),
                params: json!({}),
            },
            ModelSpec {
                model: "lugre".into(),
                params: json!({}),
            },
        ];
        let mut ls = Lockstep::new(&specs, Some(1e-3)).unwrap();
        assert_eq!(
            Lockstep::names(&specs, true),
            [
                "coulomb_viscous",
                "lugre",
                "coulomb_viscous:x_plant",
                "lugre:x_plant"
            ]
        );
        let dt = 1e-3;
        let mut out = Vec::new();
        for k in 0..2000 {
            let t = k as f64 * dt;
            let s = Sample {
                t,
                x: 0.5 * t,
                v: 0.5,
                u_cmd: 1.0,
                torque_motor: 1.2,
                torque_sensor: 1.2,
                ..Sample::default()
            };
            out = ls.step(&s, false, false, dt).to_vec();
        }
        for (i, spec) in specs.iter().enumerate() {
            let m = build_model(spec).unwrap();
            let ss = m.steady_state(0.5).unwrap();
            assert!(
                (out[i] - ss).abs() < 1e-6 * ss.abs().max(1.0),
                "{} {}",
                out[i],
                ss
            );
        }
        // Outside torque segments the plant columns follow the measured position.
        assert_eq!(out[2], 0.5 * 1.999);
    }

    /// A set's force offset is taken off the applied torque the model feels: 0.8 N m applied
    /// with an offset of 0.5 leaves 0.3, below fc = 1, so the plant stays put; without the
    /// offset the same torque moves it.
    #[test]
    fn a_sets_offset_is_subtracted_from_the_applied_torque() {
        let spec = |params| ModelSpec {
            model: "coulomb_viscous".into(),
            params,
        };
        let with = [spec(json!({"fc": 0.5, "offset": 0.5}))];
        let without = [spec(json!({"fc": 0.5}))];
        let drive = |specs: &[ModelSpec]| {
            let mut ls = Lockstep::new(specs, Some(1e-3)).unwrap();
            let mut x = f64::NAN;
            for k in 0..200 {
                let s = Sample {
                    t: k as f64 * 1e-3,
                    torque_motor: 0.8,
                    ..Sample::default()
                };
                x = ls.step(&s, true, k == 0, 1e-3)[1];
            }
            x
        };
        assert!(drive(&with).abs() < 1e-9, "{}", drive(&with));
        assert!(drive(&without) > 0.01, "{}", drive(&without));
        assert!(Lockstep::new(&[spec(json!({"offset": "x"}))], None).is_err());
    }

    #[test]
    fn plant_simulation_under_a_sub_breakaway_torque_stays_put() {
        let specs = vec![ModelSpec {
            model: "lugre".into(),
            params: json!({}),
        }];
        let mut ls = Lockstep::new(&specs, Some(1e-3)).unwrap();
        let dt = 1e-3;
        let mut x_plant = f64::NAN;
        for k in 0..1000 {
            let s = Sample {
                t: k as f64 * dt,
                x: 0.1,
                torque_motor: 0.5, // below fc = 1 N m
                ..Sample::default()
            };
            x_plant = ls.step(&s, true, k == 0, dt)[1];
        }
        // Presliding only: sigma0 = 1e5 → about 0.5 / 1e5 rad from where the segment began.
        assert!((x_plant - 0.1).abs() < 1e-4, "{x_plant}");
        // A torque well above breakaway moves it.
        for k in 1000..1100 {
            let s = Sample {
                t: k as f64 * dt,
                x: 0.1,
                torque_motor: 3.0,
                ..Sample::default()
            };
            x_plant = ls.step(&s, true, false, dt)[1];
        }
        assert!(x_plant > 0.2, "{x_plant}");
    }
}
