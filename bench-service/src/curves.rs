//! `POST /api/curves`: a model's steady-state friction over a velocity grid, computed by the
//! friction crate's own model code (`FrictionModel::steady_state`), so the dashboard draws a
//! fitted curve without a copy of the laws.

use super::body::Json;
use super::error::{ApiError, ApiResult, errors};
use super::state::AppState;
use aide::axum::ApiRouter;
use aide::axum::routing::post_with;
use friction::registry;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Most velocities one request may ask for.
pub const MAX_POINTS: usize = 10_000;
/// The largest speed of a range \[rad/s or m/s\]: far past any bench, and no overflow between.
pub const MAX_SPEED: f64 = 1e6;

/// The routes.
pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new().api_route(
        "/api/curves",
        post_with(curve, |op| {
            let op = op.summary("A model's steady-state friction at the given velocities, from the model's own law (params as stored by a fit, `negative` for v < 0)");
            errors(op, &[(422, "Unknown model, bad params or a bad velocity grid (the field is named)")])
        }),
    )
}

/// The velocities: a list, or `n` evenly spaced points from `from` to `to`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Velocities {
    /// Velocities as given \[rad/s or m/s\].
    List(#[schemars(length(max = 10_000))] Vec<f64>),
    /// `n` points from `from` to `to`, both included.
    Range {
        /// First velocity (at most 10⁶ in size).
        #[schemars(range(min = -1e6, max = 1e6))]
        from: f64,
        /// Last velocity (at most 10⁶ in size).
        #[schemars(range(min = -1e6, max = 1e6))]
        to: f64,
        /// How many points (2 to 10 000).
        #[schemars(range(min = 2, max = 10_000))]
        n: usize,
    },
}

/// A curve request.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CurveRequest {
    /// Model id (`GET /api/models`).
    #[schemars(schema_with = "model_ids")]
    pub model: String,
    /// Its parameters as a fit stores them (missing ones take defaults; `negative`: the set
    /// for v < 0; `offset` is not part of the curve and ignored).
    #[serde(default)]
    #[schemars(schema_with = "params_object")]
    pub params: Option<Value>,
    /// Where to evaluate it.
    pub v: Velocities,
}

/// The model ids the registry builds, as the schema's enum.
fn model_ids(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let ids: Vec<&str> = registry::MODELS.iter().map(|e| e.id).collect();
    schemars::json_schema!({"type": "string", "enum": ids})
}

/// A parameter object (or null for the defaults).
fn params_object(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": ["object", "null"]})
}

/// The curve: `friction[i]` at `v[i]`, `null` where the model has no steady state.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Curve {
    /// Velocities.
    pub v: Vec<f64>,
    /// Steady-state friction at each velocity \[N or N m\].
    pub friction: Vec<Option<f64>>,
}

async fn curve(Json(req): Json<CurveRequest>) -> ApiResult<axum::Json<Curve>> {
    Ok(axum::Json(compute(req)?))
}

/// The curve `req` asks for.
pub fn compute(req: CurveRequest) -> Result<Curve, ApiError> {
    let v = grid(&req.v)?;
    let spec = registry::ModelSpec {
        model: req.model.clone(),
        params: req
            .params
            .unwrap_or_else(|| Value::Object(Default::default())),
    };
    let (spec, _offset) = registry::split_offset(&spec)
        .map_err(|e| ApiError::unprocessable("params", e.to_string()))?;
    let entry = registry::entry(&spec.model)
        .map_err(|e| ApiError::unprocessable("model", e.to_string()))?;
    let model = entry
        .build(spec.params)
        .map_err(|e| ApiError::unprocessable("params", e.to_string()))?;
    let friction = v
        .iter()
        .map(|&x| model.steady_state(x).filter(|f| f.is_finite()))
        .collect();
    Ok(Curve { v, friction })
}

fn grid(v: &Velocities) -> Result<Vec<f64>, ApiError> {
    let bad = |field: &str, why: String| Err(ApiError::unprocessable(field, why));
    let out = match *v {
        Velocities::List(ref xs) => {
            if let Some(i) = xs.iter().position(|x| !x.is_finite()) {
                return bad(
                    &format!("v[{i}]"),
                    format!("v[{i}] must be a finite number"),
                );
            }
            xs.clone()
        }
        Velocities::Range { from, to, n } => {
            if !(from.abs() <= MAX_SPEED && to.abs() <= MAX_SPEED) {
                return bad(
                    "v.from",
                    format!("v.from and v.to must lie within ±{MAX_SPEED:e}"),
                );
            }
            if n < 2 {
                return bad("v.n", format!("v.n must be at least 2 (got {n})"));
            }
            (0..n)
                .map(|i| from + (to - from) * i as f64 / (n - 1) as f64)
                .collect()
        }
    };
    if out.len() > MAX_POINTS {
        return bad(
            "v",
            format!("at most {MAX_POINTS} velocities (got {})", out.len()),
        );
    }
    Ok(out)
}
