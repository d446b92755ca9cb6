//! The calibration records of a bench's torque sensors and the zero each run measured
//! (`migrations/sqlite/0018_sensor_calibrations.sql`). A record is never edited: a new
//! calibration is a new row, and the current one is the newest recorded. The zero's drift
//! across runs is the least-squares slope of the zeros over their days, and their spread.

use crate::backend::on;
use crate::{Error, Store};
use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A calibration as it is recorded (`bench sensors calibrate`).
#[derive(Clone, Debug, PartialEq)]
pub struct NewCalibration {
    /// The bench.
    pub bench_id: String,
    /// The sensor, as bench.toml names it (`daq.measured_torque`, `sensor`).
    pub sensor: String,
    /// Its sensitivity: N m (N) per V for an analog input, the profile's scale for a Modbus
    /// sensor.
    pub sensitivity: f64,
    /// Its output at zero torque: V for an analog input, N m (N) for a Modbus sensor.
    pub offset: f64,
    /// The calibration certificate's id.
    pub certificate: String,
    /// The day it was calibrated.
    pub calibrated: NaiveDate,
    /// The day its next calibration is due (after `calibrated`).
    pub due: NaiveDate,
    /// Who recorded it.
    pub recorded_by: String,
}

/// A recorded calibration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Calibration {
    /// Its id (runs name it).
    pub id: i64,
    /// The bench.
    pub bench_id: String,
    /// The sensor.
    pub sensor: String,
    /// See [`NewCalibration::sensitivity`].
    pub sensitivity: f64,
    /// See [`NewCalibration::offset`].
    pub offset: f64,
    /// The certificate's id.
    pub certificate: String,
    /// The day it was calibrated (YYYY-MM-DD).
    pub calibrated: String,
    /// The day the next calibration is due (YYYY-MM-DD).
    pub due: String,
    /// Who recorded it.
    pub recorded_by: String,
    /// When it was recorded (UTC, RFC 3339, the store's clock).
    pub recorded_at: String,
}

impl Calibration {
    /// Its due day.
    pub fn due_date(&self) -> Option<NaiveDate> {
        NaiveDate::parse_from_str(&self.due, "%Y-%m-%d").ok()
    }

    /// Whether it is past due on `today` (due on a day means usable through that day).
    pub fn overdue_on(&self, today: NaiveDate) -> bool {
        self.due_date().is_some_and(|due| today > due)
    }
}

/// One run's zero of one sensor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunZero {
    /// The run.
    pub run_id: i64,
    /// The zero: V for an analog input, N m (N) for a Modbus sensor's tare reading.
    pub zero: f64,
    /// The calibration it ran with (null: none on record).
    pub calibration_id: Option<i64>,
    /// When it was measured (UTC, RFC 3339).
    pub at: String,
}

/// What a run read one sensor with (`GET /api/runs/{id}`: `sensors`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunSensor {
    /// The sensor, as bench.toml names it.
    pub sensor: String,
    /// The calibration on record when the run started (null: none).
    pub calibration_id: Option<i64>,
    /// That calibration was past its due date (`[safety] allow_overdue_calibration`).
    pub overdue: bool,
    /// What the operator should know (`no calibration on record`).
    pub note: Option<String>,
    /// The zero measured before the run moved, in the sensor's raw terms (V for an analog
    /// input); null when none was measured.
    pub zero: Option<f64>,
}

/// How a sensor's zero moved across its runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ZeroDrift {
    /// Runs counted.
    pub runs: usize,
    /// Least-squares slope of the zeros over time, per day (null under two runs or all on
    /// one instant).
    pub slope_per_day: Option<f64>,
    /// Largest minus smallest zero (null without runs).
    pub spread: Option<f64>,
}

type CalRow = (
    i64,
    String,
    String,
    f64,
    f64,
    String,
    String,
    String,
    String,
    String,
);

type SensorRow = (String, Option<i64>, bool, Option<String>, Option<f64>);

const CAL_COLUMNS: &str = "id, bench_id, sensor, sensitivity, zero_offset, certificate, \
                           calibrated, due, recorded_by, recorded_at";

