//! `GET /api/sensors`: the bench's torque sensors (docs/src/calibration.md), each with its
//! units, its current calibration, the days to its due date and the zero each run measured
//! with their drift, as `bench sensors list --json` prints them.

use super::error::{ApiError, ApiResult};
use super::state::AppState;
use aide::axum::ApiRouter;
use aide::axum::routing::get_with;
use axum::Json;
use axum::extract::State;
use bench_daemon::calibration::{self, SensorStatus};
use serde::Serialize;

/// The routes.
pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new().api_route(
        "/api/sensors",
        get_with(sensors, |op| {
            op.summary("The bench's torque sensors: units, current calibration, days to its due date, overdue, each run's zero (newest first) and its drift")
        }),
    )
}

/// `GET /api/sensors`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Sensors {
    /// The bench.
    pub bench_id: String,
    /// Its torque sensors (`daq.measured_torque`, `sensor`).
    pub sensors: Vec<SensorStatus>,
}

async fn sensors(State(state): State<AppState>) -> ApiResult<Json<Sensors>> {
    let config = &state.loaded.config;
    let sensors = calibration::status(&state.store, config, calibration::today())
        .await
        .map_err(ApiError::store)?;
    Ok(Json(Sensors {
        bench_id: config.bench_id.clone(),
        sensors,
    }))
}
