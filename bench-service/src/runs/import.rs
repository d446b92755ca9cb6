//! `POST /api/runs/import`: `bench runs import` over REST. The body is the recording itself
//! (CSV, MAT-file or Parquet, with its content type), streamed to a temporary file beside the
//! database while it is hashed and counted — never held in memory, refused with 413 past
//! [`MAX_IMPORT_BYTES`] — then imported as the command line does. Options are query
//! parameters with the flags' names ([`ImportQuery`]). Answers 201 with the import report; a
//! refused file 422 naming the line and column, with nothing stored.

use crate::body::{RECORDING_TYPES, is_recording_type};
use crate::error::{Answer, ApiError, ApiResult, Created, error_doc};
use crate::extract::Query;
use crate::named::{from_query, query_params};
use crate::scheduler::RunEvent;
use crate::schema::{media, opaque};
use crate::state::AppState;
use aide::OperationInput;
use aide::generate::GenContext;
use aide::openapi::{Operation, RequestBody, Response as DocResponse, StatusCode as DocStatus};
use axum::extract::{FromRequest, FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use futures_util::StreamExt;
use recording_import::{ImportError, ImportOptions, Source};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

/// Largest recording `POST /api/runs/import` takes \[bytes\] (1 GiB; larger ones: `bench runs
/// import` on the daemon's machine).
pub const MAX_IMPORT_BYTES: u64 = 1 << 30;

/// The options of an import: the flags of `bench runs import`, by their names.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportQuery {
    /// The file's name (provenance; its extension gives the format when `format` is absent).
    file: Option<String>,
    /// csv, mat or parquet (default: from `file`'s extension, else the first bytes).
    format: Option<String>,
    /// t=COL,x=COL,v=COL,u=COL,friction=COL (t required; default: the columns named so).
    columns: Option<String>,
    /// NAME=FACTOR, repeatable: multiplies a mapped column as read.
    #[serde(default)]
    scale: Vec<String>,
    /// rotary (rad, rad/s, N m) or linear (m, m/s, N); default: the file's units, else rotary.
    geometry: Option<String>,
    /// The run's name (default: `file`).
    name: Option<String>,
    /// The bench the recording was made on (bench_id).
    bench: Option<String>,
}

/// The query parameters a client may repeat.
const LISTS: &[&str] = &["scale"];

impl<S: Send + Sync> FromRequestParts<S> for ImportQuery {
    type Rejection = ApiError;

    /// 400 naming a parameter that is unknown, or given twice but not a list.
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let text = parts.uri.query().unwrap_or_default();
        let params = query_params(text, LISTS).map(Value::Object).map_err(|k| {
            ApiError::bad_request(Some(&k), format!("query parameter '{k}' given twice"))
        })?;
        from_query(&params).map_err(|e| {
            let field = e.inner().field_at(&e.path().to_string());
            let message = format!("query parameter '{field}': {}", e.inner());
            ApiError::bad_request(Some(&field), message)
        })
    }
}

/// Documented as a typed query ([`Query`]) is: its parameters from its schema.
impl OperationInput for ImportQuery {
    fn operation_input(ctx: &mut GenContext, op: &mut Operation) {
        Query::<ImportQuery>::operation_input(ctx, op);
    }

    fn inferred_early_responses(
        ctx: &mut GenContext,
        op: &mut Operation,
    ) -> Vec<(Option<DocStatus>, DocResponse)> {
        Query::<ImportQuery>::inferred_early_responses(ctx, op)
    }
}

impl ImportQuery {
    /// The import's options and the file's name (`media`: the body's content type).
    fn options(self, media: &str) -> Result<(ImportOptions, String), ApiError> {
        let opts = ImportOptions::parse(
            self.format.as_deref(),
            self.columns.as_deref(),
            &self.scale,
            self.geometry.as_deref(),
            self.name.as_deref(),
            self.bench.as_deref(),
        )
        .map_err(api_error)?;
        // Only the name: a path sent by a client means nothing here.
        let file = self.file.as_deref();
        let file = match file.map(|f| f.rsplit(['/', '\\']).next().unwrap_or(f).trim()) {
            Some("") => {
                let msg = "file must name the recording".into();
                return Err(ApiError::unprocessable("file", msg));
            }
            Some(f) if f.chars().count() > 255 => {
                let msg = "file is longer than 255 characters".into();
                return Err(ApiError::unprocessable("file", msg));
            }
            Some(f) => f.to_string(),
            None => default_name(media).into(),
        };
        Ok((opts, file))
    }
}

/// The file's name when the client gives none, by its content type.
fn default_name(media: &str) -> &'static str {
    match media {
        "text/csv" | "text/tab-separated-values" => "upload.csv",
        "application/x-matlab-data" => "upload.mat",
        "application/vnd.apache.parquet" | "application/x-parquet" => "upload.parquet",
        _ => "upload",
    }
}

