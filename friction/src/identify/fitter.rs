//! The problem and fitter traits.

use nalgebra::DMatrix;

/// Why a fit failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FitError {
    /// The data cannot support the fit (too few points, no excitation, ...).
    #[error("data: {0}")]
    Data(String),
    /// A configuration value breaks a rule, e.g. "tolerance (-1) must be > 0".
    #[error("{field} ({value}) {rule}")]
    Config {
        /// The setting.
        field: String,
        /// Its value.
        value: f64,
        /// The rule.
        rule: String,
    },
    /// An option or setting breaks a rule where no number is at fault (an unknown key, a
    /// string that is not one of the choices): named without a value, e.g.
    /// "given.asymmetric is not an option of procedure 'phi_s' (it takes: ...)".
    #[error("{field} {rule}")]
    Setting {
        /// The setting.
        field: String,
        /// The rule, phrased after the name.
        rule: String,
    },
    /// The residuals could not be evaluated at these parameters.
    #[error("model evaluation failed: {0}")]
    Eval(String),
    /// An impossible case.
    #[error("BUG: {0}")]
    Bug(String),
    /// No identification procedure has this name.
    #[error("unknown procedure '{name}' (known: {known})")]
    UnknownProcedure {
        /// The name asked for.
        name: String,
        /// Every known procedure, comma separated.
        known: String,
    },
    /// No model has this id.
    #[error("unknown model '{id}' (known: {known})")]
    UnknownModel {
        /// The id asked for.
        id: String,
        /// Every known id, comma separated.
        known: String,
    },
    /// The procedure does not identify this model's parameters.
    #[error(
        "procedure '{procedure}' does not apply to model '{model}' (it applies to: {applies_to})"
    )]
    NotApplicable {
        /// The procedure.
        procedure: String,
        /// The model asked for.
        model: String,
        /// The models it applies to, comma separated.
        applies_to: String,
    },
    /// The data lack a column the procedure reads.
    #[error("missing column '{column}' for procedure '{procedure}' (columns present: {have})")]
    MissingColumn {
        /// The column.
        column: String,
        /// The procedure.
        procedure: String,
        /// The columns present, comma separated.
        have: String,
    },
}

impl FitError {
    /// True when the error is the user's input (data, configuration, names), not a failure of
    /// the method: the CLI exits with code 2 for these.
    pub fn is_input(&self) -> bool {
        !matches!(self, FitError::Eval(_) | FitError::Bug(_))
    }
}

/// A least-squares problem: residuals `r(p)`, minimised as `sum r_i^2`.
pub trait Residuals {
    /// Number of residuals.
    fn len(&self) -> usize;
    /// True when there is no residual.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Writes the residuals at `p` into `out` (length `len()`).
    fn residuals(&self, p: &[f64], out: &mut [f64]) -> Result<(), FitError>;
    /// Writes the Jacobian `d r_i / d p_j` into `jac` (len × n) if known analytically; `None`
    /// asks the fitter for central finite differences.
    fn jacobian(&self, _p: &[f64], _jac: &mut DMatrix<f64>) -> Option<Result<(), FitError>> {
        None
    }
}

/// Box bounds on the parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Bounds {
    /// Lower bounds (may be `-inf`).
    pub lower: Vec<f64>,
    /// Upper bounds (may be `+inf`).
    pub upper: Vec<f64>,
}

impl Bounds {
    /// Unbounded in `n` dimensions.
    pub fn free(n: usize) -> Bounds {
        Bounds {
            lower: vec![f64::NEG_INFINITY; n],
            upper: vec![f64::INFINITY; n],
        }
    }

    /// Checks the bounds against `n` parameters and each other.
    pub fn validate(&self, n: usize) -> Result<(), FitError> {
        if self.lower.len() != n || self.upper.len() != n {
            return Err(FitError::Config {
                field: "bounds".into(),
                value: self.lower.len() as f64,
                rule: format!("must have one lower and one upper bound per parameter ({n})"),
            });
        }
        for (i, (l, u)) in self.lower.iter().zip(&self.upper).enumerate() {
            if l.is_nan() || u.is_nan() || l > u {
                return Err(FitError::Config {
                    field: format!("bounds[{i}]"),
                    value: *l,
                    rule: format!("lower must be <= upper ({u})"),
                });
            }
        }
        Ok(())
    }

    /// Projects `p` into the box.
    pub fn project(&self, p: &mut [f64]) {
        for ((x, l), u) in p.iter_mut().zip(&self.lower).zip(&self.upper) {
            *x = x.clamp(*l, *u);
        }
    }

    /// True when every bound is finite (required by global searches).
    pub fn is_finite(&self) -> bool {
        self.lower.iter().chain(&self.upper).all(|x| x.is_finite())
    }
}

/// What a fitter carries from one iteration to the next.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FitState {
    /// Current parameters.
    pub params: Vec<f64>,
    /// Current cost `sum r^2`.
    pub cost: f64,
    /// Best parameters so far.
    pub best_params: Vec<f64>,
    /// Best cost so far.
    pub best_cost: f64,
    /// Iterations done.
    pub iter: u64,
    /// Residual evaluations done.
    pub evals: u64,
}

impl FitState {
    /// A state at `p` (cost not yet known).
    pub fn new(p: Vec<f64>) -> FitState {
        FitState {
            best_params: p.clone(),
            params: p,
            cost: f64::INFINITY,
            best_cost: f64::INFINITY,
            iter: 0,
            evals: 0,
        }
    }

    /// Records `params` with `cost`, keeping the best.
    pub fn update(&mut self, params: &[f64], cost: f64) {
        self.params.clear();
        self.params.extend_from_slice(params);
        self.cost = cost;
        if cost < self.best_cost {
            self.best_cost = cost;
            self.best_params.clear();
            self.best_params.extend_from_slice(params);
        }
    }

    /// Evaluates the cost of `p` on `problem`, counting the evaluation.
    pub fn cost_of<P: Residuals + ?Sized>(
        &mut self,
        problem: &P,
        p: &[f64],
        buf: &mut Vec<f64>,
    ) -> Result<f64, FitError> {
        buf.resize(problem.len(), 0.0);
        problem.residuals(p, buf)?;
        self.evals += 1;
        let c: f64 = buf.iter().map(|r| r * r).sum();
        Ok(if c.is_finite() { c } else { f64::INFINITY })
    }
}

/// Why a fit stopped.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TerminationReason {
    /// The fitter's convergence test passed.
    Converged,
    /// The iteration cap was reached.
    MaxIters,
    /// The time budget ran out.
    Timeout,
    /// Cancelled from outside.
    Cancelled,
    /// A target cost was reached.
    TargetCost,
}

/// An iterative fitter.
pub trait Fitter<P: Residuals + ?Sized> {
    /// Name stored with the result (e.g. "levenberg_marquardt").
    const NAME: &'static str;
    /// Prepares the fitter; must set `state.cost`.
    fn init(&mut self, problem: &P, state: &mut FitState) -> Result<(), FitError>;
    /// One iteration; `Some(reason)` stops the run.
    fn next_iter(
        &mut self,
        problem: &P,
        state: &mut FitState,
    ) -> Result<Option<TerminationReason>, FitError>;
}
