//! The lockstep bank: every enabled model stepped once per sample on the same measured signals.

use crate::Input;
use crate::model::FrictionModel;
use std::time::Instant;

/// One model's output for one sample.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ModelOutput {
    /// Predicted friction \[N or N m\].
    pub force: f64,
}

/// Time spent per model, to check the per-sample budget (rapier's `counters`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counters {
    /// Samples stepped.
    pub samples: u64,
    /// Nanoseconds spent per model, in bank order.
    pub nanos: Vec<u128>,
}

/// A set of models stepped together.
#[derive(Debug, Default)]
pub struct ModelBank {
    models: Vec<Box<dyn FrictionModel>>,
    /// Per-model timing; `None` keeps the hot path free of clock reads.
    pub counters: Option<Counters>,
}

impl ModelBank {
    /// A bank over `models`.
    pub fn new(models: Vec<Box<dyn FrictionModel>>) -> ModelBank {
        ModelBank {
            models,
            counters: None,
        }
    }

    /// Turns per-model timing on (reset).
    pub fn with_counters(mut self) -> ModelBank {
        self.counters = Some(Counters {
            samples: 0,
            nanos: vec![0; self.models.len()],
        });
        self
    }

    /// The models, in order.
    pub fn models(&self) -> &[Box<dyn FrictionModel>] {
        &self.models
    }

    /// Number of models.
    pub fn len(&self) -> usize {
        self.models.len()
    }

    /// True when the bank holds no model.
    pub fn is_empty(&self) -> bool {
        self.models.is_empty()
    }

    /// Resets every model to rest.
    pub fn reset(&mut self) {
        self.models.iter_mut().for_each(|m| m.reset());
    }

    /// Steps every model once on `input`; writes into the caller's `out` (one per model).
    pub fn step(&mut self, input: &Input, dt: f64, out: &mut [ModelOutput]) {
        match &mut self.counters {
            None => {
                for (m, o) in self.models.iter_mut().zip(out.iter_mut()) {
                    o.force = m.step(input, dt);
                }
            }
            Some(c) => {
                c.samples += 1;
                for ((m, o), ns) in self
                    .models
                    .iter_mut()
                    .zip(out.iter_mut())
                    .zip(c.nanos.iter_mut())
                {
                    let t0 = Instant::now();
                    o.force = m.step(input, dt);
                    *ns += t0.elapsed().as_nanos();
                }
            }
        }
    }
}
