//! Chains of runs: a continuation (`bench runs resume`) names the run it continues
//! (`runs.continues`, migration 0012); a chain is its first run and each continuation in turn.
//! A run has at most one continuation (a unique index), so a chain never forks.

use crate::backend::on;
use crate::{Error, Store};

/// Longest chain followed \[runs\]: a guard against a cycle a hand-edited database could hold.
const MAX_CHAIN: usize = 10_000;

impl Store {
    /// Links run `id` as the continuation of run `of`. Refused when `of` already has one.
    pub async fn set_continues(&self, id: i64, of: i64) -> Result<(), Error> {
        if let Some(next) = self.continued_by(of).await? {
            return Err(Error::InvalidInput {
                field: "id",
                value: of.to_string(),
                rule: format!("run {of} is already continued by run {next}: resume that one"),
            });
        }
        on!(self.writer(), |p, DB| {
            sqlx::query("UPDATE runs SET continues = $1 WHERE id = $2")
                .bind(of)
                .bind(id)
                .execute(p)
                .await?
                .rows_affected()
        });
        Ok(())
    }

    /// The run that continues run `id`, if any.
    pub async fn continued_by(&self, id: i64) -> Result<Option<i64>, Error> {
        Ok(on!(self.reader(), |p, DB| {
            sqlx::query_scalar("SELECT id FROM runs WHERE continues = $1")
                .bind(id)
                .fetch_optional(p)
                .await?
        }))
    }

    /// The run that run `id` continues, if any.
    pub async fn continues(&self, id: i64) -> Result<Option<i64>, Error> {
        let found: Option<Option<i64>> = on!(self.reader(), |p, DB| {
            sqlx::query_scalar("SELECT continues FROM runs WHERE id = $1")
                .bind(id)
                .fetch_optional(p)
                .await?
        });
        found.ok_or(Error::RunNotFound { id })
    }

    /// The chain run `id` belongs to, first run first (just `[id]` for a run never resumed).
    pub async fn chain(&self, id: i64) -> Result<Vec<i64>, Error> {
        let mut back = vec![id];
        while let Some(prev) = self.continues(*back.last().unwrap_or(&id)).await? {
            if back.len() >= MAX_CHAIN || back.contains(&prev) {
                break;
            }
            back.push(prev);
        }
        back.reverse();
        let mut last = id;
        while let Some(next) = self.continued_by(last).await? {
            if back.len() >= MAX_CHAIN || back.contains(&next) {
                break;
            }
            back.push(next);
            last = next;
        }
        Ok(back)
    }
}
