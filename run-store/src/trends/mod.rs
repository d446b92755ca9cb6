//! Trends: one parameter over many runs (`bench trends`, `GET /api/trends`), read from the
//! summary rows. One point per run (per model and, for a curve's parameter, per point of the
//! curve), in time order, with its standard error, run, tags and parameter set; per bench,
//! model and curve position, control limits from a baseline and the points outside them
//! flagged.

use crate::Error;
use crate::backend::on;
use crate::store::{Store, normalise_time};
use schemars::JsonSchema;
use serde::Serialize;
use sqlx::AssertSqlSafe;
use std::collections::BTreeMap;

mod drift;
mod limits;

pub use drift::{DriftPoint, DriftQuery};
pub use limits::{Band, Limits};

/// Longest parameter, model or bench name a query takes.
const MAX_NAME_CHARS: usize = 128;
/// Baseline points by default: the first of each series.
pub const DEFAULT_BASELINE_POINTS: usize = 10;

/// What to trend.
#[derive(Clone, Debug, PartialEq)]
pub struct TrendQuery {
    /// The parameter (a fitted model's, e.g. `fs`, or a measured one, e.g. `fs_nm`).
    pub param: String,
    /// Only fits of this model.
    pub model: Option<String>,
    /// Only this bench.
    pub bench: Option<String>,
    /// Runs started at or after (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, UTC).
    pub since: Option<String>,
    /// Runs started before this time, or on or before this day.
    pub until: Option<String>,
    /// Where each series' limits come from.
    pub baseline: Baseline,
}

/// The baseline of each series and how its limits are drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct Baseline {
    /// The points before this time (or on or before this day); if unset, the first `points`.
    pub until: Option<String>,
    /// Baseline points when `until` is unset.
    pub points: usize,
    /// Mean ± 3σ or a relative band.
    pub band: Band,
}

impl Default for Baseline {
    fn default() -> Baseline {
        Baseline {
            until: None,
            points: DEFAULT_BASELINE_POINTS,
            band: Band::Sigma3,
        }
    }
}

/// A trend: the points in time order and each series' limits.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Trend {
    /// The parameter.
    pub param: String,
    /// The model filter, if any.
    pub model: Option<String>,
    /// The bench filter, if any.
    pub bench: Option<String>,
    /// The window's start (stored form), if any.
    pub since: Option<String>,
    /// The window's exclusive end (stored form), if any.
    pub until: Option<String>,
    /// Every point, in time order.
    pub points: Vec<TrendPoint>,
    /// One series per bench and model, with its limits.
    pub series: Vec<Series>,
    /// Points outside their series' limits.
    pub outside: usize,
}

/// One run's value of the parameter.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct TrendPoint {
    /// The run.
    pub run_id: i64,
    /// Its bench.
    pub bench_id: String,
    /// The run's start (RFC 3339 UTC).
    pub at: String,
    /// `fit`, `steady_state`, `breakaway` or `stiffness`.
    pub source: String,
    /// The fitted model ('' for a measurement).
    pub model: String,
    /// Position among the run's values of this parameter (a curve's points).
    pub idx: i64,
    /// A curve point's abscissa: velocity \[rad/s\] or torque rate \[N m/s\].
    pub x: Option<f64>,
    /// The value, SI units.
    pub value: f64,
    /// Its standard error (null where the fit or measurement gave none).
    pub std_error: Option<f64>,
    /// The parameter set of a fit (the newest of the run's sets of that model).
    pub parameter_set_id: Option<i64>,
    /// The run's tags.
    pub tags: Vec<String>,
    /// Outside its series' limits (null: the series has none).
    pub outside: Option<bool>,
}

/// The points of one bench and model (and, for a curve's parameter, one position on the
/// curve: the runs' n-th steady-state point).
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Series {
    /// The bench.
    pub bench_id: String,
    /// The model ('' for a measurement).
    pub model: String,
    /// The curve position its points share (0 for a fit or a single value).
    pub idx: i64,
    /// Its points.
    pub points: usize,
    /// Its limits.
    pub limits: Limits,
}

crate::rows::from_row! {
    /// A summary row joined with one of its run's tags, as queried.
    struct Joined {
        run_id: i64,
        set_id: i64,
        bench_id: String,
        at: String,
        source: String,
        model: String,
        idx: i32,
        x: Option<f64>,
        value: f64,
        std_error: Option<f64>,
        tag: Option<String>,
    }
}

impl Store {
    /// The trend `q` asks for.
    pub async fn trend(&self, q: &TrendQuery) -> Result<Trend, Error> {
        check_name("param", Some(&q.param))?;
        check_name("model", q.model.as_ref())?;
        check_name("bench", q.bench.as_ref())?;
        check_baseline(&q.baseline)?;
        let since = q
            .since
            .as_deref()
            .map(|s| normalise_time("since", s))
            .transpose()?;
        let until = q.until.as_deref().map(|u| end_of("until", u)).transpose()?;
        let cut = (q.baseline.until.as_deref())
            .map(|u| end_of("baseline_until", u))
            .transpose()?;
        let mut binds = vec![q.param.clone()];
        let mut sql = String::from("s.param = $1");
        for (clause, value) in [
            ("s.model = ", &q.model),
            ("s.bench_id = ", &q.bench),
            ("s.at >= ", &since),
            ("s.at < ", &until),
        ] {
            if let Some(v) = value {
                binds.push(v.clone());
                sql.push_str(&format!(" AND {clause}${}", binds.len()));
            }
        }
        let rows = self.joined(&sql, &binds).await?;
        let mut points = fold(rows);
        let series = flag(&mut points, &q.baseline, cut.as_deref());
        Ok(Trend {
            param: q.param.clone(),
            model: q.model.clone(),
            bench: q.bench.clone(),
            since,
            until,
            outside: points.iter().filter(|p| p.outside == Some(true)).count(),
            points,
            series,
        })
    }

