//! One archived run as a Parquet file: its columns, how each is encoded, and the checksum of
//! its rows.
//!
//! Columns: `run_id` (int64, the same in every row), then the export's names: `idx` (int64),
//! `t` (double: a 12 h night at 1 kHz needs more than float32's 24 bits), `x, v, u_cmd,
//! torque_motor, torque_sensor` (float32, BYTE_STREAM_SPLIT), `segment, flags` (uint32), then,
//! with `--with-models`, one float32 column per model output. Every page is zstd-compressed.
//! BYTE_STREAM_SPLIT puts the bytes of equal significance side by side, so the slowly changing
//! sign, exponent and high mantissa bytes of a measured signal compress to almost nothing.

use crate::Error;
use crate::types::SampleSet;
use arrow_array::{ArrayRef, Float32Array, Float64Array, Int64Array, RecordBatch, UInt32Array};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::sync::Arc;

/// Rows per row group: a reader of one page of an archived run decodes at most two groups.
pub(crate) const ROW_GROUP: usize = 65_536;

/// The float32 columns (measured channels and the command).
pub(crate) const F32_COLUMNS: [&str; 5] = ["x", "v", "u_cmd", "torque_motor", "torque_sensor"];

/// zstd level 1: the byte-split streams compress nearly as well as at 3, at about twice the
/// speed (`bench perf lab` reports both figures).
const ZSTD_LEVEL: i32 = 1;

/// The file's Arrow schema for output columns `models`.
pub(crate) fn schema(models: &[String]) -> Arc<Schema> {
    let mut fields = vec![
        Field::new("run_id", DataType::Int64, false),
        Field::new("idx", DataType::Int64, false),
        Field::new("t", DataType::Float64, false),
    ];
    fields.extend(F32_COLUMNS.map(|c| Field::new(c, DataType::Float32, false)));
    fields.push(Field::new("segment", DataType::UInt32, false));
    fields.push(Field::new("flags", DataType::UInt32, false));
    fields.extend(
        models
            .iter()
            .map(|m| Field::new(m, DataType::Float32, false)),
    );
    Arc::new(Schema::new(fields))
}

fn properties(models: &[String]) -> Result<WriterProperties, Error> {
    let level = ZstdLevel::try_new(ZSTD_LEVEL).map_err(parquet_error)?;
    let mut b = WriterProperties::builder()
        .set_max_row_group_row_count(Some(ROW_GROUP))
        .set_compression(Compression::ZSTD(level))
        .set_column_dictionary_enabled(ColumnPath::from("idx"), false)
        .set_column_encoding(ColumnPath::from("idx"), Encoding::DELTA_BINARY_PACKED);
    let split = ["t"]
        .into_iter()
        .chain(F32_COLUMNS)
        .map(str::to_string)
        .chain(models.iter().cloned());
    for c in split {
        let path = ColumnPath::new(vec![c]);
        b = b
            .set_column_dictionary_enabled(path.clone(), false)
            .set_column_encoding(path, Encoding::BYTE_STREAM_SPLIT);
    }
    Ok(b.build())
}

pub(crate) fn parquet_error(e: impl std::fmt::Display) -> Error {
    Error::Io(std::io::Error::other(format!("parquet: {e}")))
}

/// The SHA-256 of the rows as they are in the file: per row, little-endian, `idx` (u64), `t`
/// (f64), the five float32 channels, `segment`, `flags` (u32), then each model output (f32).
#[derive(Default)]
pub(crate) struct RowHash {
    sha: Sha256,
    buf: Vec<u8>,
}

impl RowHash {
    /// Adds one row.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn row(
        &mut self,
        idx: u64,
        t: f64,
        f32s: [f32; 5],
        seg: u32,
        flags: u32,
        m: &[f32],
    ) {
        self.buf.extend_from_slice(&idx.to_le_bytes());
        self.buf.extend_from_slice(&t.to_le_bytes());
        for v in f32s {
            self.buf.extend_from_slice(&v.to_le_bytes());
        }
        self.buf.extend_from_slice(&seg.to_le_bytes());
        self.buf.extend_from_slice(&flags.to_le_bytes());
        for v in m {
            self.buf.extend_from_slice(&v.to_le_bytes());
        }
        if self.buf.len() >= 1 << 16 {
            self.sha.update(&self.buf);
            self.buf.clear();
        }
    }

    /// The hex digest.
    pub(crate) fn hex(mut self) -> String {
        self.sha.update(&self.buf);
        self.sha
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

impl std::fmt::Debug for RowHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RowHash")
    }
}

