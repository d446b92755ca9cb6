//! Accelerated evolutionary programming (AEP), Kim et al., as given in S1 §8.4.2.1 eqs.
//! 8.26–8.35 (docs/src/identification.md#aep): a bounded global search for non-convex fits.
//!
//! Each individual carries its parameters `z`, a direction `dir_j ∈ {-1, 1}` per parameter and an
//! age. One iteration is one generation: every parent makes one child by
//!
//! $$z_j' = z_j + \mathrm{dir}_j\,|N(0, \sigma_i)|,\qquad
//!   \sigma_i = \begin{cases}\beta_1 f_i & \mathrm{age}_i = 1\\
//!   \beta_2 f_i\,\mathrm{age}_i & \text{otherwise}\end{cases}\qquad\text{(Rule 2, 8.29)}$$
//!
//! and the better of parent and child survives (one-to-one selection). Rule 1 (8.28): when the
//! child wins, `dir_j = sgn(z_j' - z_j)` and the age is reset to 1; otherwise the parent ages by 1.
//!
//! Choices of ours, recorded because S1 leaves them open (\[D\]):
//! - **Scaling.** `z` is searched in coordinates normalised to the bounds (`0..1` per parameter)
//!   and the cost `f_i` in `sigma_i` is relative to the best cost of the initial population, so
//!   `beta1` and `beta2` are dimensionless: `sigma_i = beta1` is `beta1` times the bound range.
//!   `sigma_i` is capped at 1 (the whole range).
//! - **Failed mutation.** A parent whose child lost draws new random directions, so it does not
//!   keep pushing against a bound or up a slope (S1 only ages it).
//! - **Bounds.** A child outside the box is reflected back into it.
//! - **Defaults** `beta1 = 0.2`, `beta2 = 0.05`, population 20.
//!
//! Requirements on the problem: finite bounds on every parameter ([`Bounds::is_finite`]); any
//! cost, smooth or not; an infeasible point may return infinite residuals.

use super::fitter::{Bounds, FitError, FitState, Fitter, Residuals, TerminationReason};
use super::rng::Rng;

/// AEP settings and population.
#[derive(Clone, Debug)]
pub struct Aep {
    bounds: Bounds,
    population: usize,
    beta1: f64,
    beta2: f64,
    seed: u64,
    rng: Rng,
    pop: Vec<Individual>,
    f_ref: f64,
    buf: Vec<f64>,
    child: Vec<f64>,
}

#[derive(Clone, Debug)]
struct Individual {
    /// Normalised parameters in \[0, 1\].
    y: Vec<f64>,
    dir: Vec<f64>,
    age: u32,
    cost: f64,
}

impl Aep {
    /// AEP within `bounds` (all finite), population 20, `beta1 = 0.2`, `beta2 = 0.05`, seed 1.
    pub fn new(bounds: Bounds) -> Result<Aep, FitError> {
        if !bounds.is_finite() {
            return Err(FitError::Config {
                field: "bounds".into(),
                value: f64::INFINITY,
                rule: "must be finite for a global search".into(),
            });
        }
        Ok(Aep {
            bounds,
            population: 20,
            beta1: 0.2,
            beta2: 0.05,
            seed: 1,
            rng: Rng::new(1),
            pop: Vec::new(),
            f_ref: 1.0,
            buf: Vec::new(),
            child: Vec::new(),
        })
    }

    /// Population size `N_p` (at least 2).
    pub fn with_population(mut self, n: usize) -> Result<Aep, FitError> {
        if n < 2 {
            return Err(FitError::Config {
                field: "population".into(),
                value: n as f64,
                rule: "must be >= 2".into(),
            });
        }
        self.population = n;
        Ok(self)
    }

    /// Rule 2 constants `beta1` (young individuals) and `beta2` (aged ones), both > 0.
    pub fn with_betas(mut self, beta1: f64, beta2: f64) -> Result<Aep, FitError> {
        for (field, value) in [("beta1", beta1), ("beta2", beta2)] {
            if !(value.is_finite() && value > 0.0) {
                return Err(FitError::Config {
                    field: field.into(),
                    value,
                    rule: "must be > 0".into(),
                });
            }
        }
        self.beta1 = beta1;
        self.beta2 = beta2;
        Ok(self)
    }

    /// Seed of the random generator (the same seed gives the same fit).
    pub fn with_seed(mut self, seed: u64) -> Aep {
        self.seed = seed;
        self.rng = Rng::new(seed);
        self
    }

    /// The settings to record with a result: `(population, beta1, beta2, seed)`.
    pub fn settings(&self) -> (usize, f64, f64, u64) {
        (self.population, self.beta1, self.beta2, self.seed)
    }

    fn to_params(&self, y: &[f64], out: &mut Vec<f64>) {
        out.clear();
        out.extend(y.iter().enumerate().map(|(j, y)| {
            let (l, u) = (self.bounds.lower[j], self.bounds.upper[j]);
            l + y * (u - l)
        }));
    }

    fn evaluate<P: Residuals + ?Sized>(
        &mut self,
        problem: &P,
        y: &[f64],
        state: &mut FitState,
    ) -> Result<f64, FitError> {
        let mut p = std::mem::take(&mut self.child);
        self.to_params(y, &mut p);
        let c = state.cost_of(problem, &p, &mut self.buf)?;
        state.update(&p, c);
        self.child = p;
        Ok(c)
    }
}

/// Reflects `y` into \[0, 1\].
fn reflect(mut y: f64) -> f64 {
    for _ in 0..4 {
        if y < 0.0 {
            y = -y;
        } else if y > 1.0 {
            y = 2.0 - y;
        } else {
            return y;
        }
    }
    y.clamp(0.0, 1.0)
}

