//! `GET /api/runs/{id}/export?format=parquet`: a run's samples and model outputs as one Parquet
//! file (one row group, uncompressed), written with the `parquet` crate's low-level column
//! writers (no Arrow). Columns: `idx` (INT64), `t, x, v, u_cmd, torque_motor, torque_sensor`
//! (DOUBLE, SI units), `segment, flags` (INT32, the stored u32 bits), then one DOUBLE column per
//! lockstep model (NaN where it produced nothing). Model ids are used as column names with any
//! character outside `[A-Za-z0-9_]` replaced by `_`.

use parquet::data_type::{DoubleType, Int32Type, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use run_store::SampleSet;
use std::sync::Arc;

/// The Parquet file of a sample set.
pub fn write(set: &SampleSet) -> anyhow::Result<Vec<u8>> {
    let names: Vec<String> = set
        .models
        .iter()
        .map(|m| {
            m.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect()
        })
        .collect();
    let mut message = String::from(
        "message run { REQUIRED INT64 idx; REQUIRED DOUBLE t; REQUIRED DOUBLE x; \
         REQUIRED DOUBLE v; REQUIRED DOUBLE u_cmd; REQUIRED DOUBLE torque_motor; \
         REQUIRED DOUBLE torque_sensor; REQUIRED INT32 segment; REQUIRED INT32 flags;",
    );
    for (k, n) in names.iter().enumerate() {
        // A model id that starts with a digit still makes a valid column name this way.
        message.push_str(&format!(" REQUIRED DOUBLE m{k}_{n};"));
    }
    message.push_str(" }");
    let schema = Arc::new(parse_message_type(&message)?);
    let props = Arc::new(WriterProperties::builder().build());
    let mut w = SerializedFileWriter::new(Vec::new(), schema, props)?;
    let mut rg = w.next_row_group()?;
    let s = &set.samples;
    let doubles: [fn(&run_store::Sample) -> f64; 6] = [
        |s| s.t,
        |s| s.x,
        |s| s.v,
        |s| s.u_cmd,
        |s| s.torque_motor,
        |s| s.torque_sensor,
    ];
    let mut k = 0usize;
    while let Some(mut col) = rg.next_column()? {
        match k {
            0 => {
                let idx: Vec<i64> = set.idx.iter().map(|&i| i as i64).collect();
                col.typed::<Int64Type>().write_batch(&idx, None, None)?;
            }
            1..=6 => {
                let v: Vec<f64> = s.iter().map(doubles[k - 1]).collect();
                col.typed::<DoubleType>().write_batch(&v, None, None)?;
            }
            7 | 8 => {
                let v: Vec<i32> = s
                    .iter()
                    .map(|s| (if k == 7 { s.segment } else { s.flags }) as i32)
                    .collect();
                col.typed::<Int32Type>().write_batch(&v, None, None)?;
            }
            _ => {
                let m = k - 9;
                let v: Vec<f64> = (0..s.len()).map(|i| set.outputs_at(i)[m]).collect();
                col.typed::<DoubleType>().write_batch(&v, None, None)?;
            }
        }
        col.close()?;
        k += 1;
    }
    rg.close()?;
    Ok(w.into_inner()?)
}

#[cfg(test)]
mod tests {
    use parquet::file::reader::{FileReader, SerializedFileReader};

    #[test]
    fn a_sample_set_becomes_a_parquet_file_with_its_rows() {
        let set = run_store::SampleSet {
            models: vec!["lugre".into(), "coulomb-viscous".into()],
            idx: vec![0, 1, 2],
            samples: vec![run_store::Sample::default(); 3],
            outputs: vec![0.5; 6],
        };
        let bytes = super::write(&set).unwrap();
        assert_eq!(&bytes[..4], b"PAR1");
        assert_eq!(&bytes[bytes.len() - 4..], b"PAR1");
        let mut file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut file, &bytes).unwrap();
        let reader = SerializedFileReader::new(file).unwrap();
        let meta = reader.metadata().file_metadata();
        assert_eq!(meta.num_rows(), 3);
        assert_eq!(meta.schema_descr().num_columns(), 11);
    }
}
