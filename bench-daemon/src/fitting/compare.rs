//! Model comparisons (after Nnaji Tables 6–7): every chosen model fitted by output error on the
//! estimation data and scored per regime on estimation and validation data. Data are stored
//! runs or CSV files; with runs, the table is stored with them and each model starts from the
//! bench's own fits of it ([`super::start`]). The inverse comparison (`--replay inverse`) fits
//! each model by IDIM-LS on one `t, x, u` record instead and scores its force.

use super::run_data::{self, Selection};
use super::{Field, FitError, start};
use crate::InputError;
use crate::config::Geometry;
use friction::identify::procedures::Offset;
use friction::identify::procedures::compare::{
    self, CompareOptions, CsvFiles, ModelChoice, Regimes, ReplayName, StartSource, StoredOptions,
    Table,
};
use friction::identify::procedures::compare_inverse;
use friction::identify::procedures::output_error::{self, Replay, Segment};
use run_store::{NewComparison, Store};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// One estimation or validation item: a stored run or a CSV file.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// A run of the run store.
    Run(i64),
    /// A CSV file (header `t,x,v,u,friction` as `bench simulate` writes it).
    Csv(String),
}

impl Source {
    /// A run id if `text` is an integer, else a CSV file's path.
    pub fn parse(text: &str) -> Source {
        match text.trim().parse::<i64>() {
            Ok(id) => Source::Run(id),
            Err(_) => Source::Csv(text.to_string()),
        }
    }
}

/// How the data drive the models.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ReplayKind {
    /// The measured velocity drives each model; the residual is friction.
    Velocity,
    /// The applied torque drives each model coupled to the plant mass; the residual is
    /// position.
    Torque,
    /// The inverse model (IDIM-LS): each model fitted on the one estimation record of
    /// `t, x, u`; the residual is the force, as `bench fit --validate` scores it.
    Inverse,
}

impl From<ReplayKind> for ReplayName {
    fn from(r: ReplayKind) -> ReplayName {
        match r {
            ReplayKind::Velocity => ReplayName::Velocity,
            ReplayKind::Torque => ReplayName::Torque,
            ReplayKind::Inverse => ReplayName::Inverse,
        }
    }
}

/// A comparison: the data, the models and the settings.
#[derive(Clone, Debug)]
pub struct CompareJob {
    /// Estimation data.
    pub estimate: Vec<Source>,
    /// Validation data.
    pub validate: Vec<Source>,
    /// `ID`, `ID=p1+p2` or `ID=none` each.
    pub models: Vec<String>,
    /// The replay.
    pub replay: ReplayKind,
    /// Plant mass or inertia of a torque replay \[kg or kg m²\].
    pub mass: f64,
    /// |v| below this is presliding \[m/s or rad/s\].
    pub presliding_velocity: f64,
    /// Displacement since the last reversal within which motion is presliding \[m or rad\].
    pub presliding_displacement: Option<f64>,
    /// Levenberg–Marquardt iteration cap per model.
    pub max_iters: u64,
    /// Wall-time budget per model fit \[s\].
    pub timeout_s: Option<f64>,
    /// Fit a constant force offset per model, subtracted from the measurement (a stored set's
    /// offset is always subtracted).
    pub offset: bool,
    /// The run database (for run sources).
    pub db: PathBuf,
    /// The bench's geometry, for the residual's unit.
    pub geometry: Geometry,
    /// The options of every IDIM-LS fit of an inverse comparison (`asymmetric`, `force_held`,
    /// ...); empty otherwise.
    pub given: Map<String, Value>,
}

/// A comparison done (and stored when it used runs).
#[derive(Debug)]
pub struct Compared {
    /// The table.
    pub table: Table,
    /// The table as JSON (`bench compare --json`, `POST /api/comparisons`), with `residual`
    /// and, once stored, `comparison_id`.
    pub json: Value,
    /// The stored comparison's id.
    pub stored: Option<i64>,
    /// What the residual is, in the bench's units.
    pub residual: String,
}

