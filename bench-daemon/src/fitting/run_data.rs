//! A stored run as the fitting commands read it: its samples as [`experiments::Sample`]s, its
//! plan rebuilt from the spec and the bench limits, its analysis results, and the time-series
//! columns `t,x,v,u,friction` the identification procedures read.
//!
//! Conventions (`bench fit --run`, `bench compare` with run ids): `u` is the applied torque
//! ([`experiments::Sample::applied_torque`]) and `friction` the measured torque
//! ([`experiments::Sample::measured_torque`]: the torque sensor sits in the shaft between the
//! rotor and the friction element, so it reads the friction).

use super::{Field, FitError};
use crate::InputError;
use experiments::{BenchLimits, Flags, Plan, Results, Spec};
use run_store::{Run, SampleQuery, Store};

use crate::session::to_experiment_sample;

/// Reads run `id`; a missing run is an input error naming `field` and the id.
pub async fn load_run(store: &Store, id: i64, field: Field) -> Result<Run, FitError> {
    store.run(id).await.map_err(|e| match e {
        run_store::Error::RunNotFound { id } => FitError::field(
            field,
            format!(": run {id} not found in {}", store.location()),
        ),
        e => e.into(),
    })
}

/// The run's plan, rebuilt from its spec and the `limits` of its bench configuration.
pub fn plan(run: &Run) -> Result<Plan, InputError> {
    if run.kind == run_store::IMPORTED_KIND {
        return Err(InputError(format!(
            "run {}: an imported recording has no plan segments (use --t-range)",
            run.id
        )));
    }
    let limits: BenchLimits =
        serde_json::from_value(run.bench_config["limits"].clone()).map_err(|e| {
            InputError(format!(
                "run {}: bench_config.limits is not a bench limits object: {e}",
                run.id
            ))
        })?;
    Spec::from_value(run.spec.clone())
        .and_then(|s| s.plan(&limits))
        .map_err(|e| InputError(format!("run {}: its spec no longer plans: {e}", run.id)))
}

/// The run's stored analysis results.
pub fn results(run: &Run) -> Result<Results, InputError> {
    let value = run.results.clone().ok_or_else(|| {
        InputError(format!(
            "run {} ({}, {}) has no analysis results",
            run.id, run.kind, run.status
        ))
    })?;
    serde_json::from_value(value).map_err(|e| {
        InputError(format!(
            "run {}: its results are not a '{}' analysis: {e}",
            run.id, run.kind
        ))
    })
}

/// Which samples of a run to use: `--segments A..B` (plan segment indices, `B` excluded) and
/// `--t-range A..B` (run time \[s\], both included); either end may be left open.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Selection {
    /// Segment indices `[from, to)`.
    pub segments: Option<(Option<u32>, Option<u32>)>,
    /// Run time `[from, to]` \[s\].
    pub t_range: Option<(Option<f64>, Option<f64>)>,
}

