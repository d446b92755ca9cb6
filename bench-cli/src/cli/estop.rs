//! `bench estop [--url URL] [--reason TEXT] [--json]`: presses a running daemon's e-stop
//! (`POST /api/estop`, no token needed) and waits for its answer: the drive confirmed
//! disabled, or not. Exit 0 confirmed, 1 not confirmed or no answer, 2 a bad URL.

use super::InputError;
use serde_json::{Value, json};

/// The daemon's URL when neither `--url` nor `$FRICTIONBENCH_URL` gives one.
pub const DEFAULT_URL: &str = "http://127.0.0.1:8080/";

/// Arguments of `bench estop`.
#[derive(Debug, clap::Args)]
pub struct EstopArgs {
    /// The daemon's URL (`bench serve` prints it; else $FRICTIONBENCH_URL, else
    /// http://127.0.0.1:8080/).
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// Why, recorded with the e-stop.
    #[arg(long, default_value = "bench estop")]
    reason: String,
    /// Print the daemon's answer as JSON.
    #[arg(long)]
    json: bool,
}

/// Sends the e-stop; fails unless the daemon confirms the drive disabled.
pub fn run(args: &EstopArgs) -> anyhow::Result<()> {
    let url = args
        .url
        .clone()
        .or_else(|| std::env::var("FRICTIONBENCH_URL").ok())
        .unwrap_or_else(|| DEFAULT_URL.into());
    let (addr, prefix) = http_authority(&url)?;
    let path = format!("{prefix}/api/estop");
    let body = json!({ "reason": args.reason });
    let (status, answer) = super::perf::http::request(&addr, "POST", &path, Some(&body))
        .map_err(|e| anyhow::anyhow!("e-stop to {url}: {e}"))?;
    if args.json {
        println!("{answer}");
    }
    anyhow::ensure!(
        status == 200,
        "e-stop to {url}: HTTP {status}: {}",
        answer.get("error").and_then(Value::as_str).unwrap_or("")
    );
    let safe = &answer["safe_state"];
    let confirmed = safe["confirmed"].as_bool() == Some(true);
    if !args.json {
        let run = answer["aborted_run"]
            .as_i64()
            .map_or("no run was running".into(), |id| {
                format!("run {id} aborted")
            });
        let detail = safe["detail"].as_str().unwrap_or("");
        println!("e-stop latched; {run}; {detail}");
    }
    anyhow::ensure!(
        confirmed,
        "the daemon could not confirm the drive disabled: check the bench now"
    );
    Ok(())
}

/// `http://host:port/prefix` → (`host:port`, `/prefix` without a trailing slash).
fn http_authority(url: &str) -> Result<(String, String), InputError> {
    let rest = url.strip_prefix("http://").ok_or_else(|| {
        InputError(format!(
            "--url: '{url}' must start with http:// (bench serve speaks plain HTTP)"
        ))
    })?;
    let (auth, path) = rest.split_once('/').unwrap_or((rest, ""));
    if auth.is_empty() {
        return Err(InputError(format!("--url: '{url}' names no host")));
    }
    let auth = if auth.rsplit_once(':').is_some_and(|(_, p)| !p.contains(']')) {
        auth.to_string()
    } else {
        format!("{auth}:80")
    };
    let path = path.trim_end_matches('/');
    let prefix = if path.is_empty() {
        String::new()
    } else {
        format!("/{path}")
    };
    Ok((auth, prefix))
}

#[cfg(test)]
mod tests {
    use super::http_authority;

    #[test]
    fn urls_give_an_address_and_a_prefix() {
        let a = |u: &str| http_authority(u).map_err(|e| e.0);
        assert_eq!(
            a("http://127.0.0.1:8080/").unwrap(),
            ("127.0.0.1:8080".into(), "".into())
        );
        assert_eq!(
            a("http://bench.lab").unwrap(),
            ("bench.lab:80".into(), "".into())
        );
        assert_eq!(
            a("http://[::1]:9/x/").unwrap(),
            ("[::1]:9".into(), "/x".into())
        );
        assert_eq!(a("http://[::1]").unwrap(), ("[::1]:80".into(), "".into()));
        assert!(a("https://bench.lab/").unwrap_err().contains("http://"));
        assert!(a("http:///api").unwrap_err().contains("no host"));
    }
}
