//! One import from file to stored run: the format chosen, the columns and units checked
//! before anything is stored, then a run of kind `imported` created and filled through the
//! run recorder (chunks committed as they come, as a recording run's are). A refused row
//! deletes the run, so a refused import stores nothing; an import whose process dies is
//! deleted when the store is next opened for recording.

use super::csv::CsvTable;
use super::mat::MatTable;
use super::options::{Format, ImportOptions, Mapping, Role};
use super::parquet::ParquetTable;
use super::sink::{Sink, Stats};
use super::units::{self, Units};
use super::{ImportError, Table};
use run_store::{
    Batch, Finish, IMPORTED_KIND, NewRun, Reason, ReasonCode, Recorder, RecorderConfig, RunStatus,
    Store,
};
use serde::Serialize;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::PathBuf;
use std::time::Instant;
use tokio::runtime::Handle;

/// Batches waiting for the recorder's writer: with 4096-sample batches, about 1 MB in flight.
const CHANNEL_BATCHES: usize = 4;

/// The file to import.
#[derive(Clone, Debug)]
pub struct Source {
    /// Where it is.
    pub path: PathBuf,
    /// Its name as the user knows it (provenance, the format from its extension, messages).
    pub file_name: String,
    /// Its size and SHA-256 (hex) when already known (an upload hashed as it arrived).
    pub digest: Option<(u64, String)>,
}

/// What an import stored (`bench runs import --json`, the answer of `POST /api/runs/import`).
#[derive(Clone, Debug, Serialize)]
pub struct ImportReport {
    /// The new run's id.
    pub run_id: i64,
    /// Its name.
    pub name: String,
    /// Its kind (`imported`).
    pub kind: &'static str,
    /// The source file: `file`, `bytes`, `sha256`, `format` and how it was read.
    pub source: Value,
    /// File column of each mapped role.
    pub columns: Map<String, Value>,
    /// Scale factor of each scaled role.
    pub scales: Map<String, Value>,
    /// Stored (SI) unit of each mapped role.
    pub units: Map<String, Value>,
    /// Unit the file stated for each mapped role that had one.
    pub stated_units: Map<String, Value>,
    /// `rotary` or `linear`.
    pub geometry: &'static str,
    /// Where the geometry came from (`--geometry`, `the file's units`, `default`).
    pub geometry_source: &'static str,
    /// The recording's time stamps and ranges.
    pub stats: Stats,
    /// Wall time of the import \[s\].
    pub seconds: f64,
    /// File megabytes (10^6 bytes) per second.
    pub mb_per_s: f64,
}

impl ImportError {
    /// The error with `name` as the file of a data or I/O error that has none yet.
    fn in_file(self, name: &str) -> ImportError {
        match self {
            ImportError::Data { file, message } if file.is_empty() => ImportError::Data {
                file: name.to_string(),
                message,
            },
            ImportError::Io { file, error } if file.is_empty() => ImportError::Io {
                file: name.to_string(),
                error,
            },
            e => e,
        }
    }
}

/// Size and SHA-256 (hex) of the file at `path`.
fn hash_file(path: &std::path::Path) -> std::io::Result<(u64, String)> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut bytes = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        bytes += n as u64;
    }
    Ok((bytes, format!("{:x}", hasher.finalize())))
}

/// The format: as asked, else from the file name's extension, else from the first bytes.
fn choose_format(asked: Option<Format>, source: &Source) -> Result<Format, ImportError> {
    if let Some(f) = asked.or_else(|| Format::from_name(&source.file_name)) {
        return Ok(f);
    }
    let mut head = [0u8; 8];
    let n = std::fs::File::open(&source.path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|error| ImportError::Io {
            file: source.file_name.clone(),
            error,
        })?;
    Format::sniff(&head[..n]).ok_or_else(|| {
        ImportError::option(
            "format",
            format!(
                "cannot tell the format of '{}' from its name: give --format csv, mat or parquet",
                source.file_name
            ),
        )
    })
}