impl Selection {
    /// Parses the two ranges (`segments`, `t_range`).
    pub fn parse(segments: Option<&str>, t_range: Option<&str>) -> Result<Selection, FitError> {
        let segments = match segments {
            Some(text) => {
                let (a, b) = split_range(Field::Segments, text)?;
                let int = |s: &str| {
                    s.parse::<u32>().map_err(|_| {
                        FitError::field(
                            Field::Segments,
                            format!(" ({text}): '{s}' is not a segment index (0, 1, ...)"),
                        )
                    })
                };
                let (a, b) = (a.map(int).transpose()?, b.map(int).transpose()?);
                if let (Some(a), Some(b)) = (a, b)
                    && b <= a
                {
                    return Err(FitError::field(
                        Field::Segments,
                        format!(" ({text}) must be A..B with B > A (B is excluded)"),
                    ));
                }
                Some((a, b))
            }
            None => None,
        };
        let t_range = match t_range {
            Some(text) => {
                let (a, b) = split_range(Field::TRange, text)?;
                let num = |s: &str| {
                    s.parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite())
                        .ok_or_else(|| {
                            FitError::field(
                                Field::TRange,
                                format!(" ({text}): '{s}' is not a time in seconds"),
                            )
                        })
                };
                let (a, b) = (a.map(num).transpose()?, b.map(num).transpose()?);
                if let (Some(a), Some(b)) = (a, b)
                    && b < a
                {
                    return Err(FitError::field(
                        Field::TRange,
                        format!(" ({text}) must be A..B with B >= A"),
                    ));
                }
                Some((a, b))
            }
            None => None,
        };
        Ok(Selection { segments, t_range })
    }

    fn keeps_segment(&self, segment: u32) -> bool {
        self.segments
            .is_none_or(|(a, b)| a.is_none_or(|a| segment >= a) && b.is_none_or(|b| segment < b))
    }

    /// The selection as flags, for provenance (`null` when everything is used).
    pub fn to_json(self) -> serde_json::Value {
        let end = |x: Option<String>| x.unwrap_or_default();
        let mut m = serde_json::Map::new();
        if let Some((a, b)) = self.segments {
            let text = format!(
                "{}..{}",
                end(a.map(|a| a.to_string())),
                end(b.map(|b| b.to_string()))
            );
            m.insert("segments".into(), text.into());
        }
        if let Some((a, b)) = self.t_range {
            let text = format!(
                "{}..{}",
                end(a.map(|a| a.to_string())),
                end(b.map(|b| b.to_string()))
            );
            m.insert("t_range".into(), text.into());
        }
        serde_json::Value::Object(m)
    }
}

fn split_range<'a>(
    field: Field,
    text: &'a str,
) -> Result<(Option<&'a str>, Option<&'a str>), FitError> {
    let (a, b) = text
        .split_once("..")
        .ok_or_else(|| FitError::field(field, format!(" ({text}) must be A..B, A.. or ..B")))?;
    let part = |s: &'a str| Some(s.trim()).filter(|s| !s.is_empty());
    Ok((part(a), part(b)))
}

/// Time-series columns of a run: `t,x,v,u,friction` (an imported run: those its recording
/// had), with what was left out or substituted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimeSeries {
    /// Column names, in the order of [`TimeSeries::NAMES`].
    pub names: Vec<&'static str>,
    /// Columns, one per name.
    pub cols: Vec<Vec<f64>>,
    /// What the data are and what was skipped (for the provenance notes).
    pub notes: Vec<String>,
}

