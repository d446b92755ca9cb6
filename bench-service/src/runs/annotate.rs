//! `PATCH /api/runs/{id}`: a run's tags and notes edited after the fact (operator), as
//! `bench runs tag` and `bench runs note` do; the audit entry keeps the old and new values.

use super::super::audit::{Marked, Touched};
use super::super::body::Json;
use super::super::error::{ApiError, ApiResult};
use super::super::extract::RunId;
use super::super::guard::Caller;
use super::super::state::AppState;
use axum::Extension;
use axum::extract::State;
use run_store::{Annotated, Annotation, AuditEntry};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// A tag: letters, digits, `.`, `_`, `:`, `-`, at most 64, not starting with `-`.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub(super) struct Tag(String);

impl JsonSchema for Tag {
    fn schema_name() -> Cow<'static, str> {
        "Tag".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "pattern": "^[A-Za-z0-9._:][A-Za-z0-9._:-]{0,63}$"})
    }
}

/// An edit of a run's tags and notes; what is absent stays as it is.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RunEdit {
    /// The whole tag list, replacing the run's (`add` and `remove` then apply to it).
    #[schemars(length(max = 32))]
    tags: Option<Vec<Tag>>,
    /// Tags to add (a run takes at most 32).
    #[schemars(length(max = 32))]
    add: Option<Vec<Tag>>,
    /// Tags to remove (absent ones are ignored).
    remove: Option<Vec<String>>,
    /// The run's notes, replacing them ("" clears them); at most 64 KiB (65 536 bytes).
    #[schemars(length(max = 65536))]
    notes: Option<String>,
}

/// A run's tags and notes after an edit.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct Annotations {
    /// Tags, sorted.
    tags: Vec<String>,
    /// Notes, if any.
    notes: Option<String>,
}

fn strings(tags: Option<Vec<Tag>>) -> Option<Vec<String>> {
    tags.map(|t| t.into_iter().map(|Tag(t)| t).collect())
}

/// `PATCH /api/runs/{id}`.
pub(super) async fn patch(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    RunId(id): RunId,
    Json(body): Json<RunEdit>,
) -> ApiResult<Marked<axum::Json<Annotations>>> {
    // The lists as the document bounds them, duplicates counted (the store checks the tags
    // the run ends with).
    for (field, n) in [("tags", body.tags.as_ref()), ("add", body.add.as_ref())] {
        let n = n.map_or(0, Vec::len);
        if n > run_store::MAX_TAGS {
            return Err(ApiError::bad_request(
                Some(field),
                format!("{field} lists {n} tags: at most {}", run_store::MAX_TAGS),
            ));
        }
    }
    let edit = Annotation {
        set: strings(body.tags),
        add: strings(body.add).unwrap_or_default(),
        remove: body.remove.unwrap_or_default(),
        notes: body.notes,
    };
    let entry = AuditEntry {
        bench_id: state.loaded.config.bench_id.clone(),
        user: caller.user.as_deref().map(str::to_string),
        role: caller.role.map(|r| r.to_string()),
        remote: caller.remote.clone(),
        method: "PATCH".into(),
        path: format!("/api/runs/{id}"),
        status: 200,
        allowed: true,
        ..AuditEntry::default()
    };
    let (_, after): (Annotated, Annotated) = state
        .store
        .annotate(id, &edit, entry)
        .await
        .map_err(ApiError::store)?;
    let answer = Annotations {
        tags: after.tags,
        notes: after.notes,
    };
    // The entry is written: it holds the old and new values.
    let touched = Touched {
        run_id: Some(id),
        written: true,
        ..Touched::default()
    };
    Ok(Marked(axum::Json(answer), touched))
}
