//! What a handler takes from the URL: typed query parameters ([`Query`], 400 naming the one
//! that is unknown or of the wrong type) and the id in the path (404 for one that is not an
//! integer, as for one that is not there). The document learns each from its type.

use super::error::{ApiError, error_doc};
use super::named::{from_query, query_params};
use aide::OperationInput;
use aide::generate::GenContext;
use aide::openapi::{Operation, Response as DocResponse, StatusCode as DocStatus};
use aide::operation::{ParamLocation, add_parameters, parameters_from_schema};
use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

/// The query string read into `T`: 400 naming an unknown key or a value `T` cannot take.
#[derive(Debug)]
pub struct Query<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let text = parts.uri.query().unwrap_or_default();
        let params = query_params(text, &[])
            .map(serde_json::Value::Object)
            .map_err(|k| {
                ApiError::bad_request(Some(&k), format!("query parameter '{k}' given twice"))
            })?;
        from_query(&params).map(Query).map_err(|e| {
            let field = e.inner().field_at(&e.path().to_string());
            ApiError::bad_request(Some(&field), format!("{field}: {}", e.inner()))
        })
    }
}

impl<T: JsonSchema> OperationInput for Query<T> {
    fn operation_input(ctx: &mut GenContext, op: &mut Operation) {
        let schema = ctx.schema.subschema_for::<T>();
        let params = parameters_from_schema(ctx, schema, ParamLocation::Query);
        add_parameters(ctx, op, params);
    }

    fn inferred_early_responses(
        ctx: &mut GenContext,
        _: &mut Operation,
    ) -> Vec<(Option<DocStatus>, DocResponse)> {
        let e = error_doc(
            ctx,
            "An unknown query parameter or a value of the wrong type",
        );
        vec![(Some(DocStatus::Code(400)), e)]
    }
}

/// The `{id}` of the path, as text.
async fn path_text<S: Send + Sync>(parts: &mut Parts, state: &S) -> Result<String, ApiError> {
    Path::<String>::from_request_parts(parts, state)
        .await
        .map(|Path(t)| t)
        .map_err(|e| ApiError::bad_request(Some("id"), e.body_text()))
}

/// Documents the path's `id` with `schema`.
fn id_doc(ctx: &mut GenContext, op: &mut Operation, schema: schemars::Schema) {
    let mut params = parameters_from_schema(
        ctx,
        schemars::json_schema!({"type": "object", "required": ["id"], "properties": {"id": schema}}),
        ParamLocation::Path,
    );
    add_parameters(ctx, op, params.drain(..));
}

/// A path id of a stored thing: a non-integer is not found (404), as a missing one.
macro_rules! stored_id {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub struct $name(pub i64);

        impl<S: Send + Sync> FromRequestParts<S> for $name {
            type Rejection = ApiError;

            async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
                let text = path_text(parts, state).await?;
                text.parse().map($name).map_err(|_| {
                    let msg = format!(concat!($what, " '{}' not found (ids are integers)"), text);
                    ApiError::not_found("id", msg)
                })
            }
        }

        impl OperationInput for $name {
            fn operation_input(ctx: &mut GenContext, op: &mut Operation) {
                let schema = schemars::json_schema!({
                    "type": "integer", "format": "int64", "description": concat!($what, " id"),
                });
                id_doc(ctx, op, schema);
            }

            fn inferred_early_responses(
                ctx: &mut GenContext,
                _: &mut Operation,
            ) -> Vec<(Option<DocStatus>, DocResponse)> {
                let e = error_doc(ctx, concat!("No such ", $what));
                vec![(Some(DocStatus::Code(404)), e)]
            }
        }
    };
}

stored_id!(
    /// `{id}` of a run.
    RunId,
    "run"
);
stored_id!(
    /// `{id}` of a characterisation campaign.
    CampaignId,
    "campaign"
);
stored_id!(
    /// `{id}` of a schedule entry.
    EntryId,
    "schedule entry"
);
stored_id!(
    /// `{id}` of a parameter set.
    SetId,
    "parameter set"
);

/// `{id}` of a fit or comparison in progress: a non-integer is 422.
#[derive(Clone, Copy, Debug)]
pub struct FitId(pub u64);

impl<S: Send + Sync> FromRequestParts<S> for FitId {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let text = path_text(parts, state).await?;
        text.parse()
            .map(FitId)
            .map_err(|_| ApiError::unprocessable("id", format!("id '{text}' must be a fit id")))
    }
}

impl OperationInput for FitId {
    fn operation_input(ctx: &mut GenContext, op: &mut Operation) {
        let schema = schemars::json_schema!({
            "type": "integer", "minimum": 1, "maximum": 9_007_199_254_740_991_u64,
            "description": "fit id (fit_id, GET /api/fits)",
        });
        id_doc(ctx, op, schema);
    }

    fn inferred_early_responses(
        ctx: &mut GenContext,
        _: &mut Operation,
    ) -> Vec<(Option<DocStatus>, DocResponse)> {
        let e = error_doc(ctx, "An id that is not a fit id");
        vec![(Some(DocStatus::Code(422)), e)]
    }
}
