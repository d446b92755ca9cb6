//! The error every handler answers with ([`ApiError`]: `{"error", "field"}` and its status
//! code), the conversions from the layers below (scheduler, pool, store, fits), and the typed
//! success answers whose status is not 200 ([`Answer`]: [`Created`], [`Accepted`]). The
//! OpenAPI document learns each from its type; a handler's own error codes are listed at its
//! route ([`errors`]).

use super::pool::PoolError;
use super::scheduler::SchedulerError;
use super::schema::{only, response};
use aide::OperationOutput;
use aide::generate::GenContext;
use aide::openapi::{Operation, ReferenceOr, Response as DocResponse, StatusCode as DocStatus};
use aide::transform::TransformOperation;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use schemars::JsonSchema;
use serde::Serialize;

/// An error answer: `{"error": ..., "field": ...}` with its status code.
#[derive(Debug)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Message naming the field and the limit or rule.
    pub error: String,
    /// The offending field, if one.
    pub field: Option<String>,
}

impl ApiError {
    pub fn new(status: StatusCode, field: Option<&str>, error: String) -> ApiError {
        ApiError {
            status,
            error,
            field: field.map(str::to_string),
        }
    }

    /// 400.
    pub fn bad_request(field: Option<&str>, error: String) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, field, error)
    }

    /// 404.
    pub fn not_found(field: &str, error: String) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, Some(field), error)
    }

    /// 409.
    pub fn conflict(error: String) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, None, error)
    }

    /// 422.
    pub fn unprocessable(field: &str, error: String) -> ApiError {
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, Some(field), error)
    }

    /// A store error: unknown ids 404, bad arguments 400, the rest 500.
    pub fn store(e: run_store::Error) -> ApiError {
        match &e {
            run_store::Error::RunNotFound { .. } | run_store::Error::NotFound { .. } => {
                ApiError::new(StatusCode::NOT_FOUND, Some("id"), e.to_string())
            }
            run_store::Error::InvalidInput { field, .. } => {
                ApiError::new(StatusCode::BAD_REQUEST, Some(field), e.to_string())
            }
            _ => ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, None, e.to_string()),
        }
    }

    /// Input errors ([`bench_daemon::InputError`]) are 422, the rest 500.
    pub fn from_anyhow(e: anyhow::Error) -> ApiError {
        if let Some(input) = e.downcast_ref::<bench_daemon::InputError>() {
            return ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                Some("spec"),
                input.0.clone(),
            );
        }
        if let Some(store) = e.downcast_ref::<run_store::Error>()
            && matches!(
                store,
                run_store::Error::RunNotFound { .. } | run_store::Error::NotFound { .. }
            )
        {
            return ApiError::new(StatusCode::NOT_FOUND, Some("id"), store.to_string());
        }
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, None, format!("{e:#}"))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = axum::Json(ErrorBody {
            error: self.error,
            field: self.field,
        });
        (self.status, body).into_response()
    }
}

impl OperationOutput for ApiError {
    type Inner = ErrorBody;
}

/// An error as it is sent.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "Error")]
pub struct ErrorBody {
    /// Message naming the field and the limit or rule.
    pub error: String,
    /// The offending field, e.g. `params.velocities[1]`, `batch[2].params.repeats`.
    pub field: Option<String>,
}

/// A handler's answer.
pub type ApiResult<T> = Result<T, ApiError>;

impl From<SchedulerError> for ApiError {
    fn from(e: SchedulerError) -> ApiError {
        match e {
            SchedulerError::Conflict(m) => ApiError::conflict(m),
            SchedulerError::NotFound { field, message } => ApiError::not_found(field, message),
            SchedulerError::Invalid { field, message } => ApiError::unprocessable(&field, message),
            SchedulerError::Store(e) => ApiError::store(e),
            SchedulerError::Run(e) => ApiError::from_anyhow(e),
            SchedulerError::Unavailable(m) => {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, None, m)
            }
        }
    }
}

impl From<PoolError> for ApiError {
    fn from(e: PoolError) -> ApiError {
        SchedulerError::from(e).into()
    }
}

/// A JSON body with status `CODE` (`201 Created`, `202 Accepted`: the request is taken, its
/// effect follows).
#[derive(Debug)]
pub struct Answer<const CODE: u16, T>(pub T);

/// `201 Created` with a JSON body.
pub type Created<T> = Answer<201, T>;

/// `202 Accepted` with a JSON body.
pub type Accepted<T> = Answer<202, T>;

impl<const CODE: u16, T: Serialize> IntoResponse for Answer<CODE, T> {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(CODE).unwrap_or(StatusCode::OK);
        (status, axum::Json(self.0)).into_response()
    }
}

impl<const CODE: u16, T: JsonSchema> OperationOutput for Answer<CODE, T> {
    type Inner = T;

    fn operation_response(ctx: &mut GenContext, op: &mut Operation) -> Option<DocResponse> {
        axum::Json::<T>::operation_response(ctx, op)
    }

    fn inferred_responses(
        ctx: &mut GenContext,
        op: &mut Operation,
    ) -> Vec<(Option<DocStatus>, DocResponse)> {
        only(CODE, Self::operation_response(ctx, op))
    }
}

/// An error response of the document: `description` with the [`ErrorBody`] schema.
pub fn error_doc(ctx: &mut GenContext, description: &str) -> DocResponse {
    let schema = ctx.schema.subschema_for::<ErrorBody>();
    response(description, vec![("application/json", schema)])
}

/// Lists the errors a handler answers itself (the extractors' and the guard's are added for
/// it): `(status, when)`.
pub fn errors<'t>(mut op: TransformOperation<'t>, list: &[(u16, &str)]) -> TransformOperation<'t> {
    let operation = op.inner_mut();
    aide::generate::in_context(|ctx| {
        let responses = operation.responses.get_or_insert_with(Default::default);
        for (code, when) in list {
            responses.responses.insert(
                DocStatus::Code(*code),
                ReferenceOr::Item(error_doc(ctx, when)),
            );
        }
    });
    op
}
