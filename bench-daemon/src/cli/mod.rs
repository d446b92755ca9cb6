//! One module per subcommand.

pub mod audit;
pub mod compare;
pub mod estop;
pub mod fault_reset;
pub mod fit;
mod fit_print;
pub mod models;
pub mod params;
pub mod perf;
pub mod perf_estop;
pub mod perf_fit;
pub mod perf_http;
pub mod perf_import;
pub mod perf_loop;
pub mod perf_modbus;
pub mod perf_serve;
pub mod perf_storage;
pub mod probe;
pub mod probe_check;
pub mod run;
pub mod run_data;
pub mod runs;
pub mod runs_annotate;
pub mod runs_diff;
pub mod runs_import;
pub mod runs_push;
pub mod serve;
pub mod shell;
pub mod sim;
pub mod simulate;
pub mod start;

/// Bad input from the user (unknown model, bad parameter, bad scenario): exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

/// Reads a JSON argument given inline or as `@file`.
pub fn json_arg(flag: &str, text: &str) -> anyhow::Result<serde_json::Value> {
    let (source, body) = match text.strip_prefix('@') {
        Some(path) => {
            let body = std::fs::read_to_string(path)
                .map_err(|e| InputError(format!("{flag}: cannot read {path}: {e}")))?;
            (path.to_string(), body)
        }
        None => ("inline JSON".to_string(), text.to_string()),
    };
    serde_json::from_str(&body)
        .map_err(|e| InputError(format!("{flag}: {source} is not valid JSON: {e}")).into())
}

/// Runs an async subcommand on a multi-threaded tokio runtime.
pub fn block_on(f: impl std::future::Future<Output = anyhow::Result<()>>) -> anyhow::Result<()> {
    tokio::runtime::Runtime::new()?.block_on(f)
}

/// Waits for SIGINT, SIGTERM or SIGHUP (the ways a terminal, systemd or a closed SSH session
/// end a process) and names it: every command that can move a drive aborts its run into the
/// safe state on any of them.
pub async fn stop_signal() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        let _ = tokio::signal::ctrl_c().await;
        return "SIGINT";
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => "SIGINT",
        _ = term.recv() => "SIGTERM",
        _ = hup.recv() => "SIGHUP",
    }
}
