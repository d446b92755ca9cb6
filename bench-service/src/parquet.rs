//! A run's samples and model outputs as one Parquet file, for `GET /api/runs/{id}/export?format=
//! parquet` and `bench runs export --format parquet` (see docs/src/data-model.md).
//!
//! Columns are those of the CSV export, under the same names: `idx` (int64), `t, x, v, u_cmd,
//! torque_motor, torque_sensor` (double, SI bench units), `segment, flags` (uint32), then one
//! double column per lockstep model output, named by its id (NaN where it produced nothing).
//! Every field carries its unit as field metadata (`unit`); the file's key-value metadata holds
//! `frictionbench.units` (column → unit), `frictionbench.run` (the run record), `frictionbench.
//! spec` and `frictionbench.software_version` (of the software that recorded the run) and
//! `frictionbench.exported_by` (of this exporter).

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, UInt32Array};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use run_store::{Run, Sample, SampleSet};
use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

/// Rows per row group: bounds the writer's and the reader's memory on long runs (65 536 rows
/// of a dozen columns are a few MB).
const ROW_GROUP: usize = 65_536;

/// Writes the Parquet file of a run's sample set to `out`.
#[cfg(test)]
pub fn write_to<W: Write + Send>(out: W, run: &Run, set: &SampleSet) -> anyhow::Result<()> {
    let mut w = PageWriter::new(out, run, &set.models)?;
    w.page(set)?;
    w.finish()
}

/// A Parquet file written a page of samples at a time: the writer holds at most one row group.
#[allow(missing_debug_implementations)] // ArrowWriter is not Debug
pub struct PageWriter<W: Write + Send> {
    w: ArrowWriter<W>,
    schema: Arc<Schema>,
}

impl<W: Write + Send> PageWriter<W> {
    /// A file for a run whose pages carry the outputs of `models`.
    pub fn new(out: W, run: &Run, models: &[String]) -> anyhow::Result<PageWriter<W>> {
        let units = run_store::column_units(models);
        let fields: Vec<Field> = units
            .iter()
            .enumerate()
            .map(|(k, (name, unit))| {
                let ty = match k {
                    0 => DataType::Int64,
                    7 | 8 => DataType::UInt32,
                    _ => DataType::Float64,
                };
                Field::new(name, ty, false)
                    .with_metadata(HashMap::from([("unit".to_string(), unit.to_string())]))
            })
            .collect();
        let kv = file_metadata(run, &units)?;
        // Also in the Arrow schema's metadata: Arrow readers (pyarrow) take the schema's metadata
        // from there and do not merge the footer's key-value pairs into it.
        let schema_meta: HashMap<String, String> = kv
            .iter()
            .map(|e| (e.key.clone(), e.value.clone().unwrap_or_default()))
            .collect();
        let schema = Arc::new(Schema::new(fields).with_metadata(schema_meta));
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(ROW_GROUP))
            .set_key_value_metadata(Some(kv))
            .build();
        let w = ArrowWriter::try_new(out, schema.clone(), Some(props))?;
        Ok(PageWriter { w, schema })
    }

    /// Appends a page of samples (a row group is written out each `ROW_GROUP` rows).
    pub fn page(&mut self, set: &SampleSet) -> anyhow::Result<()> {
        let mut start = 0;
        while start < set.samples.len() || start == 0 {
            let end = (start + ROW_GROUP).min(set.samples.len());
            self.w.write(&batch(&self.schema, set, start..end)?)?;
            if end == set.samples.len() {
                break;
            }
            start = end;
        }
        Ok(())
    }

    /// Writes the last row group and the footer.
    pub fn finish(self) -> anyhow::Result<()> {
        self.w.close()?;
        Ok(())
    }
}

/// The file's key-value metadata.
fn file_metadata(run: &Run, units: &[(String, &str)]) -> anyhow::Result<Vec<KeyValue>> {
    let units: serde_json::Map<String, serde_json::Value> = units
        .iter()
        .map(|(c, u)| (c.clone(), serde_json::Value::from(*u)))
        .collect();
    let kv = |k: &str, v: String| KeyValue::new(format!("frictionbench.{k}"), v);
    Ok(vec![
        kv("units", serde_json::to_string(&units)?),
        kv("run", serde_json::to_string(run)?),
        kv("spec", serde_json::to_string(&run.spec)?),
        kv("software_version", run.software_version.clone()),
        kv(
            "exported_by",
            format!("frictionbench {}", env!("CARGO_PKG_VERSION")),
        ),
    ])
}

