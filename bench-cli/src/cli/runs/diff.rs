//! `bench runs diff A B [--json]`: what changed on the bench between two runs, as a readable
//! list (docs/src/lab.md#what-changed-between-two-runs).

use super::super::db::{DbArgs, open, store_error};
use run_store::{RunDiff, changed_lines, diff_runs};
use serde_json::Value;
use std::io::Write;

/// Arguments of `bench runs diff`.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// The first run (e.g. last night's good one).
    a: i64,
    /// The second run.
    b: i64,
    #[command(flatten)]
    db: DbArgs,
    /// Print JSON: `{"a", "b", "differences": [{"what", "a", "b"}], "profiles": [{"device",
    /// "a", "b"}]}` (profile checksums are SHA-256 of their text).
    #[arg(long)]
    json: bool,
}

/// Runs `bench runs diff`.
pub async fn diff(args: &DiffArgs) -> anyhow::Result<()> {
    let store = open(&args.db).await?;
    let a = store.run(args.a).await.map_err(store_error)?;
    let b = store.run(args.b).await.map_err(store_error)?;
    let d = diff_runs(&a, &b);
    let mut w = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut w, &d)?;
        writeln!(w)?;
    } else {
        print(&mut w, &d)?;
    }
    Ok(())
}

fn short(v: &Value) -> String {
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Null => "(none)".into(),
        other => other.to_string(),
    };
    if text.chars().count() > 120 {
        format!("{}…", text.chars().take(120).collect::<String>())
    } else {
        text
    }
}

fn print(w: &mut impl Write, d: &RunDiff) -> std::io::Result<()> {
    if d.differences.is_empty() {
        writeln!(
            w,
            "runs {} and {}: no difference in spec, configuration, profiles, lockstep sets, software or bench",
            d.a, d.b
        )?;
    }
    for x in &d.differences {
        if let Some(device) = x.what.strip_prefix("profile.") {
            let (gone, new) = changed_lines(
                x.a.as_str().unwrap_or_default(),
                x.b.as_str().unwrap_or_default(),
            );
            writeln!(w, "{}: the {device} profile changed", x.what)?;
            for l in gone {
                writeln!(w, "    - {l}")?;
            }
            for l in new {
                writeln!(w, "    + {l}")?;
            }
            continue;
        }
        writeln!(w, "{}: {} → {}", x.what, short(&x.a), short(&x.b))?;
    }
    for p in &d.profiles {
        let sum = |s: &Option<String>| {
            s.as_deref()
                .map_or("(none)".to_string(), |s| s[..12].to_string())
        };
        let same = if p.a == p.b { "same" } else { "differs" };
        writeln!(
            w,
            "profile {}: sha256 {} / {} ({same})",
            p.device,
            sum(&p.a),
            sum(&p.b)
        )?;
    }
    Ok(())
}
