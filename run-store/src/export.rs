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

use crate::backend::on;
use crate::store::Select;
use crate::types::{SampleQuery, SampleSet};
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

/// A run's samples a page at a time (whole chunks whose first index falls in the page): what
/// an export holds at once, however long the run.
#[derive(Debug)]
pub struct SamplePages {
    store: Store,
    run: i64,
    models: Vec<String>,
    select: Select,
    every: u64,
    next: i64,
    last: Option<i64>,
}

impl SamplePages {
    /// The model output columns every page carries (the run's models, then any other model
    /// with stored outputs).
    pub fn models(&self) -> &[String] {
        &self.models
    }

    /// The next page with samples; `None` after the last.
    pub async fn next_page(&mut self) -> Result<Option<SampleSet>, Error> {
        while let Some(last) = self.last.filter(|&last| self.next <= last) {
            let lo = self.next;
            let hi = (lo + PAGE).min(last + 1);
            self.next = hi;
            let select = Select {
                idx0: Some((lo, hi)),
                ..self.select
            };
            let set = self
                .store
                .read_chunks(self.run, self.models.clone(), select, self.every)
                .await?;
            if !set.samples.is_empty() {
                return Ok(Some(set));
            }
        }
        Ok(None)
    }
}

/// CSV or JSON text of an export, piece by piece: the header, each page, the end.
#[derive(Debug)]
pub struct Encoder {
    format: Format,
    opts: ExportOptions,
    rows: u64,
}

impl Encoder {
    /// An encoder of `format`.
    pub fn new(format: Format, opts: ExportOptions) -> Encoder {
        Encoder {
            format,
            opts,
            rows: 0,
        }
    }

    /// Rows encoded so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// What comes before the rows: the CSV header (and units line), or the JSON document's
    /// run record, columns (and units).
    pub fn header(&self, record: &crate::Run, models: &[String]) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        let columns: Vec<&str> = SAMPLE_COLUMNS
            .iter()
            .copied()
            .chain(models.iter().map(String::as_str))
            .collect();
        match self.format {
            Format::Csv => {
                if self.opts.units {
                    let units: Vec<String> = column_units(models)
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
                serde_json::to_writer(&mut out, record)?;
                write!(out, ",\"columns\":")?;
                serde_json::to_writer(&mut out, &columns)?;
                if self.opts.units {
                    let units: Vec<&str> = column_units(models).iter().map(|c| c.1).collect();
                    write!(out, ",\"units\":")?;
                    serde_json::to_writer(&mut out, &units)?;
                }
                write!(out, ",\"rows\":[")?;
            }
        }
        Ok(out)
    }

    /// The rows of one page.
    pub fn page(&mut self, set: &SampleSet) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        match self.format {
            Format::Csv => write_csv(&mut out, set)?,
            Format::Json => write_json(&mut out, set, self.rows == 0)?,
        }
        self.rows += set.samples.len() as u64;
        Ok(out)
    }

    /// What comes after the rows.
    pub fn end(&self) -> Vec<u8> {
        match self.format {
            Format::Csv => Vec::new(),
            Format::Json => b"]}\n".to_vec(),
        }
    }
}

impl Store {
    /// Every sample of `run` that `q` selects, a page at a time.
    pub async fn sample_pages(&self, run: i64, q: &SampleQuery) -> Result<SamplePages, Error> {
        crate::store::check_query(q)?;
        let mut models = self.run_models(run).await?;
        // Outputs of models not in the run record (should not happen) still get a column.
        let (extra, last): (Vec<String>, Option<i64>) = on!(self.reader(), |p, DB| {
            let extra = sqlx::query_scalar(
                "SELECT DISTINCT model FROM model_outputs WHERE run_id = $1 ORDER BY model",
            )
            .bind(run)
            .fetch_all(p)
            .await?;
            let last = sqlx::query_scalar("SELECT max(idx0) FROM samples WHERE run_id = $1")
                .bind(run)
                .fetch_one(p)
                .await?;
            (extra, last)
        });
        // An archived run: its file's model columns and last index.
        let (extra, last) = match self.archive_of(run).await? {
            Some(a) => (a.model_columns(), a.last_idx),
            None => (extra, last),
        };
        for id in extra {
            if !models.contains(&id) {
                models.push(id);
            }
        }
        Ok(SamplePages {
            store: self.clone(),
            run,
            models,
            select: Select {
                idx0: None,
                from: q.from_t,
                to: q.to_t,
            },
            every: q.every.max(1),
            next: 0,
            last,
        })
    }

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
        let mut pages = self.sample_pages(run, &SampleQuery::default()).await?;
        let mut encoder = Encoder::new(format, opts);
        out.write_all(&encoder.header(&record, pages.models())?)?;
        while let Some(set) = pages.next_page().await? {
            out.write_all(&encoder.page(&set)?)?;
        }
        out.write_all(&encoder.end())?;
        out.flush()?;
        Ok(encoder.rows())
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