fn open_table(format: Format, source: &Source) -> Result<Box<dyn Table>, ImportError> {
    let name = &source.file_name;
    Ok(match format {
        Format::Csv => {
            let file = std::fs::File::open(&source.path).map_err(|error| ImportError::Io {
                file: name.clone(),
                error,
            })?;
            Box::new(CsvTable::open(file, name)?)
        }
        Format::Mat => Box::new(MatTable::open(&source.path, name)?),
        Format::Parquet => Box::new(ParquetTable::open(&source.path, name)?),
    })
}

/// Imports `source` into `store` on the runtime `rt` (this thread blocks: call it from a
/// blocking thread, or use [`import`]).
pub fn import_blocking(
    rt: &Handle,
    store: &Store,
    source: &Source,
    opts: &ImportOptions,
) -> Result<ImportReport, ImportError> {
    let name = source.file_name.as_str();
    let t0 = Instant::now();
    let prepared = prepare(source, opts).map_err(|e| e.in_file(name))?;
    let Prepared {
        mut table,
        map,
        units,
        names,
        report,
        run,
    } = prepared;
    let id = rt.block_on(store.create_run(&run))?;
    match record(rt, store, id, &mut *table, &map, &names) {
        Ok(stats) => {
            let seconds = t0.elapsed().as_secs_f64();
            let bytes = report.source["bytes"].as_f64().unwrap_or(0.0);
            Ok(ImportReport {
                run_id: id,
                stats,
                seconds,
                mb_per_s: bytes / 1e6 / seconds.max(1e-9),
                geometry: units.geometry.name(),
                geometry_source: units.geometry_source,
                ..report
            })
        }
        Err(e) => {
            // Nothing of a refused import stays.
            if let Err(del) = rt.block_on(store.delete_run(id)) {
                tracing::warn!("run {id}: deleting the refused import failed: {del}");
            }
            Err(e.in_file(name))
        }
    }
}

/// Imports `source` into `store` on a blocking thread of the current runtime.
pub async fn import(
    store: &Store,
    source: Source,
    opts: ImportOptions,
) -> Result<ImportReport, ImportError> {
    let store = store.clone();
    let rt = Handle::current();
    tokio::task::spawn_blocking(move || import_blocking(&rt, &store, &source, &opts))
        .await
        .map_err(|e| ImportError::Io {
            file: String::new(),
            error: std::io::Error::other(format!("the import task ended: {e}")),
        })?
}

/// Everything checked before a run is created.
struct Prepared {
    table: Box<dyn Table>,
    map: Mapping,
    units: Units,
    names: Vec<String>,
    /// The report without the run's id and statistics.
    report: ImportReport,
    run: NewRun,
}

