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
    /// Per model, a force offset subtracted from the applied force it sees (empty: none).
    offsets: Vec<f64>,
    /// Per-model timing; `None` keeps the hot path free of clock reads.
    pub counters: Option<Counters>,
}

impl ModelBank {
    /// A bank over `models`.
    pub fn new(models: Vec<Box<dyn FrictionModel>>) -> ModelBank {
        ModelBank {
            models,
            offsets: Vec::new(),
            counters: None,
        }
    }

    /// Subtracts `offsets[i]` from the applied force model `i` sees (a parameter set fitted
    /// with a force offset in the measurement; docs/src/identification.md#offset).
    pub fn with_offsets(mut self, offsets: Vec<f64>) -> ModelBank {
        self.offsets = if offsets.iter().any(|o| *o != 0.0) {
            offsets
        } else {
            Vec::new()
        };
        self
    }

    /// The input model `i` sees.
    fn input_for(offsets: &[f64], i: usize, input: &Input) -> Input {
        match offsets.get(i) {
            Some(o) if *o != 0.0 => Input {
                u: input.u - o,
                ..*input
            },
            _ => *input,
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
                for (i, (m, o)) in self.models.iter_mut().zip(out.iter_mut()).enumerate() {
                    o.force = m.step(&Self::input_for(&self.offsets, i, input), dt);
                }
            }
            Some(c) => {
                c.samples += 1;
                for (i, ((m, o), ns)) in self
                    .models
                    .iter_mut()
                    .zip(out.iter_mut())
                    .zip(c.nanos.iter_mut())
                    .enumerate()
                {
                    let t0 = Instant::now();
                    o.force = m.step(&Self::input_for(&self.offsets, i, input), dt);
                    *ns += t0.elapsed().as_nanos();
                }
            }
        }
    }
}