impl TimeSeries {
    /// Column names.
    pub const NAMES: [&'static str; 5] = ["t", "x", "v", "u", "friction"];

    /// Replaces the speed column by [`centred_speed`] of the angle (both present), noted.
    pub fn speed_from_encoder(&mut self) {
        let col = |n: &str| self.names.iter().position(|m| *m == n);
        if let (Some(t), Some(x), Some(v)) = (col("t"), col("x"), col("v")) {
            self.cols[v] = centred_speed(&self.cols[t], &self.cols[x]);
            self.notes
                .push("v: the centred difference of the encoder angle".into());
        }
    }

    /// `(name, column)` pairs.
    pub fn named(&self) -> Vec<(String, Vec<f64>)> {
        self.names
            .iter()
            .zip(&self.cols)
            .map(|(n, c)| (n.to_string(), c.clone()))
            .collect()
    }
}

/// The centred difference of angle `x` over time `t` (one-sided at the ends): a speed whose
/// integral follows the recorded angle, where a drive's filtered estimate lags it. Fewer than
/// two samples give zeros.
pub fn centred_speed(t: &[f64], x: &[f64]) -> Vec<f64> {
    let n = t.len().min(x.len());
    if n < 2 {
        return vec![0.0; n];
    }
    let slope = |a: usize, b: usize| (x[b] - x[a]) / (t[b] - t[a]);
    (0..n)
        .map(|i| slope(i.saturating_sub(1), (i + 1).min(n - 1)))
        .collect()
}

/// Which of [`TimeSeries::NAMES`] a run has: all of them for a recorded run, the mapped columns
/// (`spec.columns`) for an imported one.
fn present_columns(run: &Run) -> [bool; 5] {
    if run.kind != run_store::IMPORTED_KIND {
        return [true; 5];
    }
    let mapped = run.spec["columns"].as_object();
    TimeSeries::NAMES.map(|n| mapped.is_some_and(|m| m.contains_key(n)))
}

/// Reads the selected samples of `run` as time-series columns. Rows with a non-finite value are
/// left out and counted in the notes; an empty selection is an input error.
pub async fn time_series(
    store: &Store,
    run: &Run,
    sel: &Selection,
) -> Result<TimeSeries, FitError> {
    let query = SampleQuery {
        from_t: sel.t_range.and_then(|r| r.0),
        to_t: sel.t_range.and_then(|r| r.1),
        every: 1,
    };
    let set = crate::chain::chain_samples(store, run.id, &query).await?;
    let present = present_columns(run);
    let mut ts = TimeSeries {
        names: (0..5)
            .filter(|&k| present[k])
            .map(|k| TimeSeries::NAMES[k])
            .collect(),
        cols: (0..5)
            .filter(|&k| present[k])
            .map(|_| Vec::with_capacity(set.samples.len()))
            .collect(),
        notes: Vec::new(),
    };
    let (mut non_finite, mut stale, mut no_motor, mut kept_segments) = (0usize, 0usize, 0usize, 0);
    let (mut seg_lo, mut seg_hi) = (u32::MAX, 0u32);
    for s in &set.samples {
        let s = to_experiment_sample(s);
        seg_lo = seg_lo.min(s.segment);
        seg_hi = seg_hi.max(s.segment);
        if !sel.keeps_segment(s.segment) {
            continue;
        }
        kept_segments += 1;
        let all = [s.t, s.x, s.v, s.applied_torque(), s.measured_torque()];
        let row = (0..5).filter(|&k| present[k]).map(|k| all[k]);
        if row.clone().any(|x| !x.is_finite()) {
            non_finite += 1;
            continue;
        }
        if s.torque_sensor.is_finite() && s.flags.contains(Flags::SENSOR_STALE) {
            stale += 1;
        }
        if present[3] && !s.torque_motor.is_finite() {
            no_motor += 1;
        }
        for (c, x) in ts.cols.iter_mut().zip(row) {
            c.push(x);
        }
    }
    let sel_text = match sel.to_json() {
        serde_json::Value::Object(m) if m.is_empty() => String::new(),
        v => format!(" selected by {v}"),
    };
    if ts.cols[0].is_empty() {
        let have = if set.samples.is_empty() {
            String::new()
        } else {
            format!(
                " (it has {} samples in segments {seg_lo}..={seg_hi}, t {}..{} s)",
                set.samples.len(),
                set.samples[0].t,
                set.samples[set.samples.len() - 1].t
            )
        };
        let why = if kept_segments > 0 {
            format!("all {kept_segments} samples{sel_text} have a non-finite value")
        } else if set.samples.is_empty() && sel.t_range.is_none() {
            "no sample was recorded".to_string()
        } else {
            format!("no sample{sel_text}")
        };
        return Err(InputError(format!("run {} ({}): {why}{have}", run.id, run.kind)).into());
    }
    let columns = if present == [true; 5] {
        "u = applied (motor) torque, friction = measured (sensor) torque".to_string()
    } else {
        format!(
            "columns {} as imported ({} not in the recording)",
            ts.names.join(","),
            (0..5)
                .filter(|&k| !present[k])
                .map(|k| TimeSeries::NAMES[k])
                .collect::<Vec<_>>()
                .join(",")
        )
    };
    ts.notes.push(format!(
        "run {} ({}, {}): {} samples{sel_text}; {columns}",
        run.id,
        run.kind,
        run.status,
        ts.cols[0].len()
    ));
    if let Some((a, b)) = sel.segments {
        match plan(run) {
            Ok(plan) => {
                let n = plan.segments.len() as u32;
                if a.is_some_and(|a| a >= n) || b.is_some_and(|b| b > n) {
                    return Err(FitError::field(
                        Field::Segments,
                        format!(": run {} has {n} plan segments (0..{n})", run.id),
                    ));
                }
                let (a, b) = (a.unwrap_or(0) as usize, b.unwrap_or(n) as usize);
                let labels: Vec<&str> = plan.segments[a..b]
                    .iter()
                    .map(|s| s.label.as_str())
                    .collect();
                let shown = labels.len().min(8);
                ts.notes.push(format!(
                    "segments {a}..{b}: {}{}",
                    labels[..shown].join(", "),
                    if shown < labels.len() { ", ..." } else { "" }
                ));
            }
            Err(e) => ts.notes.push(format!("segment labels unknown: {}", e.0)),
        }
    }
    if non_finite > 0 {
        ts.notes.push(format!(
            "left out {non_finite} samples with a non-finite t, x, v, u or friction"
        ));
    }
    if stale > 0 {
        ts.notes.push(format!(
            "friction = motor torque on {stale} samples with a stale sensor reading"
        ));
    }
    if no_motor > 0 {
        ts.notes.push(format!(
            "u = command on {no_motor} samples without a motor torque reading"
        ));
    }
    if run.dropped_samples > 0 {
        ts.notes.push(format!(
            "the recorder dropped {} samples of this run: the series has gaps",
            run.dropped_samples
        ));
    }
    Ok(ts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_encoder_speed_replaces_the_drive_estimate_and_says_so() {
        let mut ts = TimeSeries {
            names: vec!["t", "x", "v", "friction"],
            cols: vec![
                vec![0.0, 1.0, 2.0, 4.0],
                vec![0.0, 1.0, 3.0, 3.0],
                vec![9.0; 4],
                vec![0.0; 4],
            ],
            notes: Vec::new(),
        };
        ts.speed_from_encoder();
        assert_eq!(ts.cols[2], vec![1.0, 1.5, 2.0 / 3.0, 0.0]);
        assert_eq!(ts.notes.len(), 1);
    }

    #[test]
    fn a_stored_sample_converts_field_for_field_with_its_flags() {
        let stored = run_store::Sample {
            t: 0.25,
            x: -1e-3,
            v: 0.5,
            u_cmd: 0.7,
            torque_motor: f64::NAN,
            torque_sensor: 0.61,
            segment: 3,
            flags: Flags::SENSOR_STALE.with(Flags::CLAMPED).0,
        };
        let s = to_experiment_sample(&stored);
        assert_eq!(
            (s.t, s.x, s.v, s.u_cmd, s.torque_sensor, s.segment),
            (0.25, -1e-3, 0.5, 0.7, 0.61, 3)
        );
        assert!(s.torque_motor.is_nan());
        assert!(s.flags.contains(Flags::SENSOR_STALE) && s.flags.contains(Flags::CLAMPED));
        // No motor torque: u is the command; stale sensor: friction is the applied torque.
        assert_eq!((s.applied_torque(), s.measured_torque()), (0.7, 0.7));
    }

    #[test]
    fn selections_parse_open_ends_and_reject_bad_ranges() {
        let sel = Selection::parse(Some("2..5"), Some("1.5..")).unwrap();
        assert_eq!(sel.segments, Some((Some(2), Some(5))));
        assert_eq!(sel.t_range, Some((Some(1.5), None)));
        assert!(sel.keeps_segment(4) && !sel.keeps_segment(5) && !sel.keeps_segment(1));
        assert_eq!(
            sel.to_json(),
            serde_json::json!({"segments": "2..5", "t_range": "1.5.."})
        );
        assert_eq!(Selection::parse(None, None).unwrap(), Selection::default());
        for (seg, t, msg) in [
            (
                Some("5..5"),
                None,
                "--segments (5..5) must be A..B with B > A (B is excluded)",
            ),
            (
                Some("x..2"),
                None,
                "--segments (x..2): 'x' is not a segment index (0, 1, ...)",
            ),
            (Some("3"), None, "--segments (3) must be A..B, A.. or ..B"),
            (
                None,
                Some("2..1"),
                "--t-range (2..1) must be A..B with B >= A",
            ),
        ] {
            let e = Selection::parse(seg, t).unwrap_err().into_cli();
            assert_eq!(e.to_string(), msg);
        }
    }
}
