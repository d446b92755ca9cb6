//! `bench sensors calibrate --sensor NAME --sensitivity X --offset Y --certificate ID
//! --calibrated DATE --due DATE (--config FILE | --sim)` and `bench sensors list`: the
//! calibration records of the bench's torque sensors (docs/src/calibration.md), each sensor
//! with its current calibration and the drift of its zero across runs. `GET /api/sensors`
//! answers the same.

use super::InputError;
use super::db::DbArgs;
use bench_daemon::calibration::{self, SensorStatus};
use bench_daemon::config::Loaded;
use chrono::NaiveDate;
use run_store::{NewCalibration, Store};
use std::io::Write;
use std::path::PathBuf;

/// `bench sensors ...`.
#[derive(Debug, clap::Subcommand)]
pub enum SensorsCommand {
    /// Record a sensor's calibration (from its certificate); the newest is the current one.
    Calibrate(CalibrateArgs),
    /// The bench's torque sensors: units, current calibration, due date, the zero's drift.
    List(ListArgs),
}

/// The bench whose sensors are meant.
#[derive(Debug, Clone, clap::Args)]
pub struct Bench {
    /// Bench configuration file (bench.toml): its sensors and `bench_id`.
    #[arg(long, value_name = "FILE", required_unless_present = "sim")]
    config: Option<PathBuf>,
    /// The simulated bench (`bench run --sim`; with --config: that file's devices).
    #[arg(long)]
    sim: bool,
    #[command(flatten)]
    db: DbArgs,
}

/// Arguments of `bench sensors calibrate`.
#[derive(Debug, clap::Args)]
pub struct CalibrateArgs {
    /// The sensor as bench.toml names it: `daq.measured_torque` or `sensor`.
    #[arg(long)]
    sensor: String,
    /// Its sensitivity: N m (N) per V for the DAQ's input, the profile's scale for a Modbus
    /// sensor.
    #[arg(long, allow_negative_numbers = true)]
    sensitivity: f64,
    /// Its output at zero torque: V for the DAQ's input, N m (N) for a Modbus sensor.
    #[arg(long, allow_negative_numbers = true)]
    offset: f64,
    /// The calibration certificate's id.
    #[arg(long)]
    certificate: String,
    /// The day it was calibrated (YYYY-MM-DD).
    #[arg(long, value_name = "DATE")]
    calibrated: String,
    /// The day its next calibration is due (YYYY-MM-DD, after --calibrated).
    #[arg(long, value_name = "DATE")]
    due: String,
    /// Who records it (default: $USER).
    #[arg(long, value_name = "NAME")]
    by: Option<String>,
    #[command(flatten)]
    bench: Bench,
    /// Print the recorded calibration as JSON.
    #[arg(long)]
    json: bool,
}

/// Arguments of `bench sensors list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    #[command(flatten)]
    bench: Bench,
    /// Print JSON: per sensor `name`, `kind`, `sensitivity_unit`, `offset_unit`,
    /// `calibration`, `history` (every calibration, newest first), `due_in_days`, `overdue`,
    /// `zeros` (newest first), `drift`.
    #[arg(long)]
    json: bool,
}

/// Runs `bench sensors ...`.
pub fn run(cmd: &SensorsCommand) -> anyhow::Result<()> {
    match cmd {
        SensorsCommand::Calibrate(args) => calibrate(args),
        SensorsCommand::List(args) => list(args),
    }
}

impl Bench {
    fn loaded(&self) -> anyhow::Result<Loaded> {
        Loaded::for_command(self.config.as_deref(), self.sim.then_some("127.0.0.1:0"))
    }

    async fn store(&self, loaded: &Loaded, create: bool) -> anyhow::Result<Store> {
        let path = bench_daemon::db::for_bench(self.db.db.as_deref(), loaded);
        if !create {
            return bench_daemon::db::open_existing(&path).await;
        }
        bench_daemon::db::check_dir(&path, false)?;
        Ok(Store::open(&path).await?)
    }
}

fn date(flag: &str, text: &str) -> Result<NaiveDate, InputError> {
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .map_err(|e| InputError(format!("{flag}: {text:?} is not a date YYYY-MM-DD ({e})")))
}

