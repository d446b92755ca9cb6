//! Parameter sets: a fit's parameters with their provenance, found by id or by name.

use super::Store;
use crate::Error;
use crate::backend::{AsConn, now_text, on};
use crate::types::ParameterSet;

crate::rows::from_row! {
    /// A `parameter_sets` row as stored.
    pub(crate) struct ParameterSetRow {
        pub(crate) id: i64,
        pub(crate) uuid: String,
        pub(crate) name: String,
        pub(crate) model_id: String,
        pub(crate) params: String,
        pub(crate) provenance: String,
        pub(crate) created_at: String,
    }
}

impl Store {
    /// Stores a parameter set with its summary rows (under the run it was fitted to); returns
    /// its id.
    pub async fn add_parameter_set(
        &self,
        name: &str,
        model_id: &str,
        params: &serde_json::Value,
        provenance: &serde_json::Value,
    ) -> Result<i64, Error> {
        let (params, provenance) = (
            serde_json::to_string(params)?,
            serde_json::to_string(provenance)?,
        );
        on!(self.writer(), |p, DB| {
            let mut tx = p.begin().await?;
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO parameter_sets (uuid, name, model_id, params, provenance, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
            )
            .bind(crate::backend::new_uuid())
            .bind(name)
            .bind(model_id)
            .bind(&params)
            .bind(&provenance)
            .bind(now_text())
            .fetch_one(&mut *tx)
            .await?;
            crate::summary::write_set(tx.conn(), id, model_id, &params, &provenance).await?;
            tx.commit().await?;
            Ok(id)
        })
    }

    /// Parameter sets, newest first, optionally of one model only.
    pub async fn parameter_sets(&self, model_id: Option<&str>) -> Result<Vec<ParameterSet>, Error> {
        let rows: Vec<ParameterSetRow> = on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT id, uuid, name, model_id, params, provenance, created_at
                 FROM parameter_sets
                 WHERE $1 IS NULL OR model_id = $1 ORDER BY created_at DESC, id DESC",
            )
            .bind(model_id)
            .fetch_all(p)
            .await?
        });
        rows.into_iter().map(ParameterSetRow::decode).collect()
    }

    /// The parameter set with this id.
    pub async fn parameter_set(&self, id: i64) -> Result<ParameterSet, Error> {
        let row: Option<ParameterSetRow> = on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT id, uuid, name, model_id, params, provenance, created_at
                 FROM parameter_sets WHERE id = $1",
            )
            .bind(id)
            .fetch_optional(p)
            .await?
        });
        row.ok_or_else(|| Error::NotFound {
            what: "parameter set",
            key: id.to_string(),
        })?
        .decode()
    }

    /// The newest parameter set named `name` (names need not be unique; the latest wins).
    pub async fn parameter_set_by_name(&self, name: &str) -> Result<ParameterSet, Error> {
        let row: Option<ParameterSetRow> = on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT id, uuid, name, model_id, params, provenance, created_at
                 FROM parameter_sets WHERE name = $1 ORDER BY created_at DESC, id DESC LIMIT 1",
            )
            .bind(name)
            .fetch_optional(p)
            .await?
        });
        row.ok_or_else(|| Error::NotFound {
            what: "parameter set",
            key: format!("'{name}'"),
        })?
        .decode()
    }
}

impl ParameterSetRow {
    fn decode(self) -> Result<ParameterSet, Error> {
        Ok(ParameterSet {
            id: self.id,
            uuid: self.uuid,
            name: self.name,
            model_id: self.model_id,
            params: serde_json::from_str(&self.params)?,
            provenance: serde_json::from_str(&self.provenance)?,
            created_at: self.created_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn parameter_sets_are_found_by_id_and_by_latest_name() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("runs.db")).await.unwrap();
        let prov = serde_json::json!({"runs": [1]});
        let a = store
            .add_parameter_set("bench", "lugre", &serde_json::json!({"fc": 1.0}), &prov)
            .await
            .unwrap();
        let b = store
            .add_parameter_set("bench", "lugre", &serde_json::json!({"fc": 2.0}), &prov)
            .await
            .unwrap();
        let first = store.parameter_set(a).await.unwrap();
        assert_eq!(
            (first.name.as_str(), first.params["fc"].as_f64()),
            ("bench", Some(1.0))
        );
        assert_eq!(first.provenance, prov);
        // Same name twice: the newest (same timestamp possible: the higher id) wins.
        assert_eq!(store.parameter_set_by_name("bench").await.unwrap().id, b);
        let err = store.parameter_set(b + 1).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("parameter set {} not found", b + 1)
        );
        let err = store.parameter_set_by_name("nope").await.unwrap_err();
        assert_eq!(err.to_string(), "parameter set 'nope' not found");
    }
}
