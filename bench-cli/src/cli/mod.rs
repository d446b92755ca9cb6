//! One module per subcommand.

pub mod archive;
pub mod audit;
pub mod characterise;
pub mod compare;
pub mod db;
pub mod estop;
pub mod fault_reset;
pub mod fit;
mod fit_print;
pub mod models;
pub mod params;
pub mod perf;
pub mod probe;
pub mod probe_check;
pub mod report;
pub mod run;
pub mod runs;
pub mod sensors;
pub mod serve;
pub mod shell;
pub mod sim;
pub mod simulate;
pub mod trends;
pub mod users;

pub use bench_daemon::InputError;

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

/// Runs an async computation to its value on a multi-threaded tokio runtime.
pub fn block_on_value<T>(
    f: impl std::future::Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    tokio::runtime::Runtime::new()?.block_on(f)
}
