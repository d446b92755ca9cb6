//! Model comparison tables stored with the runs they used (`bench compare` on run ids).

use crate::backend::{AsConn, ConnRef, now_text, on};
use crate::types::{Comparison, NewComparison};
use crate::{Error, Store};

crate::rows::from_row! {
    /// A `comparisons` row as stored.
    pub(crate) struct ComparisonRow {
        pub(crate) id: i64,
        pub(crate) uuid: String,
        pub(crate) created_at: String,
        pub(crate) estimate_runs: String,
        pub(crate) validate_runs: String,
        pub(crate) models: String,
        pub(crate) options: String,
        pub(crate) result: String,
    }
}

impl ComparisonRow {
    fn decode(self) -> Result<Comparison, Error> {
        Ok(Comparison {
            id: self.id,
            uuid: self.uuid,
            created_at: self.created_at,
            estimate_runs: serde_json::from_str(&self.estimate_runs)?,
            validate_runs: serde_json::from_str(&self.validate_runs)?,
            models: serde_json::from_str(&self.models)?,
            options: serde_json::from_str(&self.options)?,
            table: serde_json::from_str(&self.result)?,
        })
    }
}

impl Store {
    /// Stores a comparison and links it to each of its runs (one transaction); returns its id.
    /// Every run must exist ([`Error::RunNotFound`] names the first missing one).
    pub async fn add_comparison(&self, c: &NewComparison) -> Result<i64, Error> {
        for id in c.estimate_runs.iter().chain(&c.validate_runs) {
            self.require_run(*id).await?;
        }
        let row = ComparisonRow {
            id: 0,
            uuid: crate::backend::new_uuid(),
            created_at: now_text(),
            estimate_runs: serde_json::to_string(&c.estimate_runs)?,
            validate_runs: serde_json::to_string(&c.validate_runs)?,
            models: serde_json::to_string(&c.models)?,
            options: serde_json::to_string(&c.options)?,
            result: serde_json::to_string(&c.table)?,
        };
        on!(self.writer(), |p, DB| {
            let mut tx = p.begin().await?;
            let id = insert_comparison(tx.conn(), &row, &c.estimate_runs, &c.validate_runs).await?;
            tx.commit().await?;
            id.ok_or_else(|| Error::InvalidInput {
                field: "uuid",
                value: row.uuid.clone(),
                rule: "is already taken".into(),
            })
        })
    }

    /// The comparison with this id.
    pub async fn comparison(&self, id: i64) -> Result<Comparison, Error> {
        let row: Option<ComparisonRow> = on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT id, uuid, created_at, estimate_runs, validate_runs, models, options,
                     result
                 FROM comparisons WHERE id = $1",
            )
            .bind(id)
            .fetch_optional(p)
            .await?
        });
        row.ok_or_else(|| Error::NotFound {
            what: "comparison",
            key: id.to_string(),
        })?
        .decode()
    }

    /// The comparisons that used run `run` (to estimate or to validate), oldest first.
    pub async fn comparisons_for_run(&self, run: i64) -> Result<Vec<Comparison>, Error> {
        self.require_run(run).await?;
        let rows: Vec<ComparisonRow> = on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT id, uuid, created_at, estimate_runs, validate_runs, models, options,
                     result
                 FROM comparisons WHERE id IN
                     (SELECT comparison_id FROM comparison_runs WHERE run_id = $1)
                 ORDER BY created_at, id",
            )
            .bind(run)
            .fetch_all(p)
            .await?
        });
        rows.into_iter().map(ComparisonRow::decode).collect()
    }
}

