//! The torque sensors of a bench as their calibration records name them, and the check each
//! run passes before anything moves: a sensor whose calibration is past its due date refuses
//! the run (naming the sensor and the date) unless `[safety] allow_overdue_calibration`; a
//! sensor with no calibration on record runs, and the run's record says so.
//!
//! A sensor is named by its section in bench.toml: `daq.measured_torque` (the DAQ's analog
//! input: sensitivity in N m (N) per V, offset and zero in V) or `sensor` (the Modbus torque
//! sensor: the profile's scale, offset and zero in N m (N)).

use crate::InputError;
use crate::config::{BenchConfig, Loaded};
use chrono::NaiveDate;
use run_store::{Calibration, RunSensor, RunZero, Store, ZeroDrift, zero_drift};
use schemars::JsonSchema;
use serde::Serialize;

/// The DAQ's torque input.
pub const DAQ_SENSOR: &str = "daq.measured_torque";
/// The Modbus torque sensor.
pub const MODBUS_SENSOR: &str = "sensor";
/// The note of a run whose sensor has no calibration on record.
pub const NO_CALIBRATION: &str = "no calibration on record";

/// A torque sensor of the bench and the units its calibration is written in.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct BenchSensor {
    /// Its name (`daq.measured_torque`, `sensor`).
    pub name: String,
    /// `analog_input` (a DAQ channel) or `modbus` (a sensor with its own profile).
    pub kind: String,
    /// The unit of its sensitivity (`N m/V`; `1` for a Modbus profile's scale).
    pub sensitivity_unit: String,
    /// The unit of its offset and of each run's zero (`V`, or `N m`).
    pub offset_unit: String,
}

/// The torque sensors `config` reads.
pub fn sensors(config: &BenchConfig) -> Vec<BenchSensor> {
    let force = config.geometry.force();
    let mut out = Vec::new();
    if config.daq.is_some() {
        out.push(BenchSensor {
            name: DAQ_SENSOR.into(),
            kind: "analog_input".into(),
            sensitivity_unit: format!("{force}/V"),
            offset_unit: "V".into(),
        });
    }
    if config.sensor.is_some() {
        out.push(BenchSensor {
            name: MODBUS_SENSOR.into(),
            kind: "modbus".into(),
            sensitivity_unit: "1".into(),
            offset_unit: force.into(),
        });
    }
    out
}

/// The sensor `name` of `config`; the error names the sensors it has.
pub fn sensor(config: &BenchConfig, name: &str) -> Result<BenchSensor, String> {
    let all = sensors(config);
    if let Some(s) = all.iter().find(|s| s.name == name) {
        return Ok(s.clone());
    }
    let names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
    Err(match names.is_empty() {
        true => format!("{name:?} is no sensor of this bench: it has no torque sensor"),
        false => format!(
            "{name:?} is no sensor of this bench: it has {}",
            names.join(", ")
        ),
    })
}

/// What the run will read each sensor with, checked on `today`: the error names the first
/// sensor past its due date and that date, unless `[safety] allow_overdue_calibration`.
pub async fn check(
    store: &Store,
    loaded: &Loaded,
    today: NaiveDate,
) -> anyhow::Result<Vec<RunSensor>> {
    let allow = loaded.config.safety.allow_overdue_calibration;
    let mut used = Vec::new();
    for s in sensors(&loaded.config) {
        let current = store
            .current_calibration(&loaded.config.bench_id, &s.name)
            .await?;
        used.push(judge(&s.name, current.as_ref(), today, allow)?);
    }
    Ok(used)
}

/// One sensor's verdict (see [`check`]).
pub fn judge(
    sensor: &str,
    current: Option<&Calibration>,
    today: NaiveDate,
    allow_overdue: bool,
) -> Result<RunSensor, InputError> {
    let Some(c) = current else {
        return Ok(RunSensor {
            sensor: sensor.into(),
            note: Some(NO_CALIBRATION.into()),
            ..RunSensor::default()
        });
    };
    let overdue = c.overdue_on(today);
    if overdue && !allow_overdue {
        return Err(InputError(format!(
            "sensor {sensor}: its calibration (certificate {}) was due {}: calibrate it (bench \
             sensors calibrate --sensor {sensor} ...) or set [safety] \
             allow_overdue_calibration = true",
            c.certificate, c.due
        )));
    }
    Ok(RunSensor {
        sensor: sensor.into(),
        calibration_id: Some(c.id),
        overdue,
        note: overdue.then(|| format!("calibration overdue since {} (allowed)", c.due)),
        zero: None,
    })
}

