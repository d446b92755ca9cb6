//! An archived run's samples read back from its Parquet file: the rows a page or a time range
//! selects (row groups pruned by their `idx` and `t` statistics), or every row for the check
//! that precedes deleting the database's copy.

use super::file::{F32_COLUMNS, RowHash, parquet_error};
use crate::Error;
use crate::store::Select;
use crate::types::{Sample, SampleSet};
use arrow_array::{Array, Float32Array, Float64Array, Int64Array, RecordBatch, UInt32Array};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::metadata::RowGroupMetaData;
use parquet::file::statistics::Statistics;
use std::path::Path;

/// Rows decoded at a time.
const BATCH: usize = 65_536;

/// The samples of the file at `path` that `select` picks whose index is a multiple of
/// `every`, with the outputs of `models` (NaN for a model the file does not carry).
pub(crate) fn read(
    path: &Path,
    models: &[String],
    select: Select,
    every: u64,
) -> Result<SampleSet, Error> {
    let mut set = SampleSet {
        models: models.to_vec(),
        ..SampleSet::default()
    };
    let every = every.max(1);
    let Select { idx0, from, to } = select;
    for_each_batch(path, select, |b| {
        let cols = Columns::of(b, models)?;
        for i in 0..b.num_rows() {
            let idx = cols.idx.value(i) as u64;
            let t = cols.t.value(i);
            let in_page = idx0.is_none_or(|(lo, hi)| (lo..hi).contains(&(idx as i64)));
            let in_time = from.is_none_or(|f| t >= f && !t.is_nan()) && to.is_none_or(|to| t <= to);
            if !in_page || !in_time || !idx.is_multiple_of(every) {
                continue;
            }
            set.idx.push(idx);
            set.samples.push(cols.sample(i));
            for m in &cols.models {
                set.outputs.push(m.map_or(f64::NAN, |m| m.value(i) as f64));
            }
        }
        Ok(())
    })?;
    Ok(set)
}

/// Every row of the file: its count and checksum ([`RowHash`]), with the outputs of `models`.
pub(crate) fn checksum(path: &Path, models: &[String]) -> Result<(u64, String), Error> {
    let mut hash = RowHash::default();
    let mut rows = 0;
    for_each_batch(path, Select::default(), |b| {
        let cols = Columns::of(b, models)?;
        let mut m = vec![0f32; models.len()];
        for i in 0..b.num_rows() {
            for (slot, c) in m.iter_mut().zip(&cols.models) {
                *slot = c.map_or(f32::NAN, |c| c.value(i));
            }
            let f = |k: usize| cols.f32s[k].value(i);
            let seg = cols.u32s[0].value(i);
            let flags = cols.u32s[1].value(i);
            let (idx, t) = (cols.idx.value(i) as u64, cols.t.value(i));
            hash.row(idx, t, [f(0), f(1), f(2), f(3), f(4)], seg, flags, &m);
        }
        rows += b.num_rows() as u64;
        Ok(())
    })?;
    Ok((rows, hash.hex()))
}

/// The record batches of the row groups `select` may touch.
fn for_each_batch(
    path: &Path,
    select: Select,
    mut f: impl FnMut(&RecordBatch) -> Result<(), Error>,
) -> Result<(), Error> {
    let file = std::fs::File::open(path).map_err(|e| {
        std::io::Error::new(e.kind(), format!("archive file {}: {e}", path.display()))
    })?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(parquet_error)?;
    let groups: Vec<usize> = builder
        .metadata()
        .row_groups()
        .iter()
        .enumerate()
        .filter(|(_, g)| may_hold(g, select))
        .map(|(k, _)| k)
        .collect();
    // Everything but `run_id` (the first column), which the path already says.
    let n = builder.parquet_schema().num_columns();
    let mask = ProjectionMask::leaves(builder.parquet_schema(), 1..n);
    let reader = builder
        .with_row_groups(groups)
        .with_projection(mask)
        .with_batch_size(BATCH)
        .build()
        .map_err(parquet_error)?;
    for batch in reader {
        f(&batch.map_err(parquet_error)?)?;
    }
    Ok(())
}

/// Whether row group `g` may hold rows of `select`, by its `idx` (column 1) and `t` (column
/// 2) statistics; a group without statistics is read.
fn may_hold(g: &RowGroupMetaData, select: Select) -> bool {
    let idx = match g.column(1).statistics() {
        Some(Statistics::Int64(s)) => s.min_opt().zip(s.max_opt()).map(|(a, b)| (*a, *b)),
        _ => None,
    };
    let t = match g.column(2).statistics() {
        Some(Statistics::Double(s)) => s.min_opt().zip(s.max_opt()).map(|(a, b)| (*a, *b)),
        _ => None,
    };
    let page_ok = match (select.idx0, idx) {
        (Some((lo, hi)), Some((min, max))) => max >= lo && min < hi,
        _ => true,
    };
    let from_ok = match (select.from, t) {
        (Some(from), Some((_, max))) => max >= from,
        _ => true,
    };
    let to_ok = match (select.to, t) {
        (Some(to), Some((min, _))) => min <= to,
        _ => true,
    };
    page_ok && from_ok && to_ok
}

/// The columns of one batch, typed.
struct Columns<'a> {
    idx: &'a Int64Array,
    t: &'a Float64Array,
    f32s: Vec<&'a Float32Array>,
    u32s: Vec<&'a UInt32Array>,
    models: Vec<Option<&'a Float32Array>>,
}

impl<'a> Columns<'a> {
    fn of(b: &'a RecordBatch, models: &[String]) -> Result<Columns<'a>, Error> {
        Ok(Columns {
            idx: typed(b, "idx")?,
            t: typed(b, "t")?,
            f32s: F32_COLUMNS
                .iter()
                .map(|c| typed(b, c))
                .collect::<Result<_, _>>()?,
            u32s: ["segment", "flags"]
                .iter()
                .map(|c| typed(b, c))
                .collect::<Result<_, _>>()?,
            models: models.iter().map(|m| typed(b, m).ok()).collect(),
        })
    }

    fn sample(&self, i: usize) -> Sample {
        let f = |k: usize| self.f32s[k].value(i) as f64;
        Sample {
            t: self.t.value(i),
            x: f(0),
            v: f(1),
            u_cmd: f(2),
            torque_motor: f(3),
            torque_sensor: f(4),
            segment: self.u32s[0].value(i),
            flags: self.u32s[1].value(i),
        }
    }
}

/// Column `name` of `b` as array type `A`: an error naming the column if it is missing or of
/// another type (a file not written by `bench archive`).
fn typed<'a, A: Array + 'static>(b: &'a RecordBatch, name: &str) -> Result<&'a A, Error> {
    b.column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<A>())
        .ok_or_else(|| {
            parquet_error(format!(
                "archive file: column {name} missing or of another type"
            ))
        })
}