fn calibration(r: CalRow) -> Calibration {
    let (id, bench_id, sensor, sensitivity, offset, certificate, calibrated, due, by, at) = r;
    Calibration {
        id,
        bench_id,
        sensor,
        sensitivity,
        offset,
        certificate,
        calibrated,
        due,
        recorded_by: by,
        recorded_at: at,
    }
}

impl Store {
    /// Records a calibration; returns its id.
    pub async fn add_calibration(&self, c: &NewCalibration) -> Result<i64, Error> {
        check(c)?;
        let id: i64 = on!(self.writer(), |p, DB| {
            sqlx::query_scalar(
                "INSERT INTO sensor_calibrations (bench_id, sensor, sensitivity, zero_offset,
                     certificate, calibrated, due, recorded_by)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
            )
            .bind(&c.bench_id)
            .bind(&c.sensor)
            .bind(c.sensitivity)
            .bind(c.offset)
            .bind(&c.certificate)
            .bind(c.calibrated.format("%Y-%m-%d").to_string())
            .bind(c.due.format("%Y-%m-%d").to_string())
            .bind(&c.recorded_by)
            .fetch_one(p)
            .await?
        });
        Ok(id)
    }

    /// The calibrations of `bench`'s `sensor`, newest first.
    pub async fn calibrations(&self, bench: &str, sensor: &str) -> Result<Vec<Calibration>, Error> {
        let sql = format!(
            "SELECT {CAL_COLUMNS} FROM sensor_calibrations WHERE bench_id = $1 AND sensor = $2
             ORDER BY id DESC"
        );
        let rows: Vec<CalRow> = on!(self.reader(), |p, DB| {
            sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .bind(bench)
                .bind(sensor)
                .fetch_all(p)
                .await?
        });
        Ok(rows.into_iter().map(calibration).collect())
    }

    /// Every calibration in the store, oldest first (a push copies them).
    pub(crate) async fn all_calibrations(&self) -> Result<Vec<Calibration>, Error> {
        let sql = format!("SELECT {CAL_COLUMNS} FROM sensor_calibrations ORDER BY id");
        let rows: Vec<CalRow> = on!(self.reader(), |p, DB| {
            sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .fetch_all(p)
                .await?
        });
        Ok(rows.into_iter().map(calibration).collect())
    }

    /// The current (newest recorded) calibration of `bench`'s `sensor`.
    pub async fn current_calibration(
        &self,
        bench: &str,
        sensor: &str,
    ) -> Result<Option<Calibration>, Error> {
        Ok(self.calibrations(bench, sensor).await?.into_iter().next())
    }

    /// Records what `run_id` reads `s.sensor` with, as it starts (its zero comes later:
    /// [`Store::set_run_zero`]).
    pub async fn put_run_sensor(&self, run_id: i64, s: &RunSensor) -> Result<(), Error> {
        on!(self.writer(), |p, DB| {
            sqlx::query(
                "INSERT INTO run_sensors (run_id, sensor, calibration_id, overdue, note)
                 VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (run_id, sensor) DO UPDATE SET
                     calibration_id = excluded.calibration_id, overdue = excluded.overdue,
                     note = excluded.note",
            )
            .bind(run_id)
            .bind(&s.sensor)
            .bind(s.calibration_id)
            .bind(s.overdue)
            .bind(s.note.as_deref())
            .execute(p)
            .await?;
        });
        Ok(())
    }

    /// Records the zero `run_id` measured of `sensor` before it moved (a row of its own when
    /// the run had none).
    pub async fn set_run_zero(&self, run_id: i64, sensor: &str, zero: f64) -> Result<(), Error> {
        if !zero.is_finite() {
            return Err(bad("zero", zero.to_string(), "must be finite"));
        }
        on!(self.writer(), |p, DB| {
            sqlx::query(
                "INSERT INTO run_sensors (run_id, sensor, zero) VALUES ($1, $2, $3)
                 ON CONFLICT (run_id, sensor) DO UPDATE SET zero = excluded.zero",
            )
            .bind(run_id)
            .bind(sensor)
            .bind(zero)
            .execute(p)
            .await?;
        });
        Ok(())
    }

    /// What `run_id` read its sensors with, by sensor name.
    pub async fn run_sensors(&self, run_id: i64) -> Result<Vec<RunSensor>, Error> {
        let rows: Vec<SensorRow> = on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT sensor, calibration_id, overdue, note, zero FROM run_sensors
                     WHERE run_id = $1 ORDER BY sensor",
            )
            .bind(run_id)
            .fetch_all(p)
            .await?
        });
        Ok(rows
            .into_iter()
            .map(|(sensor, calibration_id, overdue, note, zero)| RunSensor {
                sensor,
                calibration_id,
                overdue,
                note,
                zero,
            })
            .collect())
    }

    /// The zeros `bench`'s runs measured of `sensor`, newest first, at most `limit`.
    pub async fn run_zeros(
        &self,
        bench: &str,
        sensor: &str,
        limit: i64,
    ) -> Result<Vec<RunZero>, Error> {
        let rows: Vec<(i64, f64, Option<i64>, String)> = on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT z.run_id, z.zero, z.calibration_id, z.at FROM run_sensors z
                 JOIN runs r ON r.id = z.run_id
                 WHERE r.bench_id = $1 AND z.sensor = $2 AND z.zero IS NOT NULL
                 ORDER BY z.at DESC, z.run_id DESC LIMIT $3",
            )
            .bind(bench)
            .bind(sensor)
            .bind(limit)
            .fetch_all(p)
            .await?
        });
        Ok(rows
            .into_iter()
            .map(|(run_id, zero, calibration_id, at)| RunZero {
                run_id,
                zero,
                calibration_id,
                at,
            })
            .collect())
    }
}