/// Inserts comparison `c` (its `id` ignored; nothing if its UUID is there) and links it to the
/// runs it estimated on and validated on, on `conn` (the caller's transaction); returns the new
/// id, or `None` if the comparison was there.
pub(crate) async fn insert_comparison(
    mut conn: ConnRef<'_>,
    c: &ComparisonRow,
    estimate: &[i64],
    validate: &[i64],
) -> Result<Option<i64>, Error> {
    let id: Option<i64> = on!(conn.reborrow(), |tx, DB| {
        sqlx::query_scalar(
            "INSERT INTO comparisons (uuid, created_at, estimate_runs, validate_runs, models,
                 options, result)
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (uuid) DO NOTHING RETURNING id",
        )
        .bind(&c.uuid)
        .bind(&c.created_at)
        .bind(&c.estimate_runs)
        .bind(&c.validate_runs)
        .bind(&c.models)
        .bind(&c.options)
        .bind(&c.result)
        .fetch_optional(&mut *tx)
        .await?
    });
    let Some(id) = id else {
        return Ok(None);
    };
    let roles = estimate
        .iter()
        .map(|r| (*r, "estimate"))
        .chain(validate.iter().map(|r| (*r, "validate")));
    for (run, role) in roles {
        on!(conn.reborrow(), |tx, DB| {
            sqlx::query(
                "INSERT INTO comparison_runs (comparison_id, run_id, role)
                 VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
            )
            .bind(id)
            .bind(run)
            .bind(role)
            .execute(&mut *tx)
            .await?;
        });
    }
    Ok(Some(id))
}

#[cfg(test)]
mod tests {
    use crate::{Error, NewComparison, NewRun, Store};

    #[tokio::test]
    async fn a_comparison_is_stored_and_listed_under_each_of_its_runs() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("runs.db")).await.unwrap();
        let run = |kind: &str| NewRun {
            kind: kind.into(),
            name: "t".into(),
            software_version: "0.1.0".into(),
            ..NewRun::default()
        };
        let est = store.create_run(&run("prbs")).await.unwrap();
        let val = store.create_run(&run("validation_profile")).await.unwrap();
        let other = store.create_run(&run("prbs")).await.unwrap();
        let new = NewComparison {
            estimate_runs: vec![est],
            validate_runs: vec![val, est],
            models: vec!["lugre".into(), "coulomb_viscous".into()],
            options: serde_json::json!({"replay": "velocity"}),
            table: serde_json::json!({"rows": [{"rank": 1, "model": "lugre"}]}),
        };
        let id = store.add_comparison(&new).await.unwrap();
        let c = store.comparison(id).await.unwrap();
        assert_eq!(
            (
                &c.estimate_runs,
                &c.validate_runs,
                &c.models,
                &c.options,
                &c.table
            ),
            (
                &new.estimate_runs,
                &new.validate_runs,
                &new.models,
                &new.options,
                &new.table
            )
        );
        // A run used in both roles lists the comparison once.
        let for_est = store.comparisons_for_run(est).await.unwrap();
        assert_eq!(for_est.iter().map(|c| c.id).collect::<Vec<_>>(), [id]);
        assert_eq!(store.comparisons_for_run(val).await.unwrap().len(), 1);
        assert!(store.comparisons_for_run(other).await.unwrap().is_empty());
        assert!(matches!(
            store.comparisons_for_run(999).await,
            Err(Error::RunNotFound { id: 999 })
        ));
        assert_eq!(
            store.comparison(id + 1).await.unwrap_err().to_string(),
            format!("comparison {} not found", id + 1)
        );
    }

    #[tokio::test]
    async fn a_comparison_naming_a_missing_run_stores_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("runs.db")).await.unwrap();
        let new = NewComparison {
            estimate_runs: vec![41],
            validate_runs: vec![],
            models: vec!["lugre".into()],
            options: serde_json::json!({}),
            table: serde_json::json!({}),
        };
        let err = store.add_comparison(&new).await.unwrap_err();
        assert!(matches!(err, Error::RunNotFound { id: 41 }), "{err}");
        let n: i64 = crate::backend::on!(store.reader(), |p, DB| {
            sqlx::query_scalar("SELECT count(*) FROM comparisons")
                .fetch_one(p)
                .await
                .unwrap()
        });
        assert_eq!(n, 0);
    }
}
