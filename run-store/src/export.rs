//! Whole-run export: CSV and JSON, streamed page by page.
//!
//! Both have the same columns: `idx, t, x, v, u_cmd, torque_motor, torque_sensor, segment,
//! flags`, then one column per lockstep model output (named by model id). NaN is an empty CSV
//! field and JSON `null`. The JSON document is
//! `{"run": {...}, "columns": [...], "rows": [[...], ...]}`.
//!
//! With [`ExportOptions::units`] the CSV starts with one comment line, `# units: ` then the unit
//! of every column in column order (`1` for dimensionless counters), and the JSON document gets a
//! `"units"` array after `"columns"`. Without it both are byte-identical to earlier releases.

use crate::store::Select;
use crate::types::SampleSet;
use crate::{Error, Store};
use std::io::Write;

/// The sample columns before the model outputs.
pub const SAMPLE_COLUMNS: [&str; 9] = [
    "idx",
    "t",
    "x",
    "v",
    "u_cmd",
    "torque_motor",
    "torque_sensor",
    "segment",
    "flags",
];

/// Units of [`SAMPLE_COLUMNS`], in the same order (bench units of a rotary bench; `1` =
/// dimensionless). `u_cmd` is the drive command, whose unit is the segment's drive mode: torque
/// (N m), velocity (rad/s) or position (rad).
pub const SAMPLE_UNITS: [&str; 9] = [
    "1",
    "s",
    "rad",
    "rad/s",
    COMMAND_UNIT,
    "N m",
    "N m",
    "1",
    "1",
];

/// The unit of `u_cmd`: it depends on each segment's drive mode.
pub const COMMAND_UNIT: &str = "N m | rad/s | rad";

/// The unit of a lockstep model's output column: `ID:x_plant` is the model-predicted position
/// (rad), every other output a predicted friction torque (N m).
pub fn model_unit(column: &str) -> &'static str {
    if column.ends_with(":x_plant") {
        "rad"
    } else {
        "N m"
    }
}

/// Every export column with its unit: the sample columns, then one per model output.
pub fn column_units(models: &[String]) -> Vec<(String, &'static str)> {
    SAMPLE_COLUMNS
        .iter()
        .zip(SAMPLE_UNITS)
        .map(|(c, u)| (c.to_string(), u))
        .chain(models.iter().map(|m| (m.clone(), model_unit(m))))
        .collect()
}

/// Options of an export beyond its format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExportOptions {
    /// Add the units: a `# units: ...` comment line before the CSV header, a `"units"` array
    /// in the JSON document.
    pub units: bool,
}

/// Sample indices per page (whole chunks whose first index falls in the page).
const PAGE: i64 = 20_000;

/// Export format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Comma-separated values with a header line.
    Csv,
    /// One JSON document with the run record.
    Json,
}

fn csv_field(w: &mut impl Write, v: f64) -> std::io::Result<()> {
    // `{}` on f64 prints the shortest text that reads back to the same value.
    if v.is_nan() { Ok(()) } else { write!(w, "{v}") }
}

fn json_num(v: f64) -> serde_json::Value {
    serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, serde_json::Value::Number)
}

fn csv_escape(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl Store {
    /// Writes every sample of `run` with its model outputs to `out`; returns the rows written.
    pub async fn export(
        &self,
        run: i64,
        format: Format,
        out: &mut impl Write,
    ) -> Result<u64, Error> {
        self.export_with(run, format, ExportOptions::default(), out)
            .await
    }

    /// [`Store::export`] with options (units).
    pub async fn export_with(
        &self,
        run: i64,
        format: Format,
        opts: ExportOptions,
        out: &mut impl Write,
    ) -> Result<u64, Error> {
        let record = self.run(run).await?;
        let mut models = record.models.clone();
        // Outputs of models not in the run record (should not happen) still get a column.
        let extra: Vec<String> = sqlx::query_scalar(
            "SELECT DISTINCT model FROM model_outputs WHERE run_id = ? ORDER BY model",
        )
        .bind(run)
        .fetch_all(self.reader())
        .await?;
        for id in extra {
            if !models.contains(&id) {
                models.push(id);
            }
        }
        let last: Option<i64> =
            sqlx::query_scalar("SELECT max(idx0) FROM samples WHERE run_id = ?")
                .bind(run)
                .fetch_one(self.reader())
                .await?;
        let columns: Vec<&str> = SAMPLE_COLUMNS
            .iter()
            .copied()
            .chain(models.iter().map(String::as_str))
            .collect();
        match format {
            Format::Csv => {
                if opts.units {
                    let units: Vec<String> = column_units(&models)
                        .iter()
                        .map(|(_, u)| csv_escape(u))
                        .collect();
                    writeln!(out, "# units: {}", units.join(","))?;
                }
                let header: Vec<String> = columns.iter().map(|c| csv_escape(c)).collect();
                writeln!(out, "{}", header.join(","))?;
            }
            Format::Json => {
                write!(out, "{{\"run\":")?;
                serde_json::to_writer(&mut *out, &record)?;
                write!(out, ",\"columns\":")?;
                serde_json::to_writer(&mut *out, &columns)?;
                if opts.units {
                    let units: Vec<&str> = column_units(&models).iter().map(|c| c.1).collect();
                    write!(out, ",\"units\":")?;
                    serde_json::to_writer(&mut *out, &units)?;
                }
                write!(out, ",\"rows\":[")?;
            }
        }
        let mut rows = 0_u64;
        let mut lo = 0_i64;
        while let Some(last) = last.filter(|&last| lo <= last) {
            let hi = (lo + PAGE).min(last + 1);
            let set = self
                .read_chunks(run, models.clone(), Select::Idx0 { lo, hi }, 1)
                .await?;
            match format {
                Format::Csv => write_csv(out, &set)?,
                Format::Json => write_json(out, &set, rows == 0)?,
            }
            rows += set.samples.len() as u64;
            lo = hi;
        }
        if format == Format::Json {
            writeln!(out, "]}}")?;
        }
        out.flush()?;
        Ok(rows)
    }
}

fn write_csv(out: &mut impl Write, set: &SampleSet) -> Result<(), Error> {
    for (i, s) in set.samples.iter().enumerate() {
        write!(out, "{}", set.idx[i])?;
        for v in [s.t, s.x, s.v, s.u_cmd, s.torque_motor, s.torque_sensor] {
            out.write_all(b",")?;
            csv_field(out, v)?;
        }
        write!(out, ",{},{}", s.segment, s.flags)?;
        for &f in set.outputs_at(i) {
            out.write_all(b",")?;
            csv_field(out, f)?;
        }
        out.write_all(b"\n")?;
    }
    Ok(())
}

fn write_json(out: &mut impl Write, set: &SampleSet, first_page: bool) -> Result<(), Error> {
    for (i, s) in set.samples.iter().enumerate() {
        if !(first_page && i == 0) {
            out.write_all(b",")?;
        }
        let mut row = Vec::with_capacity(SAMPLE_COLUMNS.len() + set.models.len());
        row.push(serde_json::Value::from(set.idx[i]));
        row.extend(
            [s.t, s.x, s.v, s.u_cmd, s.torque_motor, s.torque_sensor]
                .into_iter()
                .map(json_num),
        );
        row.push(s.segment.into());
        row.push(s.flags.into());
        row.extend(set.outputs_at(i).iter().map(|&f| json_num(f)));
        serde_json::to_writer(&mut *out, &row)?;
    }
    Ok(())
}
