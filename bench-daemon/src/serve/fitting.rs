//! The fitting service of `POST /api/fits` and `POST /api/comparisons`: the same code as
//! `bench fit --run` and `bench compare`, run in this process on blocking threads (no child
//! processes). At most two at a time, and one while a run is on the bench, whose loop needs
//! the CPU; another is told to come back (503).

use super::api::{ApiError, AppState};
use crate::cli::compare::{CompareArgs, compare_json};
use crate::cli::fit::{FitArgs, fit_json};
use axum::http::StatusCode;
use clap::Parser;
use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Fits and comparisons at a time with no run on the bench.
pub const WORKERS: usize = 2;

static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// `bench fit ...` as the service parses it.
#[derive(Debug, Parser)]
#[command(name = "fit")]
struct FitCommand {
    #[command(flatten)]
    args: FitArgs,
}

/// `bench compare ...` as the service parses it.
#[derive(Debug, Parser)]
#[command(name = "compare")]
struct CompareCommand {
    #[command(flatten)]
    args: CompareArgs,
}

/// A worker slot, given back on drop.
struct Slot;

impl Drop for Slot {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
    }
}

fn slot(limit: usize) -> Option<Slot> {
    IN_FLIGHT
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
            (n < limit).then_some(n + 1)
        })
        .ok()
        .map(|_| Slot)
}

/// Runs `argv` (`fit ...` or `compare ...`, the command line `bench` would take, without
/// `--db`) on the daemon's database; its input errors are 422 naming the body key of `keys`
/// their flag belongs to.
pub async fn run(
    state: &AppState,
    mut argv: Vec<String>,
    keys: &[&str],
) -> Result<Value, ApiError> {
    let busy = state.view.borrow().running.is_some();
    let limit = if busy { 1 } else { WORKERS };
    let slot = slot(limit).ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            None,
            format!(
                "{limit} fit(s) or comparison(s) already going{}: try again when it ends",
                if busy {
                    " while a run is on the bench"
                } else {
                    ""
                }
            ),
        )
    })?;
    argv.extend(["--db".into(), state.db_path.display().to_string()]);
    let done = tokio::task::spawn_blocking(move || {
        let _slot = slot;
        match argv.first().map(String::as_str) {
            Some("fit") => fit_json(&FitCommand::try_parse_from(&argv)?.args),
            Some("compare") => compare_json(&CompareCommand::try_parse_from(&argv)?.args),
            other => anyhow::bail!("BUG: no such fitting command {other:?}"),
        }
    })
    .await
    .map_err(|e| ApiError::from_anyhow(e.into()))?;
    done.map_err(|e| {
        let msg = format!("{e:#}");
        let field = flag_field(&msg, keys);
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, Some(&field), msg)
    })
}

/// The body key a CLI message is about: its leading `--flag` as a key of `keys`, else `body`.
fn flag_field(msg: &str, keys: &[&str]) -> String {
    msg.strip_prefix("--")
        .and_then(|m| m.split([' ', ':', '=']).next())
        .map(|flag| flag.replace('-', "_"))
        .filter(|k| keys.contains(&k.as_str()))
        .unwrap_or_else(|| "body".into())
}