/// The zeros a sensor's answer lists (its newest runs).
pub const ZEROS_SHOWN: i64 = 50;

/// A sensor as `bench sensors list` and `GET /api/sensors` show it.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct SensorStatus {
    /// The sensor and its units.
    #[serde(flatten)]
    pub sensor: BenchSensor,
    /// Its current calibration (null: none on record).
    pub calibration: Option<Calibration>,
    /// Every calibration on record, newest first (the current one first).
    pub history: Vec<Calibration>,
    /// Days until its due date (negative: overdue by that many; null without one).
    pub due_in_days: Option<i64>,
    /// Its calibration is past its due date: runs are refused unless `[safety]
    /// allow_overdue_calibration`.
    pub overdue: bool,
    /// The zero each run measured, newest first (at most [`ZEROS_SHOWN`]).
    pub zeros: Vec<RunZero>,
    /// How those zeros moved.
    pub drift: ZeroDrift,
}

/// Every torque sensor of `config` with its calibration and its zeros' drift, on `today`.
pub async fn status(
    store: &Store,
    config: &BenchConfig,
    today: NaiveDate,
) -> Result<Vec<SensorStatus>, run_store::Error> {
    let mut out = Vec::new();
    for sensor in sensors(config) {
        let bench = &config.bench_id;
        let history = store.calibrations(bench, &sensor.name).await?;
        let calibration = history.first().cloned();
        let zeros = store.run_zeros(bench, &sensor.name, ZEROS_SHOWN).await?;
        let due_in_days = calibration
            .as_ref()
            .and_then(Calibration::due_date)
            .map(|due| (due - today).num_days());
        out.push(SensorStatus {
            overdue: due_in_days.is_some_and(|d| d < 0),
            drift: zero_drift(&zeros),
            sensor,
            calibration,
            history,
            due_in_days,
            zeros,
        });
    }
    Ok(out)
}

/// Today, as the calibration dates are written (UTC).
pub fn today() -> NaiveDate {
    chrono::Utc::now().date_naive()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cal(due: &str) -> Calibration {
        Calibration {
            id: 7,
            bench_id: "b".into(),
            sensor: DAQ_SENSOR.into(),
            sensitivity: 0.5,
            offset: 0.0,
            certificate: "C-9".into(),
            calibrated: "2026-01-01".into(),
            due: due.into(),
            recorded_by: "ada".into(),
            recorded_at: "2026-01-01T00:00:00Z".into(),
        }
    }

    fn day(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn an_overdue_calibration_refuses_naming_the_sensor_and_the_date() {
        let c = cal("2026-06-30");
        let e = judge(DAQ_SENSOR, Some(&c), day("2026-07-01"), false).unwrap_err();
        assert!(
            e.0.contains("sensor daq.measured_torque") && e.0.contains("was due 2026-06-30"),
            "{e}"
        );
        let due_day = judge(DAQ_SENSOR, Some(&c), day("2026-06-30"), false).unwrap();
        assert_eq!((due_day.calibration_id, due_day.overdue), (Some(7), false));
        let allowed = judge(DAQ_SENSOR, Some(&c), day("2026-07-01"), true).unwrap();
        assert!(allowed.overdue && allowed.note.unwrap().contains("overdue since 2026-06-30"));
    }

    #[test]
    fn no_calibration_runs_with_a_note() {
        let r = judge(MODBUS_SENSOR, None, day("2026-07-01"), false).unwrap();
        assert_eq!(r.calibration_id, None);
        assert_eq!(r.note.as_deref(), Some(NO_CALIBRATION));
    }
}
