//! `bench audit [--db PATH] [--since DATE] [--user NAME] [--json]`: who did what, newest first
//! (docs/src/lab.md#who-did-what). Read-only: nothing in the product edits or deletes an entry.

use super::db::{DbArgs, open, runtime, store_error};
use run_store::AuditFilter;
use std::io::Write;

/// Arguments of `bench audit`.
#[derive(Debug, clap::Args)]
pub struct AuditArgs {
    #[command(flatten)]
    db: DbArgs,
    /// Only entries at or after this UTC date (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ).
    #[arg(long)]
    since: Option<String>,
    /// Only this user's entries.
    #[arg(long)]
    user: Option<String>,
    /// Most entries (1..=10000).
    #[arg(long, default_value_t = 1000)]
    limit: u32,
    /// Print JSON: an array of `{id, at, bench_id, user, role, remote, method, path, run_id,
    /// schedule_id, status, allowed, detail}`.
    #[arg(long)]
    json: bool,
}

/// Runs `bench audit`.
pub fn run(args: &AuditArgs) -> anyhow::Result<()> {
    runtime()?.block_on(async {
        let store = open(&args.db).await?;
        let filter = AuditFilter {
            since: args.since.clone(),
            user: args.user.clone(),
            limit: Some(args.limit),
        };
        let entries = store.audit_log(&filter).await.map_err(store_error)?;
        let mut w = std::io::stdout().lock();
        if args.json {
            serde_json::to_writer_pretty(&mut w, &entries)?;
            writeln!(w)?;
            return Ok(());
        }
        for e in &entries {
            let who = match (&e.user, &e.role) {
                (Some(u), Some(r)) => format!("{u} ({r})"),
                (Some(u), None) => u.clone(),
                (None, _) => "(no user)".into(),
            };
            let verdict = if e.allowed { "allowed" } else { "REFUSED" };
            writeln!(
                w,
                "{}  {who:<20} {:<16} {} {} → {} {verdict}{}",
                e.at,
                e.remote.as_deref().unwrap_or("-"),
                e.method,
                e.path,
                e.status,
                e.detail
                    .as_deref()
                    .map(|d| format!("  {d}"))
                    .unwrap_or_default()
            )?;
        }
        Ok(())
    })
}