/// The calibration `args` give, every field checked and named by its flag.
fn new_calibration(args: &CalibrateArgs, loaded: &Loaded) -> Result<NewCalibration, InputError> {
    let err = |flag: &str, why: String| InputError(format!("{flag}: {why}"));
    calibration::sensor(&loaded.config, &args.sensor).map_err(|e| err("--sensor", e))?;
    if !(args.sensitivity.is_finite() && args.sensitivity > 0.0) {
        let why = format!("{} must be finite and > 0", args.sensitivity);
        return Err(err("--sensitivity", why));
    }
    if !args.offset.is_finite() {
        return Err(err("--offset", format!("{} must be finite", args.offset)));
    }
    if args.certificate.trim().is_empty() {
        return Err(err("--certificate", "must not be empty".into()));
    }
    let calibrated = date("--calibrated", &args.calibrated)?;
    let due = date("--due", &args.due)?;
    if due <= calibrated {
        let why = format!("{due} must come after --calibrated {calibrated}");
        return Err(err("--due", why));
    }
    let by = args
        .by
        .clone()
        .or_else(|| std::env::var("USER").ok())
        .filter(|b| !b.trim().is_empty())
        .ok_or_else(|| {
            err(
                "--by",
                "who records it: give a name ($USER is not set)".into(),
            )
        })?;
    Ok(NewCalibration {
        bench_id: loaded.config.bench_id.clone(),
        sensor: args.sensor.clone(),
        sensitivity: args.sensitivity,
        offset: args.offset,
        certificate: args.certificate.trim().to_string(),
        calibrated,
        due,
        recorded_by: by,
    })
}

fn calibrate(args: &CalibrateArgs) -> anyhow::Result<()> {
    let loaded = args.bench.loaded()?;
    let new = new_calibration(args, &loaded)?;
    super::db::runtime()?.block_on(async {
        let store = args.bench.store(&loaded, true).await?;
        let id = store
            .add_calibration(&new)
            .await
            .map_err(bench_daemon::db::store_error)?;
        let all = store.calibrations(&new.bench_id, &new.sensor).await?;
        let c = all.iter().find(|c| c.id == id).expect("just recorded");
        let mut w = std::io::stdout().lock();
        if args.json {
            serde_json::to_writer_pretty(&mut w, c)?;
            writeln!(w)?;
        } else {
            writeln!(
                w,
                "calibration {id} of {} on bench {}: certificate {}, calibrated {}, due {}",
                c.sensor, c.bench_id, c.certificate, c.calibrated, c.due
            )?;
        }
        Ok(())
    })
}

fn list(args: &ListArgs) -> anyhow::Result<()> {
    let loaded = args.bench.loaded()?;
    super::db::runtime()?.block_on(async {
        let store = args.bench.store(&loaded, false).await?;
        let today = calibration::today();
        let all = calibration::status(&store, &loaded.config, today)
            .await
            .map_err(bench_daemon::db::store_error)?;
        let mut w = std::io::stdout().lock();
        if args.json {
            serde_json::to_writer_pretty(&mut w, &all)?;
            writeln!(w)?;
            return Ok(());
        }
        if all.is_empty() {
            writeln!(w, "bench {} has no torque sensor", loaded.config.bench_id)?;
        }
        for s in &all {
            print(&mut w, s)?;
        }
        Ok(())
    })
}

/// One sensor in the bench's units.
fn print(w: &mut impl Write, s: &SensorStatus) -> std::io::Result<()> {
    let b = &s.sensor;
    writeln!(w, "{} ({})", b.name, b.kind.replace('_', " "))?;
    match &s.calibration {
        None => writeln!(w, "  calibration: {}", calibration::NO_CALIBRATION)?,
        Some(c) => {
            let when = match s.due_in_days {
                Some(d) if d < 0 => format!("OVERDUE by {} days", -d),
                Some(d) => format!("in {d} days"),
                None => String::new(),
            };
            writeln!(
                w,
                "  calibration {}: sensitivity {} {}, offset {} {}, certificate {}, calibrated \
                 {}, due {} ({when}), recorded by {}",
                c.id,
                c.sensitivity,
                b.sensitivity_unit,
                c.offset,
                b.offset_unit,
                c.certificate,
                c.calibrated,
                c.due,
                c.recorded_by
            )?;
        }
    }
    let d = &s.drift;
    let unit = &b.offset_unit;
    match (d.slope_per_day, d.spread) {
        (_, None) => writeln!(w, "  zero: no run has measured it"),
        (slope, Some(spread)) => {
            let slope = slope.map_or("-".into(), |v| format!("{v:.6} {unit}/day"));
            writeln!(
                w,
                "  zero over {} runs: newest {:.6} {unit} (run {}), drift {slope}, spread \
                 {spread:.6} {unit}",
                d.runs, s.zeros[0].zero, s.zeros[0].run_id
            )
        }
    }
}