    /// The newest run id and parameter-set id in the store (0 for none): what a watcher started
    /// now has already seen, so that only points that come later are news.
    pub async fn newest_ids(&self) -> Result<(i64, i64), Error> {
        Ok(on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT (SELECT coalesce(max(id), 0) FROM runs),
                        (SELECT coalesce(max(id), 0) FROM parameter_sets)",
            )
            .fetch_one(p)
            .await?
        }))
    }

    /// The summary rows matching `filter` with their runs' tags, in time order (a run's newest
    /// set first).
    async fn joined(&self, filter: &str, binds: &[String]) -> Result<Vec<Joined>, Error> {
        let sql = format!(
            "SELECT s.run_id, s.set_id, s.bench_id, s.at, s.source, s.model, s.idx, s.x,
                 s.value, s.std_error, t.tag
             FROM run_summaries s LEFT JOIN run_tags t ON t.run_id = s.run_id
             WHERE {filter}
             ORDER BY s.at, s.run_id, s.model, s.idx, s.set_id DESC, t.tag"
        );
        Ok(on!(self.reader(), |p, DB| {
            let mut query = sqlx::query_as(AssertSqlSafe(sql));
            for b in binds {
                query = query.bind(b);
            }
            query.fetch_all(p).await?
        }))
    }
}

/// One point per run, model and curve position (the newest set's), its tags gathered.
fn fold(rows: Vec<Joined>) -> Vec<TrendPoint> {
    let mut points: Vec<TrendPoint> = Vec::new();
    let mut last_set = 0;
    for r in rows {
        if let Some(p) = points.last_mut().filter(|p| same_point(p, &r)) {
            if r.set_id == last_set {
                p.tags.extend(r.tag);
            }
            continue;
        }
        last_set = r.set_id;
        points.push(TrendPoint {
            run_id: r.run_id,
            bench_id: r.bench_id,
            at: r.at,
            source: r.source,
            model: r.model,
            idx: r.idx.into(),
            x: r.x,
            value: r.value,
            std_error: r.std_error,
            parameter_set_id: (r.set_id != 0).then_some(r.set_id),
            tags: r.tag.into_iter().collect(),
            outside: None,
        });
    }
    points
}

fn same_point(p: &TrendPoint, r: &Joined) -> bool {
    p.run_id == r.run_id && p.model == r.model && p.idx == i64::from(r.idx)
}

/// Groups the points by bench, model and curve position, draws each series' limits from its
/// baseline (the points before `cut`, or its first `baseline.points`) and flags every point
/// against its series'.
fn flag(points: &mut [TrendPoint], baseline: &Baseline, cut: Option<&str>) -> Vec<Series> {
    let mut by_series: BTreeMap<(String, String, i64), Vec<usize>> = BTreeMap::new();
    for (i, p) in points.iter().enumerate() {
        let key = (p.bench_id.clone(), p.model.clone(), p.idx);
        by_series.entry(key).or_default().push(i);
    }
    let mut series = Vec::new();
    for ((bench_id, model, position), idx) in by_series {
        let base: Vec<&TrendPoint> = match cut {
            Some(cut) => idx
                .iter()
                .map(|&i| &points[i])
                .filter(|p| p.at.as_str() < cut)
                .collect(),
            None => idx
                .iter()
                .take(baseline.points)
                .map(|&i| &points[i])
                .collect(),
        };
        let values: Vec<f64> = base.iter().map(|p| p.value).collect();
        let (from, to) = (
            base.first().map(|p| p.at.as_str()),
            base.last().map(|p| p.at.as_str()),
        );
        let limits = Limits::of(baseline.band, &values, from, to);
        for &i in &idx {
            points[i].outside = limits.outside(points[i].value);
        }
        series.push(Series {
            bench_id,
            model,
            idx: position,
            points: idx.len(),
            limits,
        });
    }
    series
}

/// A bound's stored form: a day means the end of that day (its next midnight).
pub(crate) fn end_of(field: &'static str, text: &str) -> Result<String, Error> {
    let start = normalise_time(field, text)?;
    if text.len() != 10 {
        return Ok(start);
    }
    let day =
        chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").map_err(|_| Error::InvalidInput {
            field,
            value: text.to_string(),
            rule: "is not a date".into(),
        })?;
    let next = day
        .succ_opt()
        .unwrap_or(day)
        .and_hms_opt(0, 0, 0)
        .unwrap_or_default();
    Ok(next.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
}

fn check_name(field: &'static str, name: Option<&String>) -> Result<(), Error> {
    let Some(name) = name else { return Ok(()) };
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
        return Err(Error::InvalidInput {
            field,
            value: name.clone(),
            rule: format!("must be 1 to {MAX_NAME_CHARS} characters"),
        });
    }
    Ok(())
}

fn check_baseline(b: &Baseline) -> Result<(), Error> {
    if b.points == 0 {
        return Err(Error::InvalidInput {
            field: "baseline_points",
            value: "0".into(),
            rule: "must be at least 1".into(),
        });
    }
    if let Band::Relative { fraction } = b.band
        && !(fraction.is_finite() && fraction > 0.0)
    {
        return Err(Error::InvalidInput {
            field: "band",
            value: fraction.to_string(),
            rule: "must be a fraction > 0 (0.05 = ± 5 %)".into(),
        });
    }
    Ok(())
}
