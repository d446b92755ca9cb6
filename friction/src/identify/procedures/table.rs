//! Recorded data as named columns, and the checks procedures make on it.

use crate::identify::FitError;

/// Recorded data as named numeric columns of equal length.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    names: Vec<String>,
    cols: Vec<Vec<f64>>,
}

impl Table {
    /// A table from `(name, column)` pairs; the columns must have equal lengths.
    pub fn new(columns: Vec<(String, Vec<f64>)>) -> Result<Table, FitError> {
        let n = columns.first().map_or(0, |c| c.1.len());
        if let Some((name, c)) = columns.iter().find(|c| c.1.len() != n) {
            return Err(FitError::Data(format!(
                "column '{name}' has {} rows, expected {n}",
                c.len()
            )));
        }
        let (names, cols) = columns.into_iter().unzip();
        Ok(Table { names, cols })
    }

    /// Parses CSV text: a header of column names, then rows of numbers (`#` lines are skipped).
    pub fn from_csv(text: &str) -> Result<Table, FitError> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
        let Some((_, header)) = lines.next() else {
            return Err(FitError::Data(
                "the CSV is empty (expected a header of column names)".into(),
            ));
        };
        let names: Vec<String> = header.split(',').map(|s| s.trim().to_string()).collect();
        let mut cols = vec![Vec::new(); names.len()];
        for (i, line) in lines {
            let fields: Vec<&str> = line.split(',').collect();
            if fields.len() != names.len() {
                return Err(FitError::Data(format!(
                    "CSV line {}: {} fields, expected {} ({})",
                    i + 1,
                    fields.len(),
                    names.len(),
                    names.join(",")
                )));
            }
            for ((c, f), name) in cols.iter_mut().zip(fields).zip(&names) {
                let x: f64 = f.trim().parse().map_err(|_| {
                    FitError::Data(format!(
                        "CSV line {}: column '{name}': '{}' is not a number",
                        i + 1,
                        f.trim()
                    ))
                })?;
                c.push(x);
            }
        }
        Ok(Table { names, cols })
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.cols.first().map_or(0, Vec::len)
    }

    /// True when there is no row.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Column names in order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The column `name`, or an error naming it, the procedure and the columns present.
    pub fn column(&self, name: &str, procedure: &str) -> Result<&[f64], FitError> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| self.cols[i].as_slice())
            .ok_or_else(|| FitError::MissingColumn {
                column: name.to_string(),
                procedure: procedure.to_string(),
                have: self.names.join(","),
            })
    }

    /// The column `name` if present.
    pub fn get(&self, name: &str) -> Option<&[f64]> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| self.cols[i].as_slice())
    }
}

/// Fails with a `Data` error when fewer than `min` rows are present.
pub(crate) fn need_rows(n: usize, min: usize, what: &str) -> Result<(), FitError> {
    if n < min {
        return Err(FitError::Data(format!(
            "{what}: {n} rows, need at least {min}"
        )));
    }
    Ok(())
}

/// Mean of a slice (NaN when empty).
pub(crate) fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}
