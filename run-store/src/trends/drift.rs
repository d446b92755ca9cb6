//! Drift: the runs with a tag whose value of a parameter moved more than a fraction from their
//! bench's baseline mean (for example runs tagged `good` whose fitted `fs` moved by more than
//! 5 %). One query over the summary rows, whatever the number of benches.

use super::{check_name, end_of};
use crate::Error;
use crate::backend::{Dialect, on};
use crate::store::{Store, normalise_time};
use schemars::JsonSchema;
use serde::Serialize;
use sqlx::AssertSqlSafe;

/// What drift to look for.
#[derive(Clone, Debug, PartialEq)]
pub struct DriftQuery {
    /// The parameter.
    pub param: String,
    /// The fitted model ('' for a measured parameter).
    pub model: String,
    /// Only runs with this tag.
    pub tag: String,
    /// Smallest relative change from the baseline mean that counts (0.05 = 5 %).
    pub fraction: f64,
    /// The baseline period of every bench: runs started at or after this.
    pub baseline_since: String,
    /// ... and before this (or on or before this day).
    pub baseline_until: String,
}

/// A run that drifted.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct DriftPoint {
    /// The run.
    pub run_id: i64,
    /// Its bench.
    pub bench_id: String,
    /// Its start.
    pub at: String,
    /// Its value.
    pub value: f64,
    /// Its bench's baseline mean.
    pub baseline_mean: f64,
}

impl Store {
    /// The runs `q` finds drifted, in time order.
    pub async fn drift(&self, q: &DriftQuery) -> Result<Vec<DriftPoint>, Error> {
        check_name("param", Some(&q.param))?;
        check_name("tag", Some(&q.tag))?;
        if !(q.fraction.is_finite() && q.fraction > 0.0) {
            return Err(Error::InvalidInput {
                field: "fraction",
                value: q.fraction.to_string(),
                rule: "must be a fraction > 0 (0.05 = 5 %)".into(),
            });
        }
        let since = normalise_time("baseline_since", &q.baseline_since)?;
        let until = end_of("baseline_until", &q.baseline_until)?;
        let text: String = on!(self.reader(), |p, DB| {
            let sql = format!(
                "WITH base AS (
                     SELECT bench_id, avg(value) AS mean FROM run_summaries
                     WHERE param = $1 AND model = $2 AND at >= $3 AND at < $4
                     GROUP BY bench_id)
                 SELECT {} FROM (
                     SELECT s.run_id, s.bench_id, s.at, s.value, b.mean
                     FROM run_tags t CROSS JOIN run_summaries s
                     JOIN base b ON b.bench_id = s.bench_id
                     WHERE t.tag = $5 AND s.run_id = t.run_id AND s.param = $1
                         AND s.model = $2 AND abs(s.value - b.mean) > $6 * abs(b.mean)
                 ) drifted",
                DB::json_rows("run_id, bench_id, at, value, mean")
            );
            sqlx::query_scalar(AssertSqlSafe(sql))
                .bind(&q.param)
                .bind(&q.model)
                .bind(&since)
                .bind(&until)
                .bind(&q.tag)
                .bind(q.fraction)
                .fetch_one(p)
                .await?
        });
        let mut rows: Vec<(i64, String, String, f64, f64)> = serde_json::from_str(&text)?;
        rows.sort_by(|a, b| (&a.2, a.0).cmp(&(&b.2, b.0)));
        Ok(rows
            .into_iter()
            .map(|(run_id, bench_id, at, value, baseline_mean)| DriftPoint {
                run_id,
                bench_id,
                at,
                value,
                baseline_mean,
            })
            .collect())
    }
}