/// Rows `range` of the set as one record batch.
fn batch(
    schema: &Arc<Schema>,
    set: &SampleSet,
    range: std::ops::Range<usize>,
) -> anyhow::Result<RecordBatch> {
    let s = &set.samples[range.clone()];
    let f64s = |f: fn(&Sample) -> f64| -> ArrayRef {
        Arc::new(Float64Array::from_iter_values(s.iter().map(f)))
    };
    let mut cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(
            set.idx[range.clone()].iter().map(|&i| i as i64),
        )),
        f64s(|s| s.t),
        f64s(|s| s.x),
        f64s(|s| s.v),
        f64s(|s| s.u_cmd),
        f64s(|s| s.torque_motor),
        f64s(|s| s.torque_sensor),
        Arc::new(UInt32Array::from_iter_values(s.iter().map(|s| s.segment))),
        Arc::new(UInt32Array::from_iter_values(s.iter().map(|s| s.flags))),
    ];
    for m in 0..set.models.len() {
        cols.push(Arc::new(Float64Array::from_iter_values(
            range.clone().map(|i| set.outputs_at(i)[m]),
        )));
    }
    Ok(RecordBatch::try_new(schema.clone(), cols)?)
}

#[cfg(test)]
mod tests {
    use parquet::file::reader::{FileReader, SerializedFileReader};

    fn run(models: &[&str]) -> run_store::Run {
        serde_json::from_value(serde_json::json!({
            "id": 7, "bench_id": "sim", "kind": "prbs", "name": "n", "status": "completed", "status_reason": null,
            "created_at": "2026-11-23T00:00:00Z", "started_at": null, "finished_at": null,
            "spec": {"kind": "prbs", "params": {"amplitude": 0.5}}, "bench_config": {},
            "device_profiles": {}, "software_version": "0.1.0", "operator_note": null,
            "models": models, "period_s": 0.001, "timing": {"overruns": 0}, "dropped_batches": 0,
            "dropped_samples": 0, "sample_count": 3, "interruption_log": [], "results": null
        }))
        .unwrap()
    }

    #[test]
    fn a_sample_set_becomes_a_parquet_file_with_csv_column_names_and_units() {
        let models = ["lugre", "coulomb-viscous", "gms:x_plant"];
        let set = run_store::SampleSet {
            models: models.iter().map(|m| m.to_string()).collect(),
            idx: vec![0, 1, 2],
            samples: vec![run_store::Sample::default(); 3],
            outputs: vec![0.5; 9],
        };
        let mut bytes = Vec::new();
        super::write_to(&mut bytes, &run(&models), &set).unwrap();
        assert_eq!(&bytes[..4], b"PAR1");
        assert_eq!(&bytes[bytes.len() - 4..], b"PAR1");
        let reader = SerializedFileReader::new(axum::body::Bytes::from(bytes)).unwrap();
        let meta = reader.metadata().file_metadata();
        assert_eq!(meta.num_rows(), 3);
        let names: Vec<&str> = meta
            .schema_descr()
            .columns()
            .iter()
            .map(|c| c.name())
            .collect();
        let mut want = run_store::SAMPLE_COLUMNS.to_vec();
        want.extend(models);
        assert_eq!(names, want);
        let kv: std::collections::HashMap<&str, &str> = meta
            .key_value_metadata()
            .unwrap()
            .iter()
            .map(|kv| (kv.key.as_str(), kv.value.as_deref().unwrap_or("")))
            .collect();
        let units: serde_json::Value = serde_json::from_str(kv["frictionbench.units"]).unwrap();
        assert_eq!(units["t"], "s");
        assert_eq!(units["v"], "rad/s");
        assert_eq!(units["lugre"], "N m");
        assert_eq!(units["gms:x_plant"], "rad");
        let spec: serde_json::Value = serde_json::from_str(kv["frictionbench.spec"]).unwrap();
        assert_eq!(spec["params"]["amplitude"], 0.5);
        assert_eq!(kv["frictionbench.software_version"], "0.1.0");
        assert!(
            kv.contains_key("ARROW:schema"),
            "field metadata travels in the Arrow schema"
        );
        let keys = meta.key_value_metadata().unwrap().len();
        assert_eq!(keys, kv.len(), "no key twice");
    }
}
