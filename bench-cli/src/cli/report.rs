//! `bench report CAMPAIGN_ID [--out report.html] [--format html|pdf] [--db PATH]
//! [--config bench.toml]`: a campaign's report as one self-contained HTML file, or as PDF
//! printed by headless Chromium.

use super::InputError;
use super::db::DbArgs;
use std::path::{Path, PathBuf};

/// Output format of `bench report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// One HTML file: inline CSS and SVG, nothing fetched.
    Html,
    /// The same page printed to PDF by headless Chromium (chromium or google-chrome on PATH).
    Pdf,
}

/// Arguments of `bench report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The campaign's id (`bench characterise` prints it).
    campaign: i64,
    /// Output file (default: campaign-ID.html or .pdf in the current directory).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// html or pdf.
    #[arg(long, value_enum, default_value_t = ReportFormat::Html)]
    format: ReportFormat,
    /// Bench configuration, for its units (default rotary: N m, rad).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(flatten)]
    db: DbArgs,
}

/// Writes the report.
pub fn run(args: &ReportArgs) -> anyhow::Result<()> {
    let g = bench_daemon::config::geometry_of(args.config.as_deref())?;
    let ext = match args.format {
        ReportFormat::Html => "html",
        ReportFormat::Pdf => "pdf",
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("campaign-{}.{ext}", args.campaign)));
    let chromium = match args.format {
        ReportFormat::Pdf => Some(chromium().ok_or_else(|| {
            InputError("--format pdf needs headless Chromium (chromium, chromium-browser or google-chrome on PATH): none found; write --format html and print it from a browser".into())
        })?),
        ReportFormat::Html => None,
    };
    let html = super::block_on_value(async {
        let store = bench_daemon::db::open_existing(&args.db.path()).await?;
        let html = campaign::report_html(&store, args.campaign, g).await;
        store.close().await;
        html
    })?;
    match chromium {
        None => std::fs::write(&out, html)
            .map_err(|e| InputError(format!("--out: cannot write {}: {e}", out.display())))?,
        Some(exe) => print_pdf(&exe, &html, &out)?,
    }
    eprintln!("bench: report {}", out.display());
    Ok(())
}

/// The first Chromium on PATH.
pub fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome", "chrome"]
        .iter()
        .flat_map(|n| std::env::split_paths(&path).map(move |d| d.join(n)))
        .find(|p| p.is_file())
}

/// Prints `html` to the PDF `out` with headless Chromium.
fn print_pdf(exe: &Path, html: &str, out: &Path) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let page = dir.path().join("report.html");
    std::fs::write(&page, html)?;
    let out_abs = std::path::absolute(out)?;
    let status = std::process::Command::new(exe)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-pdf-header-footer",
        ])
        .arg(format!(
            "--user-data-dir={}",
            dir.path().join("profile").display()
        ))
        .arg(format!("--print-to-pdf={}", out_abs.display()))
        .arg(format!("file://{}", page.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()?;
    if !status.success() || !out_abs.is_file() {
        anyhow::bail!("{} did not print the PDF ({status})", exe.display());
    }
    Ok(())
}
