//! Held-out validation of a fit (`bench fit --validate RUN|CSV`): each record is read the way
//! the fit reads its own input (a stored run as `bench fit --run` reads it, a CSV file by its
//! header) and scored by `friction::identify::procedures::validation` the procedure's own way.

use super::run_data::{self, Selection};
use super::{Field, FitError};
use friction::identify::procedures::validation::{self, Validation};
use friction::identify::procedures::{FitReport, Table};
use std::path::Path;

/// A held-out record as `--validate` names it: a whole number is a stored run, anything else a
/// CSV file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    /// A stored run's id.
    Run(i64),
    /// A CSV file's path.
    Csv(String),
}

impl Record {
    /// `12` is run 12; `held.csv` is a file.
    pub fn parse(text: &str) -> Record {
        text.trim()
            .parse()
            .map_or_else(|_| Record::Csv(text.to_string()), Record::Run)
    }
}

/// Scores the set of `report` on each record (runs read from the store at `db`).
pub fn held_out(
    report: &FitReport,
    records: &[Record],
    db: &Path,
) -> Result<Vec<Validation>, FitError> {
    let mut out = Vec::with_capacity(records.len());
    for record in records {
        let (table, name) = match record {
            Record::Csv(path) => (csv_table(path)?, path.clone()),
            Record::Run(id) => (stored_table(report, *id, db)?, format!("run {id}")),
        };
        let scored = validation::validate(report, &table, &name)
            .map_err(|e| FitError::field(Field::Validate, format!(" {name}: {e}")))?;
        out.push(scored);
    }
    Ok(out)
}

/// A CSV file with a header of column names.
fn csv_table(path: &str) -> Result<Table, FitError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| FitError::field(Field::Validate, format!(" {path}: cannot read it: {e}")))?;
    Table::from_csv(&text).map_err(|e| FitError::field(Field::Validate, format!(" {path}: {e}")))
}

/// Run `id`'s table for the report's procedure.
fn stored_table(report: &FitReport, id: i64, db: &Path) -> Result<Table, FitError> {
    let procedure = super::fit::registered(&report.provenance.procedure)?;
    super::fit::on_store(db, async |store| {
        let run = run_data::load_run(store, id, Field::Validate).await?;
        let (table, _) =
            super::fit::run_table(store, &run, procedure, &Selection::default(), false).await?;
        Ok(table)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_number_is_a_run_and_anything_else_a_file() {
        assert_eq!(Record::parse("12"), Record::Run(12));
        assert_eq!(Record::parse("held.csv"), Record::Csv("held.csv".into()));
        assert_eq!(Record::parse("./12"), Record::Csv("./12".into()));
    }
}