/// The body: a recording in one of [`RECORDING_TYPES`] (else 415), its declared length within
/// [`MAX_IMPORT_BYTES`] (else 413 before a byte is read); read as a stream, never held whole.
#[derive(Debug)]
pub struct Recording {
    /// The media type, lower case, without parameters.
    media: String,
    body: axum::body::Body,
}

impl<S: Send + Sync> FromRequest<S> for Recording {
    type Rejection = ApiError;

    async fn from_request(req: Request, _: &S) -> Result<Self, ApiError> {
        let headers = req.headers();
        let ctype = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("none");
        if !is_recording_type(ctype) {
            let error = format!(
                "Content-Type ({ctype}) must be the recording's: one of {}",
                RECORDING_TYPES.join(", ")
            );
            let status = StatusCode::UNSUPPORTED_MEDIA_TYPE;
            return Err(ApiError::new(status, Some("Content-Type"), error));
        }
        let media = ctype.split(';').next().unwrap_or_default();
        let media = media.trim().to_ascii_lowercase();
        let declared = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > MAX_IMPORT_BYTES) {
            return Err(too_large(MAX_IMPORT_BYTES));
        }
        Ok(Recording {
            media,
            body: req.into_body(),
        })
    }
}

impl OperationInput for Recording {
    fn operation_input(_: &mut GenContext, op: &mut Operation) {
        let file = schemars::json_schema!({"type": "string", "format": "binary"});
        op.request_body = Some(aide::openapi::ReferenceOr::Item(RequestBody {
            description: Some("the recording itself".into()),
            content: RECORDING_TYPES
                .iter()
                .map(|t| (t.to_string(), media(file.clone())))
                .collect(),
            required: true,
            extensions: Default::default(),
        }));
    }

    fn inferred_early_responses(
        ctx: &mut GenContext,
        _: &mut Operation,
    ) -> Vec<(Option<DocStatus>, DocResponse)> {
        let types = RECORDING_TYPES.join(", ");
        vec![
            (
                Some(DocStatus::Code(413)),
                error_doc(
                    ctx,
                    "The recording is over 1 GiB (the message names the limit)",
                ),
            ),
            (
                Some(DocStatus::Code(415)),
                error_doc(ctx, &format!("Content-Type is not a recording's ({types})")),
            ),
            (
                Some(DocStatus::Code(422)),
                error_doc(
                    ctx,
                    "A refused file (the message names the line and column) or option (`field` names it); nothing is stored",
                ),
            ),
        ]
    }
}

opaque!(
    /// What an import stored and how it read the file.
    ImportReport,
    {"type": "object", "properties": {
        "run_id": {"type": "integer"}, "name": {"type": "string"}, "kind": {"const": "imported"},
        "source": {"type": "object", "description": "file, bytes, sha256, format, read (how it was read)"},
        "columns": {"type": "object"}, "scales": {"type": "object"}, "units": {"type": "object"},
        "stated_units": {"type": "object"}, "geometry": {"enum": ["rotary", "linear"]},
        "stats": {"type": "object", "description": "samples, t_first, t_last, dt_min, dt_max, dt_mean, largest_gap_at, uniform, ranges"},
        "seconds": {"type": "number"}, "mb_per_s": {"type": "number"}}}
);

/// An import error as the API answers it: bad options and refused files 422, the rest 500.
fn api_error(e: ImportError) -> ApiError {
    match e {
        ImportError::Option { option, message } => ApiError::unprocessable(option, message),
        e @ ImportError::Data { .. } => ApiError::unprocessable("body", e.to_string()),
        ImportError::Store(e) => ApiError::store(e),
        e => ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, None, e.to_string()),
    }
}

/// 413 naming the limit of `cap` bytes.
fn too_large(cap: u64) -> ApiError {
    let error = format!(
        "the recording is over the limit of {cap} bytes ({} MiB) of POST /api/runs/import: \
         import it with `bench runs import` on the daemon's machine",
        cap >> 20
    );
    ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, Some("body"), error)
}

/// Writes the body into a new temporary file in `dir`: its handle, size and SHA-256.
async fn spool(
    body: axum::body::Body,
    dir: &std::path::Path,
    cap: u64,
) -> Result<(tempfile::NamedTempFile, u64, String), ApiError> {
    let internal = |what: &str, e: std::io::Error| {
        let error = format!("{what} in {}: {e}", dir.display());
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, None, error)
    };
    let tmp = tempfile::Builder::new()
        .prefix(".import-")
        .tempfile_in(dir)
        .map_err(|e| internal("creating the upload file", e))?;
    let std_file = tmp
        .reopen()
        .map_err(|e| internal("opening the upload file", e))?;
    let mut file = tokio::fs::File::from_std(std_file);
    let mut hasher = Sha256::new();
    let mut bytes = 0u64;
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk
            .map_err(|e| ApiError::bad_request(Some("body"), format!("reading the body: {e}")))?;
        bytes += chunk.len() as u64;
        if bytes > cap {
            return Err(too_large(cap));
        }
        hasher.update(&chunk);
        file.write_all(&chunk)
            .await
            .map_err(|e| internal("writing the upload", e))?;
    }
    file.flush()
        .await
        .map_err(|e| internal("writing the upload", e))?;
    Ok((tmp, bytes, format!("{:x}", hasher.finalize())))
}

