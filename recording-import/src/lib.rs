//! Recordings made elsewhere, stored as runs of kind `imported` (`bench runs import`,
//! `POST /api/runs/import`), so that every page, export, fit and comparison reads them like
//! a recorded run.
//!
//! ```text
//!  file ── format reader (csv.rs, mat.rs, parquet.rs): named columns, the units it states
//!           │  options.rs: --columns, --scale, --geometry → which column is t, x, v, u, friction
//!           │  units.rs: the stated units checked against the geometry
//!           ▼
//!  rows ── sink.rs: scaled, finite, time increasing → run-store Samples, in batches
//!           ▼
//!  store.rs: a run of kind `imported` (provenance in its spec) through the run recorder;
//!            on any refusal the run is deleted, so nothing is stored
//! ```
//!
//! Conventions (as `bench fit --run` reads a run, `fitting::run_data`): `u` is stored as the drive
//! torque (`torque_motor`, the applied torque or force) and `friction` as the sensor torque
//! (`torque_sensor`, the measured one); `u_cmd` stays empty. A column that is not mapped is
//! stored as NaN and left out of the fits' tables.

mod csv;
mod header;
mod mat;
pub mod options;
mod parquet;
mod sink;
mod store;
pub mod units;

pub use options::{Format, ImportOptions, Role};
pub use sink::Stats;
pub use store::{ImportReport, Source, import, import_blocking};

use std::fmt;

/// Why an import was refused or failed. Everything but [`ImportError::Store`] and
/// [`ImportError::Io`] is bad input (exit 2, HTTP 422).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// An option is wrong; `option` is its name (`columns`, `scale`, `format`, `geometry`,
    /// `name`, `bench`).
    #[error("{message}")]
    Option {
        /// The option (flag without `--`, or query parameter).
        option: &'static str,
        /// What is wrong, naming the value and the rule.
        message: String,
    },
    /// The file's content is refused; the message names the line (or row) and the column.
    #[error("{file}: {message}")]
    Data {
        /// The file's name.
        file: String,
        /// What is wrong and where.
        message: String,
    },
    /// The run store failed.
    #[error("run store: {0}")]
    Store(#[from] run_store::Error),
    /// Reading the file failed (not its content: the disk or the connection).
    #[error("reading {file}: {error}")]
    Io {
        /// The file's name.
        file: String,
        /// The error.
        error: std::io::Error,
    },
}

impl ImportError {
    /// True for bad input (the user's file or options), false for a failure of the machine.
    pub fn is_input(&self) -> bool {
        matches!(self, ImportError::Option { .. } | ImportError::Data { .. })
    }

    /// An option error.
    pub(crate) fn option(option: &'static str, message: impl Into<String>) -> ImportError {
        ImportError::Option {
            option,
            message: message.into(),
        }
    }
}

/// Where a value sits in the file, as error messages name it: a CSV line (1-based, as an
/// editor shows it), or a row of a MAT variable or Parquet column (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum At {
    /// A line of a text file.
    Line(u64),
    /// A row of a column.
    Row(u64),
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            At::Line(n) => write!(f, "line {n}"),
            At::Row(n) => write!(f, "row {n}"),
        }
    }
}

/// A unit a file states for one of its columns, and where it says so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UnitClaim {
    /// The column's index in the file.
    pub column: usize,
    /// The unit as written (trimmed; never empty).
    pub unit: String,
    /// Where: `line 2` (a units row), `the header` (`x [m]`), `field metadata`.
    pub place: String,
}

/// What a table hands each data row to: it may refuse the row.
pub(crate) type RowFn<'a> = dyn FnMut(At, &[f64]) -> Result<(), ImportError> + 'a;

/// A file of named numeric columns, read row by row (one reader per format).
pub(crate) trait Table {
    /// Column names, in file order.
    fn names(&self) -> &[String];
    /// The units the file states.
    fn units(&self) -> Vec<UnitClaim>;
    /// How the file was read (delimiter, decimal separator, variables, ...), for provenance.
    fn details(&self) -> serde_json::Value;
    /// Reads every data row, handing the values of columns `picks` (in that order) to `row`,
    /// which may refuse a row; a value that is not a number is refused here, naming its place.
    fn read(&mut self, picks: &[usize], row: &mut RowFn<'_>) -> Result<(), ImportError>;
}
