//! The sensors' records a push copies: every calibration (matched in the target by its bench,
//! sensor, certificate and the time it was recorded, since each store numbers its own) and, for
//! every run both stores hold, what it read its sensors with and the zero it measured, with the
//! calibration's id translated. Runs pushed before these were copied get theirs on the next push.

use super::Copied;
use crate::backend::on;
use crate::sensors::Calibration;
use crate::{Error, Store};
use std::collections::BTreeMap;

/// What identifies a calibration across stores.
type CalKey = (String, String, String, String);

fn key(c: &Calibration) -> CalKey {
    let text = |s: &String| s.clone();
    (
        text(&c.bench_id),
        text(&c.sensor),
        text(&c.certificate),
        text(&c.recorded_at),
    )
}

/// A row of `run_sensors`.
type RunSensorRow = (
    i64,
    String,
    Option<i64>,
    bool,
    Option<String>,
    Option<f64>,
    String,
);

impl Store {
    /// Copies the calibrations `target` lacks; returns the counts and this store's calibration
    /// ids mapped to the target's.
    pub(super) async fn push_calibrations(
        &self,
        target: &Store,
    ) -> Result<(Copied, BTreeMap<i64, i64>), Error> {
        let theirs: BTreeMap<CalKey, i64> = (target.all_calibrations().await?.iter())
            .map(|c| (key(c), c.id))
            .collect();
        let mut copied = Copied::default();
        let mut ids = BTreeMap::new();
        for c in self.all_calibrations().await? {
            if let Some(&id) = theirs.get(&key(&c)) {
                ids.insert(c.id, id);
                copied.count(false);
                continue;
            }
            let id: i64 = on!(target.writer(), |p, DB| {
                sqlx::query_scalar(
                    "INSERT INTO sensor_calibrations (bench_id, sensor, sensitivity, zero_offset,
                         certificate, calibrated, due, recorded_by, recorded_at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
                )
                .bind(&c.bench_id)
                .bind(&c.sensor)
                .bind(c.sensitivity)
                .bind(c.offset)
                .bind(&c.certificate)
                .bind(&c.calibrated)
                .bind(&c.due)
                .bind(&c.recorded_by)
                .bind(&c.recorded_at)
                .fetch_one(p)
                .await?
            });
            ids.insert(c.id, id);
            copied.count(true);
        }
        Ok((copied, ids))
    }

    /// Copies each run's sensor rows the target lacks, for the runs both stores hold (`runs`:
    /// this store's run ids to the target's; `calibrations`: the same for calibrations).
    pub(super) async fn push_run_sensors(
        &self,
        target: &Store,
        runs: &BTreeMap<i64, i64>,
        calibrations: &BTreeMap<i64, i64>,
    ) -> Result<Copied, Error> {
        let rows: Vec<RunSensorRow> = on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT run_id, sensor, calibration_id, overdue, note, zero, at FROM run_sensors
                 ORDER BY run_id, sensor",
            )
            .fetch_all(p)
            .await?
        });
        let mut copied = Copied::default();
        for (run, sensor, calibration, overdue, note, zero, at) in rows {
            let Some(&run) = runs.get(&run) else {
                continue;
            };
            let calibration = calibration.and_then(|c| calibrations.get(&c).copied());
            let inserted = on!(target.writer(), |p, DB| {
                sqlx::query(
                    "INSERT INTO run_sensors (run_id, sensor, calibration_id, overdue, note, zero, at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (run_id, sensor) DO NOTHING",
                )
                .bind(run)
                .bind(&sensor)
                .bind(calibration)
                .bind(overdue)
                .bind(note.as_deref())
                .bind(zero)
                .bind(&at)
                .execute(p)
                .await?
                .rows_affected()
            });
            copied.count(inserted == 1);
        }
        Ok(copied)
    }
}
