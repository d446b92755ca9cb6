//! `GET /api/trends`: one parameter over many runs with control limits, as `bench trends`
//! prints it (the same filters, [`TrendFilter`]); the dashboard's Trends page reads it. On a
//! lab server it spans every bench that pushes there.

use super::error::{ApiError, ApiResult};
use super::extract::Query;
use super::state::AppState;
use aide::axum::ApiRouter;
use aide::axum::routing::get_with;
use axum::Json;
use axum::extract::State;
use run_store::Trend;
use run_store::{Band, Baseline, DEFAULT_BASELINE_POINTS, TrendQuery};
use serde::Deserialize;

/// The routes.
pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new().api_route(
        "/api/trends",
        get_with(trend, |op| {
            op.summary("One parameter over many runs: a point per fitted run in time order with its standard error, run and tags; each bench's control limits from a baseline and the points outside them flagged")
        }),
    )
}

async fn trend(
    State(state): State<AppState>,
    Query(filter): Query<TrendFilter>,
) -> ApiResult<Json<Trend>> {
    let trend = state
        .store
        .trend(&filter.query())
        .await
        .map_err(ApiError::store)?;
    Ok(Json(trend))
}

/// What to trend and how to draw its limits: the flags of `bench trends` and the query of
/// `GET /api/trends`.
#[derive(Clone, Debug, clap::Args, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrendFilter {
    /// The parameter: a fitted model's (`fs`, `fc`, `sigma0`, `negative.fs`, ...) or a
    /// measured one (`fs_nm`, `breakaway_pos_nm`, `breakaway_neg_nm`, `stiffness_pos_nm_rad`,
    /// `stiffness_neg_nm_rad`, `steady_state_torque_nm`).
    #[arg(long)]
    #[schemars(length(min = 1, max = 128))]
    pub param: String,
    /// Only fits of this model (e.g. `lugre`).
    #[arg(long)]
    #[schemars(length(min = 1, max = 128))]
    pub model: Option<String>,
    /// Only this bench (its `bench_id`).
    #[arg(long)]
    #[schemars(length(min = 1, max = 128))]
    pub bench: Option<String>,
    /// Runs started on or after this UTC date (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ).
    #[arg(long)]
    #[schemars(pattern(crate::schema::DATE_PATTERN))]
    pub since: Option<String>,
    /// Runs started before this time, or on or before this day.
    #[arg(long)]
    #[schemars(pattern(crate::schema::DATE_PATTERN))]
    pub until: Option<String>,
    /// Each series' baseline: its points before this time (or on or before this day), e.g.
    /// the day of a bearing change. Default: its first `baseline_points`.
    #[arg(long)]
    #[schemars(pattern(crate::schema::DATE_PATTERN))]
    pub baseline_until: Option<String>,
    /// Baseline points of each series when `baseline_until` is not given.
    #[arg(long, default_value_t = DEFAULT_BASELINE_POINTS)]
    #[serde(default = "default_baseline_points")]
    #[schemars(range(min = 1))]
    pub baseline_points: usize,
    /// Limits at the baseline mean ± this fraction of it (0.05 = ± 5 %) instead of ± 3σ.
    #[arg(long, value_name = "FRACTION")]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub band: Option<f64>,
}

fn default_baseline_points() -> usize {
    DEFAULT_BASELINE_POINTS
}

impl TrendFilter {
    /// The store's query.
    pub fn query(&self) -> TrendQuery {
        TrendQuery {
            param: self.param.clone(),
            model: self.model.clone(),
            bench: self.bench.clone(),
            since: self.since.clone(),
            until: self.until.clone(),
            baseline: Baseline {
                until: self.baseline_until.clone(),
                points: self.baseline_points,
                band: match self.band {
                    Some(fraction) => Band::Relative { fraction },
                    None => Band::Sigma3,
                },
            },
        }
    }
}