/// An archive file written a page of samples at a time.
pub(crate) struct FileWriter<W: Write + Send> {
    w: ArrowWriter<W>,
    schema: Arc<Schema>,
    run: i64,
    /// Which of a page's output columns the file keeps, in file order.
    keep: Vec<usize>,
    hash: RowHash,
    rows: u64,
}

impl<W: Write + Send> FileWriter<W> {
    /// A file of run `run` keeping the outputs of `models` (a subset of each page's models).
    pub(crate) fn new(out: W, run: i64, models: &[String]) -> Result<FileWriter<W>, Error> {
        let schema = schema(models);
        let w = ArrowWriter::try_new(out, schema.clone(), Some(properties(models)?))
            .map_err(parquet_error)?;
        Ok(FileWriter {
            w,
            schema,
            run,
            keep: Vec::new(),
            hash: RowHash::default(),
            rows: 0,
        })
    }

    /// Appends a page; `models` of the page must include every kept model.
    pub(crate) fn page(&mut self, set: &SampleSet) -> Result<(), Error> {
        let kept: Vec<&str> = self.schema.fields()[10..]
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        self.keep = kept
            .iter()
            .map(|k| set.models.iter().position(|m| m == k).unwrap_or(usize::MAX))
            .collect();
        let n = set.samples.len();
        let s = &set.samples;
        let f32s =
            |f: fn(&crate::Sample) -> f64| s.iter().map(|x| f(x) as f32).collect::<Vec<f32>>();
        let chans = [
            f32s(|s| s.x),
            f32s(|s| s.v),
            f32s(|s| s.u_cmd),
            f32s(|s| s.torque_motor),
            f32s(|s| s.torque_sensor),
        ];
        let outs: Vec<Vec<f32>> = self
            .keep
            .iter()
            .map(|&k| {
                (0..n)
                    .map(|i| {
                        set.outputs
                            .get(i * set.models.len() + k)
                            .map_or(f32::NAN, |&v| v as f32)
                    })
                    .collect()
            })
            .collect();
        let mut row_m = vec![0f32; outs.len()];
        for i in 0..n {
            for (slot, o) in row_m.iter_mut().zip(&outs) {
                *slot = o[i];
            }
            let c = [
                chans[0][i],
                chans[1][i],
                chans[2][i],
                chans[3][i],
                chans[4][i],
            ];
            self.hash
                .row(set.idx[i], s[i].t, c, s[i].segment, s[i].flags, &row_m);
        }
        let mut cols: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from_value(self.run, n)),
            Arc::new(Int64Array::from_iter_values(
                set.idx.iter().map(|&i| i as i64),
            )),
            Arc::new(Float64Array::from_iter_values(s.iter().map(|s| s.t))),
        ];
        for c in chans {
            cols.push(Arc::new(Float32Array::from(c)));
        }
        cols.push(Arc::new(UInt32Array::from_iter_values(
            s.iter().map(|s| s.segment),
        )));
        cols.push(Arc::new(UInt32Array::from_iter_values(
            s.iter().map(|s| s.flags),
        )));
        for o in outs {
            cols.push(Arc::new(Float32Array::from(o)));
        }
        let batch = RecordBatch::try_new(self.schema.clone(), cols).map_err(parquet_error)?;
        self.w.write(&batch).map_err(parquet_error)?;
        self.rows += n as u64;
        Ok(())
    }

    /// Writes the footer; returns the rows written, their checksum and the writer.
    pub(crate) fn finish(self) -> Result<(u64, String, W), Error> {
        let out = self.w.into_inner().map_err(parquet_error)?;
        Ok((self.rows, self.hash.hex(), out))
    }
}