/// `POST /api/runs/import`.
pub async fn import_run(
    State(state): State<AppState>,
    query: ImportQuery,
    recording: Recording,
) -> ApiResult<Created<ImportReport>> {
    let (opts, file_name) = query.options(&recording.media)?;
    let dir = run_store::Location::from(&state.db_path)
        .file()
        .and_then(std::path::Path::parent)
        .filter(|d| !d.as_os_str().is_empty() && d.is_dir())
        .map(std::path::Path::to_path_buf)
        .unwrap_or_else(std::env::temp_dir);
    let (tmp, bytes, sha256) = spool(recording.body, &dir, MAX_IMPORT_BYTES).await?;
    let source = Source {
        path: tmp.path().to_path_buf(),
        file_name,
        digest: Some((bytes, sha256)),
    };
    let report = recording_import::import(&state.store, source, opts)
        .await
        .map_err(api_error)?;
    drop(tmp);
    let done = RunEvent {
        run_id: report.run_id,
        status: run_store::RunStatus::Completed,
    };
    state.hub.event("run", &done);
    let report = serde_json::to_value(&report).map_err(|e| ApiError::from_anyhow(e.into()))?;
    Ok(Answer(ImportReport(report)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_recording_types_pass_never_form_or_plain_text() {
        assert!(is_recording_type("text/csv; charset=utf-8"));
        assert!(is_recording_type("Application/Octet-Stream"));
        assert!(is_recording_type("application/vnd.apache.parquet"));
        for no in [
            "text/plain",
            "multipart/form-data; boundary=x",
            "application/x-www-form-urlencoded",
            "application/json",
        ] {
            assert!(!is_recording_type(no), "{no}");
        }
    }

    #[tokio::test]
    async fn a_body_past_the_cap_is_refused_and_its_file_removed() {
        let dir = tempfile::tempdir().unwrap();
        let chunks: Vec<Result<axum::body::Bytes, std::io::Error>> = (0..5)
            .map(|_| Ok(axum::body::Bytes::from(vec![b'1'; 1000])))
            .collect();
        let body = axum::body::Body::from_stream(futures_util::stream::iter(chunks));
        let err = spool(body, dir.path(), 4500).await.unwrap_err();
        assert_eq!(err.status, StatusCode::PAYLOAD_TOO_LARGE);
        assert!(err.error.contains("limit of 4500 bytes"), "{}", err.error);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "no upload file left"
        );
        let chunks: Vec<Result<axum::body::Bytes, std::io::Error>> = (0..4)
            .map(|_| Ok(axum::body::Bytes::from(vec![b'1'; 1000])))
            .collect();
        let body = axum::body::Body::from_stream(futures_util::stream::iter(chunks));
        let (tmp, n, sha) = spool(body, dir.path(), 4500).await.unwrap();
        assert_eq!(n, 4000);
        assert_eq!(std::fs::read(tmp.path()).unwrap(), vec![b'1'; 4000]);
        assert_eq!(sha, format!("{:x}", Sha256::digest(vec![b'1'; 4000])));
    }

    fn query(text: &str) -> Result<ImportQuery, ApiError> {
        let req = axum::http::Request::builder()
            .uri(format!("/api/runs/import?{text}"))
            .body(())
            .unwrap();
        let (mut parts, ()) = req.into_parts();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(ImportQuery::from_request_parts(&mut parts, &()))
    }

    #[test]
    fn the_query_takes_the_flags_scale_repeated_and_names_what_it_refuses() {
        let q = query("file=a.csv&scale=x=0.5&scale=v=2&geometry=linear").unwrap();
        assert_eq!(q.scale, ["x=0.5", "v=2"]);
        assert_eq!(q.geometry.as_deref(), Some("linear"));
        let e = query("file=a.csv&colums=t=t").unwrap_err();
        assert_eq!(
            (e.status, e.field.as_deref()),
            (StatusCode::BAD_REQUEST, Some("colums"))
        );
        let e = query("name=a&name=b").unwrap_err();
        assert_eq!(
            (e.status, e.field.as_deref()),
            (StatusCode::BAD_REQUEST, Some("name"))
        );
        let (_, file) = query("file=dir/rec.mat")
            .unwrap()
            .options("text/csv")
            .unwrap();
        assert_eq!(file, "rec.mat");
        let (_, file) = query("").unwrap().options("application/x-parquet").unwrap();
        assert_eq!(file, "upload.parquet");
        let e = query("file=%20").unwrap().options("text/csv").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("file"));
    }
}
