//! Apache Parquet files (pyarrow, pandas, polars, Spark, `bench runs export`): top-level
//! numeric columns (floating point or integer), uncompressed or compressed with Snappy, gzip,
//! LZ4 or Zstandard, read a record batch at a time through the `parquet` crate's Arrow reader
//! with only the mapped columns decoded. A field's `unit` metadata (as `bench runs export`
//! writes it) is a stated unit.

use super::{At, ImportError, RowFn, Table, UnitClaim};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::fs::File;

/// Rows per record batch.
const BATCH_ROWS: usize = 8192;

/// A Parquet file being read.
pub(crate) struct ParquetTable {
    builder: Option<ParquetRecordBatchReaderBuilder<File>>,
    names: Vec<String>,
    units: Vec<UnitClaim>,
    rows: i64,
    row_groups: usize,
    created_by: Option<String>,
}

fn data(message: String) -> ImportError {
    ImportError::Data {
        file: String::new(),
        message,
    }
}

/// Values `i` of a numeric array as f64 (`None` for a type that is not a number).
fn to_f64(col: &ArrayRef) -> Option<Vec<f64>> {
    macro_rules! prim {
        ($t:ty) => {
            col.as_primitive_opt::<$t>()
                .map(|a| a.values().iter().map(|&v| v as f64).collect())
        };
    }
    prim!(Float64Type)
        .or_else(|| prim!(Float32Type))
        .or_else(|| prim!(Int64Type))
        .or_else(|| prim!(Int32Type))
        .or_else(|| prim!(Int16Type))
        .or_else(|| prim!(Int8Type))
        .or_else(|| prim!(UInt64Type))
        .or_else(|| prim!(UInt32Type))
        .or_else(|| prim!(UInt16Type))
        .or_else(|| prim!(UInt8Type))
}

impl ParquetTable {
    /// Opens the file at `path` (named `name` in messages) and reads its footer.
    pub(crate) fn open(path: &std::path::Path, name: &str) -> Result<ParquetTable, ImportError> {
        let file = File::open(path).map_err(|error| ImportError::Io {
            file: name.to_string(),
            error,
        })?;
        let builder = ParquetRecordBatchReaderBuilder::try_new(file)
            .map_err(|e| data(format!("not a readable Parquet file: {e}")))?;
        let schema = builder.schema().clone();
        let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
        let units = schema
            .fields()
            .iter()
            .enumerate()
            .filter_map(|(column, f)| {
                let unit = f.metadata().get("unit")?.trim();
                (!unit.is_empty()).then(|| UnitClaim {
                    column,
                    unit: unit.to_string(),
                    place: "the field metadata".into(),
                })
            })
            .collect();
        let meta = builder.metadata().file_metadata();
        let (rows, created_by) = (meta.num_rows(), meta.created_by().map(str::to_string));
        let row_groups = builder.metadata().num_row_groups();
        Ok(ParquetTable {
            builder: Some(builder),
            names,
            units,
            rows,
            row_groups,
            created_by,
        })
    }
}

impl Table for ParquetTable {
    fn names(&self) -> &[String] {
        &self.names
    }

    fn units(&self) -> Vec<UnitClaim> {
        self.units.clone()
    }

    fn details(&self) -> serde_json::Value {
        serde_json::json!({
            "rows": self.rows,
            "row_groups": self.row_groups,
            "created_by": self.created_by,
        })
    }