/// The drift of `zeros` (any order): the slope per day and the spread.
pub fn zero_drift(zeros: &[RunZero]) -> ZeroDrift {
    let points: Vec<(f64, f64)> = zeros
        .iter()
        .filter_map(|z| {
            let t = chrono::DateTime::parse_from_rfc3339(&z.at).ok()?;
            Some((t.timestamp_millis() as f64 / 86_400_000.0, z.zero))
        })
        .collect();
    let n = points.len() as f64;
    let spread = zeros
        .iter()
        .map(|z| z.zero)
        .fold(None, |acc: Option<(f64, f64)>, z| {
            Some(acc.map_or((z, z), |(lo, hi)| (lo.min(z), hi.max(z))))
        })
        .map(|(lo, hi)| hi - lo);
    let slope_per_day = (points.len() >= 2)
        .then(|| {
            let mt = points.iter().map(|p| p.0).sum::<f64>() / n;
            let mz = points.iter().map(|p| p.1).sum::<f64>() / n;
            let stt: f64 = points.iter().map(|p| (p.0 - mt).powi(2)).sum();
            let stz: f64 = points.iter().map(|p| (p.0 - mt) * (p.1 - mz)).sum();
            (stt > 0.0).then(|| stz / stt)
        })
        .flatten();
    ZeroDrift {
        runs: zeros.len(),
        slope_per_day,
        spread,
    }
}

fn bad(field: &'static str, value: String, rule: &str) -> Error {
    Error::InvalidInput {
        field,
        value,
        rule: rule.into(),
    }
}

fn check(c: &NewCalibration) -> Result<(), Error> {
    for (field, text) in [
        ("bench_id", &c.bench_id),
        ("sensor", &c.sensor),
        ("certificate", &c.certificate),
        ("recorded_by", &c.recorded_by),
    ] {
        if text.trim().is_empty() {
            return Err(bad(field, String::new(), "must not be empty"));
        }
    }
    if !(c.sensitivity.is_finite() && c.sensitivity > 0.0) {
        return Err(bad(
            "sensitivity",
            c.sensitivity.to_string(),
            "must be finite and > 0",
        ));
    }
    if !c.offset.is_finite() {
        return Err(bad("offset", c.offset.to_string(), "must be finite"));
    }
    if c.due <= c.calibrated {
        return Err(bad(
            "due",
            c.due.to_string(),
            &format!("must come after the calibration date {}", c.calibrated),
        ));
    }
    Ok(())
}