impl CompareJob {
    /// Checks the settings, fits and scores every model, and stores the table when runs were
    /// used (on a runtime of its own: call it from a blocking thread).
    pub fn run(&self) -> Result<Compared, FitError> {
        let opts = self.options()?;
        let mut models = self
            .models
            .iter()
            .map(|m| {
                ModelChoice::parse(m).map_err(|e| FitError::field(Field::Models, format!(": {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(anyhow::Error::from)?;
        let store = match self.uses_runs() {
            true => Some(
                rt.block_on(crate::db::open_existing(&self.db))
                    .map_err(|e| match e.downcast::<InputError>() {
                        Ok(input) => FitError::Input(input),
                        Err(e) => FitError::Failed(e),
                    })?,
            ),
            false => None,
        };
        let done = rt.block_on(self.compare_in(store.as_ref(), &mut models, &opts));
        if let Some(store) = store {
            rt.block_on(store.close());
        }
        done
    }

    fn uses_runs(&self) -> bool {
        self.estimate
            .iter()
            .chain(&self.validate)
            .any(|s| matches!(s, Source::Run(_)))
    }

    /// The procedure's options, checked.
    fn options(&self) -> Result<CompareOptions, FitError> {
        let pv = self.presliding_velocity;
        if !(pv.is_finite() && pv >= 0.0) {
            return Err(FitError::field(
                Field::PreslidingVelocity,
                format!(" ({pv}) must be >= 0"),
            ));
        }
        if let Some(d) = self
            .presliding_displacement
            .filter(|d| !(d.is_finite() && *d >= 0.0))
        {
            return Err(FitError::field(
                Field::PreslidingDisplacement,
                format!(" ({d}) must be >= 0"),
            ));
        }
        if self.replay == ReplayKind::Torque && !(self.mass.is_finite() && self.mass > 0.0) {
            return Err(FitError::field(
                Field::Mass,
                format!(" ({}) must be > 0", self.mass),
            ));
        }
        let timeout = match self.timeout_s {
            Some(t) if !(t.is_finite() && t > 0.0) => {
                return Err(FitError::field(
                    Field::TimeoutS,
                    format!(" ({t}) must be > 0"),
                ));
            }
            t => t.map(Duration::from_secs_f64),
        };
        if self.replay != ReplayKind::Inverse && !self.given.is_empty() {
            return Err(FitError::field(
                Field::Given,
                " is for the inverse comparison (--replay inverse): it holds the IDIM-LS options"
                    .to_string(),
            ));
        }
        Ok(CompareOptions {
            replay: match self.replay {
                // The inverse comparison fits and scores by IDIM-LS, not by a replay.
                ReplayKind::Velocity | ReplayKind::Inverse => Replay::Velocity,
                ReplayKind::Torque => Replay::Torque {
                    mass: self.mass,
                    load: friction::Load::None,
                },
            },
            regimes: Regimes {
                presliding_velocity: pv,
                presliding_displacement: self.presliding_displacement,
            },
            max_iters: self.max_iters,
            timeout,
            offset: if self.offset {
                Offset::Fit
            } else {
                Offset::None
            },
            speed: friction::identify::procedures::output_error::Speed::Linear,
            validation_warmup_s: 0.0,
        })
    }

    async fn compare_in(
        &self,
        store: Option<&Store>,
        models: &mut [ModelChoice],
        opts: &CompareOptions,
    ) -> Result<Compared, FitError> {
        // On the bench's runs, each model starts from the bench's own fits of it.
        let mut starts = BTreeMap::new();
        let inverse = self.replay == ReplayKind::Inverse;
        // (The inverse comparison fits from the data alone: a start would be held fixed.)
        if let Some(store) = store.filter(|_| !inverse) {
            for m in models.iter_mut() {
                let start = start::start_for(store, &m.model, &output_error::PROCEDURE).await?;
                if let Value::Object(p) = &mut m.params {
                    start.under(p);
                }
                if !start.sources.is_empty() {
                    starts.insert(m.model.clone(), start.sources);
                }
            }
        }
        let estimate = read_sources(Field::Estimate, &self.estimate, store).await?;
        let validate = read_sources(Field::Validate, &self.validate, store).await?;
        let table = if inverse {
            compare_inverse::compare(&estimate, &validate, models, &self.given)
        } else {
            compare::compare(&estimate, &validate, models, opts)
        }
        .map_err(|e| InputError(e.to_string()))?;
        let mut table_json = serde_json::to_value(&table).map_err(anyhow::Error::from)?;
        // The residual in the bench's units (friction [N m] on a rotary bench).
        let residual = match self.replay {
            ReplayKind::Velocity => format!("friction [{}]", self.geometry.force()),
            ReplayKind::Torque => format!("position [{}]", self.geometry.position()),
            ReplayKind::Inverse => {
                format!("force [{}] (the inverse model's)", self.geometry.force())
            }
        };
        table_json["residual"] = json!(residual);
        let stored = match store {
            Some(store) => Some(self.store_table(store, &table_json, starts).await?),
            None => None,
        };
        if let Some(id) = stored {
            table_json["comparison_id"] = json!(id);
        }
        Ok(Compared {
            table,
            json: table_json,
            stored,
            residual,
        })
    }

    /// Stores the table with the runs it used; returns its id.
    async fn store_table(
        &self,
        store: &Store,
        table: &Value,
        starts: BTreeMap<String, Vec<StartSource>>,
    ) -> Result<i64, FitError> {
        let runs = |src: &[Source]| -> Vec<i64> {
            src.iter()
                .filter_map(|s| match s {
                    Source::Run(id) => Some(*id),
                    Source::Csv(_) => None,
                })
                .collect()
        };
        let files = |src: &[Source]| -> Vec<String> {
            src.iter()
                .filter_map(|s| match s {
                    Source::Csv(p) => Some(p.clone()),
                    Source::Run(_) => None,
                })
                .collect()
        };
        let torque = self.replay == ReplayKind::Torque;
        let options = StoredOptions {
            presliding_displacement: self.presliding_displacement,
            mass: torque.then_some(self.mass),
            max_iters: Some(self.max_iters),
            timeout_s: self.timeout_s,
            offset: Some(self.offset),
            given: Some(self.given.clone()),
            csv: Some(CsvFiles {
                estimate: files(&self.estimate),
                validate: files(&self.validate),
            }),
            start_from: Some(starts),
            ..StoredOptions::new(self.replay.into(), self.presliding_velocity)
        };
        if friction::identify::control::cancelled() {
            return Err(FitError::Cancelled);
        }
        let new = NewComparison {
            estimate_runs: runs(&self.estimate),
            validate_runs: runs(&self.validate),
            models: self.models.clone(),
            options: serde_json::to_value(options).map_err(anyhow::Error::from)?,
            table: table.clone(),
        };
        Ok(store.add_comparison(&new).await?)
    }
}

/// Reads the segments of `sources`; run ids come from `store`.
pub async fn read_sources(
    field: Field,
    sources: &[Source],
    store: Option<&Store>,
) -> Result<Vec<Segment>, FitError> {
    let mut out = Vec::with_capacity(sources.len());
    for s in sources {
        out.push(match (s, store) {
            (Source::Csv(path), _) => read_segment(path)?,
            (Source::Run(id), Some(store)) => {
                let run = run_data::load_run(store, *id, field).await?;
                let ts = run_data::time_series(store, &run, &Selection::default()).await?;
                Segment::from_columns(&format!("run {id}"), &ts.names, &ts.cols)
                    .map_err(|e| FitError::field(field, format!(": {e}")))?
            }
            (Source::Run(_), None) => {
                return Err(FitError::Failed(anyhow::anyhow!(
                    "BUG: run ids without a store"
                )));
            }
        });
    }
    Ok(out)
}

/// Reads a CSV file with a header row into a segment (columns by name).
pub fn read_segment(path: &str) -> Result<Segment, InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError(format!("cannot read {path}: {e}")))?;
    let mut lines = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'));
    let header = lines
        .next()
        .ok_or_else(|| InputError(format!("{path}: empty file")))?;
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    let mut cols: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    for (i, line) in lines.enumerate() {
        let cells: Vec<&str> = line.split(',').collect();
        if cells.len() != names.len() {
            return Err(InputError(format!(
                "{path}: row {} has {} fields, the header {}",
                i + 2,
                cells.len(),
                names.len()
            )));
        }
        for (c, cell) in cols.iter_mut().zip(cells) {
            let x: f64 = cell.trim().parse().map_err(|_| {
                InputError(format!(
                    "{path}: row {}: '{}' is not a number",
                    i + 2,
                    cell.trim()
                ))
            })?;
            c.push(x);
        }
    }
    Segment::from_columns(path, &names, &cols).map_err(|e| InputError(e.to_string()))
}