/// Hashes the file, opens it, maps its columns and checks its units.
fn prepare(source: &Source, opts: &ImportOptions) -> Result<Prepared, ImportError> {
    let io = |error| ImportError::Io {
        file: source.file_name.clone(),
        error,
    };
    let format = choose_format(opts.format, source)?;
    let (bytes, sha256) = match &source.digest {
        Some(d) => d.clone(),
        None => hash_file(&source.path).map_err(io)?,
    };
    let table = open_table(format, source)?;
    let names = table.names().to_vec();
    let map = opts.mapping(&names)?;
    let units = units::resolve(&table.units(), &names, &map, opts.geometry)?;
    let by_role = |f: &dyn Fn(Role) -> Option<Value>| -> Map<String, Value> {
        Role::ALL
            .into_iter()
            .filter(|r| map.cols[r.index()].is_some())
            .filter_map(|r| f(r).map(|v| (r.name().to_string(), v)))
            .collect()
    };
    let columns = by_role(&|r| map.cols[r.index()].map(|c| json!(names[c])));
    let scales = by_role(&|r| {
        let f = map.scales[r.index()];
        (f != 1.0).then(|| json!(f))
    });
    let si = by_role(&|r| Some(json!(r.unit(units.geometry))));
    let stated = by_role(&|r| units.stated[r.index()].clone().map(Value::from));
    let run_name = opts
        .name
        .clone()
        .unwrap_or_else(|| source.file_name.clone());
    let source_doc = json!({
        "file": source.file_name, "bytes": bytes, "sha256": sha256, "format": format.name(),
        "read": table.details(),
    });
    let spec = json!({
        "kind": IMPORTED_KIND,
        "name": run_name,
        "source": source_doc,
        "columns": columns,
        "scales": scales,
        "units": si,
        "stated_units": stated,
        "geometry": units.geometry.name(),
        "geometry_source": units.geometry_source,
        "stored_as": {"t": "t", "x": "x", "v": "v", "u": "torque_motor", "friction": "torque_sensor"},
    });
    let mut bench_config = json!({"geometry": units.geometry.name(), "imported": true});
    if let Some(b) = &opts.bench {
        bench_config["bench_id"] = json!(b);
    }
    let run = NewRun {
        kind: IMPORTED_KIND.into(),
        name: run_name.clone(),
        spec,
        bench_config,
        software_version: env!("CARGO_PKG_VERSION").into(),
        ..NewRun::default()
    };
    let report = ImportReport {
        run_id: 0,
        name: run_name,
        kind: IMPORTED_KIND,
        source: source_doc,
        columns,
        scales,
        units: si,
        stated_units: stated,
        geometry: units.geometry.name(),
        geometry_source: units.geometry_source,
        stats: Stats::default(),
        seconds: 0.0,
        mb_per_s: 0.0,
    };
    Ok(Prepared {
        table,
        map,
        units,
        names,
        report,
        run,
    })
}

/// Reads every row of `table` into run `id` through a recorder; stores the statistics as the
/// run's results and closes it `completed`, or closes it `failed` on the first refusal.
fn record(
    rt: &Handle,
    store: &Store,
    id: i64,
    table: &mut dyn Table,
    map: &Mapping,
    names: &[String],
) -> Result<Stats, ImportError> {
    let config = RecorderConfig {
        channel_capacity: CHANNEL_BATCHES,
        ..RecorderConfig::default()
    };
    let recorder = rt.block_on(Recorder::start(store, id, config))?;
    let tx = recorder.sender();
    let mut send = |b: Batch| -> Result<(), ImportError> {
        rt.block_on(tx.send(b))
            .map_err(|_| ImportError::Store(run_store::Error::RecorderStopped { run_id: id }))
    };
    let picks: Vec<usize> = map.mapped().iter().map(|(_, c)| *c).collect();
    let read = {
        let mut sink = Sink::new(map, names, &mut send);
        table
            .read(&picks, &mut |at, values| sink.row(at, values))
            .and_then(|()| sink.finish())
    };
    let stats = match read {
        Ok(stats) => stats,
        Err(e) => {
            let fin = Finish {
                status: RunStatus::Failed,
                // The run is deleted next; the reason is for a reader in between.
                reason: Some(Reason::new(
                    ReasonCode::Other,
                    format!("import refused: {e}"),
                )),
                timing: None,
            };
            // A stopped recorder says why; that comes first.
            return match (rt.block_on(recorder.close(fin)), e) {
                (Err(store), ImportError::Store(_)) => Err(store.into()),
                (_, e) => Err(e),
            };
        }
    };
    rt.block_on(store.save_results(id, &results(&stats)))?;
    let summary = rt.block_on(recorder.close(Finish::completed(None)))?;
    if summary.samples != stats.samples || summary.dropped_samples > 0 {
        return Err(ImportError::Store(run_store::Error::BadBatch {
            run_id: id,
            reason: format!(
                "BUG: {} samples read, {} stored, {} dropped",
                stats.samples, summary.samples, summary.dropped_samples
            ),
        }));
    }
    Ok(stats)
}

/// The results of an imported run: what the recording holds.
fn results(stats: &Stats) -> Value {
    let mut v = serde_json::to_value(stats).unwrap_or_default();
    v["kind"] = json!(IMPORTED_KIND);
    v
}
