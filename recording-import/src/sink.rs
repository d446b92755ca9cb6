//! Rows to samples: each mapped value scaled and checked (finite), time strictly increasing,
//! gathered into recorder batches, with the statistics of the time stamps and of each column.

use super::options::{Mapping, Role};
use super::{At, ImportError};
use run_store::{Batch, Sample};
use serde::Serialize;

/// Samples per batch handed to the recorder (a chunk's worth).
pub const BATCH_SAMPLES: usize = 4096;

/// What a recording held: its time stamps and the range of each column.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Samples stored.
    pub samples: u64,
    /// First time stamp \[s\].
    pub t_first: Option<f64>,
    /// Last time stamp \[s\].
    pub t_last: Option<f64>,
    /// Shortest step between time stamps \[s\].
    pub dt_min: Option<f64>,
    /// Longest step \[s\]: the largest gap.
    pub dt_max: Option<f64>,
    /// Mean step \[s\].
    pub dt_mean: Option<f64>,
    /// The time \[s\] at the start of the largest gap.
    pub largest_gap_at: Option<f64>,
    /// Whether every step is within 1 % of the mean (a uniformly sampled recording).
    pub uniform: bool,
    /// Smallest and largest stored value of each mapped column (SI, after scaling), by role.
    pub ranges: serde_json::Map<String, serde_json::Value>,
}

/// Turns checked rows into batches for `send`.
pub(crate) struct Sink<'a> {
    /// Roles of the values a row carries, in order.
    roles: Vec<Role>,
    /// File column name of each of those roles (for messages).
    columns: Vec<String>,
    scales: Vec<f64>,
    send: &'a mut dyn FnMut(Batch) -> Result<(), ImportError>,
    batch: Batch,
    last: Option<(f64, At)>,
    stats: Stats,
    dt_sum: f64,
    min: Vec<f64>,
    max: Vec<f64>,
}