impl<P: Residuals + ?Sized> Fitter<P> for Aep {
    const NAME: &'static str = "aep";

    fn init(&mut self, problem: &P, state: &mut FitState) -> Result<(), FitError> {
        let n = state.params.len();
        self.bounds.validate(n)?;
        self.rng = Rng::new(self.seed);
        self.pop.clear();
        // The starting point is one individual; the others are uniform in the box (step 1).
        let mut y0: Vec<f64> = state
            .params
            .iter()
            .enumerate()
            .map(|(j, p)| {
                let (l, u) = (self.bounds.lower[j], self.bounds.upper[j]);
                if u > l {
                    ((p - l) / (u - l)).clamp(0.0, 1.0)
                } else {
                    0.5
                }
            })
            .collect();
        let start = state.params.clone();
        let c0 = state.cost_of(problem, &start, &mut self.buf)?;
        let mut best = (c0, start);
        for i in 0..self.population {
            if i > 0 {
                y0 = (0..n).map(|_| self.rng.uniform()).collect();
            }
            let dir = (0..n).map(|_| self.rng.sign()).collect();
            let cost = if i == 0 {
                c0
            } else {
                self.evaluate(problem, &y0, state)?
            };
            if cost < best.0 {
                best = (cost, self.child.clone());
            }
            self.pop.push(Individual {
                y: y0.clone(),
                dir,
                age: 1,
                cost,
            });
        }
        state.update(&best.1.clone(), best.0);
        self.f_ref = self
            .pop
            .iter()
            .map(|i| i.cost)
            .filter(|c| c.is_finite())
            .fold(f64::INFINITY, f64::min);
        if !(self.f_ref.is_finite() && self.f_ref > 0.0) {
            if self.f_ref == 0.0 {
                self.f_ref = 1.0;
            } else {
                return Err(FitError::Data(
                    "no individual of the initial population has a finite cost".into(),
                ));
            }
        }
        Ok(())
    }

    fn next_iter(
        &mut self,
        problem: &P,
        state: &mut FitState,
    ) -> Result<Option<TerminationReason>, FitError> {
        let n = state.params.len();
        let mut y = vec![0.0; n];
        for i in 0..self.pop.len() {
            let ind = &self.pop[i];
            let f = ind.cost / self.f_ref;
            let sigma = if ind.age == 1 {
                self.beta1 * f
            } else {
                self.beta2 * f * ind.age as f64
            }
            .min(1.0);
            for ((y, z), d) in y.iter_mut().zip(&ind.y).zip(&ind.dir) {
                *y = reflect(z + d * (sigma * self.rng.normal()).abs());
            }
            let c = self.evaluate(problem, &y, state)?;
            let ind = &mut self.pop[i];
            if c < ind.cost {
                for ((dir, y), z) in ind.dir.iter_mut().zip(&y).zip(&ind.y) {
                    if y != z {
                        *dir = (y - z).signum();
                    }
                }
                ind.y.copy_from_slice(&y);
                ind.cost = c;
                ind.age = 1;
            } else {
                ind.age = ind.age.saturating_add(1);
                for d in &mut ind.dir {
                    *d = self.rng.sign();
                }
            }
        }
        self.pop.sort_by(|a, b| a.cost.total_cmp(&b.cost));
        // The state's current point is the best individual (FitState::update keeps the best).
        let best = self.pop[0].y.clone();
        let mut p = Vec::new();
        self.to_params(&best, &mut p);
        state.params = p;
        state.cost = self.pop[0].cost;
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identify::Runner;

    /// Rastrigin-like multimodal residuals with the minimum at (1.5, -0.5).
    struct Bumpy;
    impl Residuals for Bumpy {
        fn len(&self) -> usize {
            4
        }
        fn residuals(&self, p: &[f64], out: &mut [f64]) -> Result<(), FitError> {
            let (a, b) = (p[0] - 1.5, p[1] + 0.5);
            out[0] = a;
            out[1] = b;
            out[2] = (1.0 - (6.0 * a).cos()).sqrt();
            out[3] = (1.0 - (6.0 * b).cos()).sqrt();
            Ok(())
        }
    }

    #[test]
    fn finds_the_global_minimum_among_local_ones() {
        let b = Bounds {
            lower: vec![-5.0, -5.0],
            upper: vec![5.0, 5.0],
        };
        let r = Runner::new(&Bumpy, Aep::new(b).unwrap().with_seed(3))
            .max_iters(300)
            .run(vec![-4.0, 4.0])
            .unwrap();
        assert!(
            (r.params[0] - 1.5).abs() < 0.02 && (r.params[1] + 0.5).abs() < 0.02,
            "{:?}",
            r.params
        );
        assert_eq!(r.termination, TerminationReason::MaxIters);
        assert_eq!(r.fitter, "aep");
    }

    #[test]
    fn same_seed_same_result_and_infinite_bounds_refused() {
        let b = Bounds {
            lower: vec![-5.0, -5.0],
            upper: vec![5.0, 5.0],
        };
        let run = |s| {
            Runner::new(&Bumpy, Aep::new(b.clone()).unwrap().with_seed(s))
                .max_iters(20)
                .run(vec![0.0, 0.0])
                .unwrap()
        };
        assert_eq!(run(9).params, run(9).params);
        let e = Aep::new(Bounds::free(2)).unwrap_err();
        assert!(e.to_string().contains("must be finite"), "{e}");
        assert!(
            Aep::new(b)
                .unwrap()
                .with_betas(0.1, -1.0)
                .unwrap_err()
                .to_string()
                .contains("beta2")
        );
    }
}