    fn read(&mut self, picks: &[usize], row: &mut RowFn<'_>) -> Result<(), ImportError> {
        let builder = self
            .builder
            .take()
            .ok_or_else(|| data("BUG: the Parquet file was read twice".into()))?;
        let mask = ProjectionMask::roots(builder.parquet_schema(), picks.iter().copied());
        let reader = builder
            .with_projection(mask)
            .with_batch_size(BATCH_ROWS)
            .build()
            .map_err(|e| data(format!("cannot read the columns: {e}")))?;
        let mut values = vec![0.0; picks.len()];
        let mut first_row = 0u64;
        for batch in reader {
            let batch = batch.map_err(|e| data(format!("row group after row {first_row}: {e}")))?;
            let mut cols = Vec::with_capacity(picks.len());
            for &p in picks {
                let name = &self.names[p];
                let col = batch
                    .column_by_name(name)
                    .ok_or_else(|| data(format!("column '{name}' is not a top-level column")))?;
                if col.null_count() > 0 {
                    let i = (0..col.len()).find(|&i| col.is_null(i)).unwrap_or(0);
                    return Err(data(format!(
                        "row {}, column '{name}': empty (null)",
                        first_row + i as u64 + 1
                    )));
                }
                cols.push(to_f64(col).ok_or_else(|| {
                    data(format!(
                        "column '{name}' holds {}, not numbers",
                        col.data_type()
                    ))
                })?);
            }
            for i in 0..batch.num_rows() {
                for (v, c) in values.iter_mut().zip(&cols) {
                    *v = c[i];
                }
                row(At::Row(first_row + i as u64 + 1), &values)?;
            }
            first_row += batch.num_rows() as u64;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Float32Array, Float64Array, Int64Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::arrow::ArrowWriter;
    use parquet::basic::Compression;
    use parquet::file::properties::WriterProperties;
    use std::collections::HashMap;
    use std::sync::Arc;

    fn write(path: &std::path::Path, compression: Compression, x: Vec<Option<f64>>) {
        let n = x.len();
        let unit = |u: &str| HashMap::from([("unit".to_string(), u.to_string())]);
        let schema = Arc::new(Schema::new(vec![
            Field::new("idx", DataType::Int64, false),
            Field::new("t", DataType::Float64, false).with_metadata(unit("s")),
            Field::new("x", DataType::Float64, true),
            Field::new("f", DataType::Float32, false).with_metadata(unit("N")),
        ]));
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from_iter_values(0..n as i64)),
            Arc::new(Float64Array::from_iter_values(
                (0..n).map(|k| k as f64 * 1e-3),
            )),
            Arc::new(Float64Array::from(x)),
            Arc::new(Float32Array::from_iter_values(
                (0..n).map(|k| k as f32 * 0.5),
            )),
        ];
        let props = WriterProperties::builder()
            .set_compression(compression)
            .set_max_row_group_row_count(Some(5000))
            .build();
        let mut w =
            ArrowWriter::try_new(File::create(path).unwrap(), schema.clone(), Some(props)).unwrap();
        w.write(&RecordBatch::try_new(schema, cols).unwrap())
            .unwrap();
        w.close().unwrap();
    }

    #[test]
    fn compressed_files_read_column_by_name_with_units_from_metadata() {
        let dir = tempfile::tempdir().unwrap();
        for (k, c) in [
            Compression::SNAPPY,
            Compression::ZSTD(Default::default()),
            Compression::GZIP(Default::default()),
            Compression::LZ4_RAW,
            Compression::UNCOMPRESSED,
        ]
        .into_iter()
        .enumerate()
        {
            let path = dir.path().join(format!("{k}.parquet"));
            write(&path, c, (0..12_000).map(|k| Some(k as f64)).collect());
            let mut t = ParquetTable::open(&path, "r.parquet").unwrap();
            assert_eq!(t.names(), ["idx", "t", "x", "f"]);
            let units: Vec<(usize, String)> =
                t.units().into_iter().map(|c| (c.column, c.unit)).collect();
            assert_eq!(units, [(1, "s".to_string()), (3, "N".to_string())]);
            let mut got = Vec::new();
            t.read(&[3, 1, 0], &mut |at, v| {
                got.push((at, v.to_vec()));
                Ok(())
            })
            .unwrap();
            assert_eq!(got.len(), 12_000, "{c:?}");
            assert_eq!(
                got[10_001],
                (At::Row(10_002), vec![5000.5, 10.001, 10_001.0])
            );
        }
    }

    #[test]
    fn nulls_name_their_row() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("n.parquet");
        let mut x: Vec<Option<f64>> = (0..100).map(|k| Some(k as f64)).collect();
        x[41] = None;
        write(&path, Compression::SNAPPY, x);
        let mut t = ParquetTable::open(&path, "n.parquet").unwrap();
        let err = t.read(&[1, 2], &mut |_, _| Ok(())).unwrap_err();
        assert_eq!(err.to_string(), ": row 42, column 'x': empty (null)");
    }
}