impl<'a> Sink<'a> {
    /// A sink for the mapped roles of `map`; `names` are the file's column names.
    pub(crate) fn new(
        map: &Mapping,
        names: &[String],
        send: &'a mut dyn FnMut(Batch) -> Result<(), ImportError>,
    ) -> Sink<'a> {
        let mapped = map.mapped();
        let n = mapped.len();
        Sink {
            roles: mapped.iter().map(|(r, _)| *r).collect(),
            columns: mapped.iter().map(|(_, c)| names[*c].clone()).collect(),
            scales: mapped.iter().map(|(r, _)| map.scales[r.index()]).collect(),
            send,
            batch: Batch::with_capacity(0, BATCH_SAMPLES, 0),
            last: None,
            stats: Stats::default(),
            dt_sum: 0.0,
            min: vec![f64::INFINITY; n],
            max: vec![f64::NEG_INFINITY; n],
        }
    }

    /// One row: `values` of the mapped roles as read, in role order.
    pub(crate) fn row(&mut self, at: At, values: &[f64]) -> Result<(), ImportError> {
        let mut s = Sample {
            x: f64::NAN,
            v: f64::NAN,
            u_cmd: f64::NAN,
            torque_motor: f64::NAN,
            torque_sensor: f64::NAN,
            ..Sample::default()
        };
        for (k, (&raw, role)) in values.iter().zip(&self.roles).enumerate() {
            let value = raw * self.scales[k];
            if !value.is_finite() {
                let what = if raw.is_nan() {
                    "NaN".to_string()
                } else if raw.is_finite() {
                    format!("{raw} scaled by {} overflows", self.scales[k])
                } else {
                    format!("{raw}")
                };
                return Err(self.refuse(at, k, format!("{what} is not a finite number")));
            }
            self.min[k] = self.min[k].min(value);
            self.max[k] = self.max[k].max(value);
            match role {
                Role::T => s.t = value,
                Role::X => s.x = value,
                Role::V => s.v = value,
                Role::U => s.torque_motor = value,
                Role::Friction => s.torque_sensor = value,
            }
        }
        self.time(at, s.t)?;
        self.batch.push(s, &[]);
        self.stats.samples += 1;
        if self.batch.samples.len() == BATCH_SAMPLES {
            self.flush()?;
        }
        Ok(())
    }

    /// Checks that time increases and keeps its statistics.
    fn time(&mut self, at: At, t: f64) -> Result<(), ImportError> {
        if let Some((prev, prev_at)) = self.last {
            if t <= prev {
                let how = if t < prev {
                    "goes backwards"
                } else {
                    "repeats"
                };
                let k = self.roles.iter().position(|r| *r == Role::T).unwrap_or(0);
                return Err(self.refuse(
                    at,
                    k,
                    format!("time {how}: {t} s after {prev} s on {prev_at}"),
                ));
            }
            let dt = t - prev;
            self.dt_sum += dt;
            self.stats.dt_min = Some(self.stats.dt_min.map_or(dt, |m| m.min(dt)));
            if self.stats.dt_max.is_none_or(|m| dt > m) {
                self.stats.dt_max = Some(dt);
                self.stats.largest_gap_at = Some(prev);
            }
        } else {
            self.stats.t_first = Some(t);
        }
        self.stats.t_last = Some(t);
        self.last = Some((t, at));
        Ok(())
    }

    fn refuse(&self, at: At, k: usize, what: String) -> ImportError {
        ImportError::Data {
            file: String::new(),
            message: format!(
                "{at}, column '{}' ({}): {what}",
                self.columns[k],
                self.roles[k].name()
            ),
        }
    }

    /// Hands the pending samples on.
    fn flush(&mut self) -> Result<(), ImportError> {
        if self.batch.samples.is_empty() {
            return Ok(());
        }
        let next = self.batch.first_idx + self.batch.samples.len() as u64;
        let full = std::mem::replace(
            &mut self.batch,
            Batch::with_capacity(next, BATCH_SAMPLES, 0),
        );
        (self.send)(full)
    }

    /// Sends the rest; the statistics (an empty recording is refused).
    pub(crate) fn finish(mut self) -> Result<Stats, ImportError> {
        if self.stats.samples < 2 {
            return Err(ImportError::Data {
                file: String::new(),
                message: format!(
                    "{} data rows: a recording needs at least 2",
                    self.stats.samples
                ),
            });
        }
        self.flush()?;
        let steps = (self.stats.samples - 1) as f64;
        let mean = self.dt_sum / steps;
        self.stats.dt_mean = Some(mean);
        let (lo, hi) = (
            self.stats.dt_min.unwrap_or(mean),
            self.stats.dt_max.unwrap_or(mean),
        );
        self.stats.uniform = hi - lo <= 0.01 * mean;
        for (k, role) in self.roles.iter().enumerate() {
            self.stats.ranges.insert(
                role.name().into(),
                serde_json::json!([self.min[k], self.max[k]]),
            );
        }
        Ok(self.stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapping() -> (Mapping, Vec<String>) {
        let map = Mapping {
            cols: [Some(0), Some(2), None, Some(1), None],
            scales: [1.0, 1.0, 1.0, 2.0, 1.0],
        };
        (map, ["time", "force", "pos"].map(String::from).to_vec())
    }

    #[test]
    fn rows_become_samples_in_batches_with_their_statistics() {
        let (map, names) = mapping();
        let mut got: Vec<Batch> = Vec::new();
        let mut send = |b: Batch| {
            got.push(b);
            Ok(())
        };
        let mut sink = Sink::new(&map, &names, &mut send);
        let n = BATCH_SAMPLES as u64 + 10;
        for k in 0..n {
            // Roles in order: t, x (pos), u (force).
            let t = k as f64 * 1e-3 + if k > 100 { 0.5 } else { 0.0 };
            sink.row(At::Line(k + 2), &[t, 0.1 * k as f64, 1.5])
                .unwrap();
        }
        let stats = sink.finish().unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(
            (got[0].first_idx, got[1].first_idx),
            (0, BATCH_SAMPLES as u64)
        );
        assert_eq!(got[1].samples.len(), 10);
        let s = got[0].samples[3];
        assert_eq!((s.t, s.x, s.torque_motor), (3e-3, 0.1 * 3.0, 3.0));
        assert!(s.v.is_nan() && s.u_cmd.is_nan() && s.torque_sensor.is_nan());
        assert_eq!(stats.samples, n);
        assert_eq!(stats.largest_gap_at, Some(0.1));
        assert!((stats.dt_max.unwrap() - 0.501).abs() < 1e-12);
        assert!(!stats.uniform);
        assert_eq!(stats.ranges["u"], serde_json::json!([3.0, 3.0]));
    }

    #[test]
    fn non_finite_values_and_time_not_increasing_are_refused_with_their_place() {
        let (map, names) = mapping();
        let mut send = |_: Batch| Ok(());
        let msg = |rows: &[[f64; 3]]| {
            let mut send = |_: Batch| Ok(());
            let mut sink = Sink::new(&map, &names, &mut send);
            let mut err = None;
            for (k, r) in rows.iter().enumerate() {
                if let Err(e) = sink.row(At::Line(k as u64 + 2), r) {
                    err = Some(e.to_string());
                    break;
                }
            }
            err.unwrap()
        };
        assert_eq!(
            msg(&[[0.0, 1.0, 1.0], [0.001, f64::NAN, 1.0]]),
            ": line 3, column 'pos' (x): NaN is not a finite number"
        );
        assert_eq!(
            msg(&[[0.0, 1.0, 1.0], [0.001, 1.0, f64::INFINITY]]),
            ": line 3, column 'force' (u): inf is not a finite number"
        );
        assert_eq!(
            msg(&[[0.0, 1.0, 1.0], [0.002, 1.0, 1.0], [0.001, 1.0, 1.0]]),
            ": line 4, column 'time' (t): time goes backwards: 0.001 s after 0.002 s on line 3"
        );
        assert_eq!(
            msg(&[[0.0, 1.0, 1.0], [0.0, 1.0, 1.0]]),
            ": line 3, column 'time' (t): time repeats: 0 s after 0 s on line 2"
        );
        let sink = Sink::new(&map, &names, &mut send);
        assert_eq!(
            sink.finish().unwrap_err().to_string(),
            ": 0 data rows: a recording needs at least 2"
        );
    }
}
