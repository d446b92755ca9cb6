//! `POST /api/runs/import`: `bench runs import` over REST. The body is the recording itself
//! (CSV, MAT-file or Parquet, with its content type), streamed to a temporary file beside the
//! database while it is hashed and counted — never held in memory, refused with 413 past
//! [`MAX_IMPORT_BYTES`] — then imported as the command line does. Options are query
//! parameters with the flags' names: `format`, `columns`, `scale` (repeatable), `geometry`,
//! `name`, `bench`, and `file`, the file's name (for the provenance and, without `format`,
//! its extension). Answers 201 with the import report; a refused file 422 naming the line and
//! column, with nothing stored.

use super::api::{ApiError, AppState};
use crate::import::{self, ImportError, ImportOptions, Source};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

/// Largest recording `POST /api/runs/import` takes \[bytes\] (1 GiB; larger ones: `bench runs
/// import` on the daemon's machine).
pub const MAX_IMPORT_BYTES: u64 = 1 << 30;

/// The path of the endpoint (the guard lets its file types through).
pub const PATH: &str = "/api/runs/import";

/// Content types a recording may be sent as. Never the types an HTML form or a "simple"
/// cross-site request can send (`text/plain`, forms): those stay refused (415).
pub const FILE_TYPES: &[&str] = &[
    "text/csv",
    "text/tab-separated-values",
    "application/octet-stream",
    "application/x-matlab-data",
    "application/vnd.apache.parquet",
    "application/x-parquet",
];

/// The query parameters it takes.
const KEYS: &[&str] = &[
    "file", "format", "columns", "scale", "geometry", "name", "bench",
];

/// Whether `ctype` (a `Content-Type` value) is one of [`FILE_TYPES`].
pub fn is_file_type(ctype: &str) -> bool {
    let media = ctype.split(';').next().unwrap_or_default().trim();
    FILE_TYPES.iter().any(|t| t.eq_ignore_ascii_case(media))
}

/// An import error as the API answers it: bad options and refused files 422, the rest 500.
fn api_error(e: ImportError) -> ApiError {
    match e {
        ImportError::Option { option, message } => ApiError::unprocessable(option, message),
        e @ ImportError::Data { .. } => ApiError::unprocessable("body", e.to_string()),
        ImportError::Store(e) => ApiError::store(e),
        e => ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            error: e.to_string(),
            field: None,
        },
    }
}

/// 413 naming the limit of `cap` bytes.
fn too_large(cap: u64) -> ApiError {
    ApiError {
        status: StatusCode::PAYLOAD_TOO_LARGE,
        error: format!(
            "the recording is over the limit of {cap} bytes ({} MiB) of POST /api/runs/import: \
             import it with `bench runs import` on the daemon's machine",
            cap >> 20
        ),
        field: Some("body".into()),
    }
}

/// The options and the file's name from the query.
fn options(pairs: &[(String, String)], ctype: &str) -> Result<(ImportOptions, String), ApiError> {
    let mut one = std::collections::HashMap::new();
    let mut scales = Vec::new();
    for (k, v) in pairs {
        if !KEYS.contains(&k.as_str()) {
            return Err(ApiError::bad_request(
                Some(k),
                format!("unknown query parameter '{k}' (known: {})", KEYS.join(", ")),
            ));
        }
        if k == "scale" {
            scales.push(v.clone());
        } else if one.insert(k.as_str(), v.as_str()).is_some() {
            return Err(ApiError::bad_request(
                Some(k),
                format!("query parameter '{k}' given twice"),
            ));
        }
    }
    let get = |k: &str| one.get(k).copied();
    let opts = ImportOptions::parse(
        get("format"),
        get("columns"),
        &scales,
        get("geometry"),
        get("name"),
        get("bench"),
    )
    .map_err(api_error)?;
    // Only the name: a path sent by a client means nothing here.
    let file = match get("file").map(|f| f.rsplit(['/', '\\']).next().unwrap_or(f).trim()) {
        Some("") => {
            return Err(ApiError::unprocessable(
                "file",
                "file must name the recording".into(),
            ));
        }
        Some(f) if f.chars().count() > 255 => {
            return Err(ApiError::unprocessable(
                "file",
                "file is longer than 255 characters".into(),
            ));
        }
        Some(f) => f.to_string(),
        None => match ctype {
            "text/csv" | "text/tab-separated-values" => "upload.csv".into(),
            "application/x-matlab-data" => "upload.mat".into(),
            "application/vnd.apache.parquet" | "application/x-parquet" => "upload.parquet".into(),
            _ => "upload".into(),
        },
    };
    Ok((opts, file))
}

/// Writes the body into a new temporary file in `dir`: its handle, size and SHA-256.
async fn spool(
    body: axum::body::Body,
    dir: &std::path::Path,
    cap: u64,
) -> Result<(tempfile::NamedTempFile, u64, String), ApiError> {
    let internal = |what: &str, e: std::io::Error| ApiError {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        error: format!("{what} in {}: {e}", dir.display()),
        field: None,
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
    headers: HeaderMap,
    q: Result<Query<Vec<(String, String)>>, QueryRejection>,
    body: axum::body::Body,
) -> Result<Response, ApiError> {
    let Query(pairs) = q.map_err(|e| ApiError::bad_request(None, format!("bad query: {e}")))?;
    let ctype = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("none");
    if !is_file_type(ctype) {
        return Err(ApiError {
            status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
            error: format!(
                "Content-Type ({ctype}) must be the recording's: one of {}",
                FILE_TYPES.join(", ")
            ),
            field: Some("Content-Type".into()),
        });
    }
    let media = ctype
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let (opts, file_name) = options(&pairs, &media)?;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_IMPORT_BYTES) {
        return Err(too_large(MAX_IMPORT_BYTES));
    }
    let dir = run_store::Location::from(&state.db_path)
        .file()
        .and_then(std::path::Path::parent)
        .filter(|d| !d.as_os_str().is_empty() && d.is_dir())
        .map(std::path::Path::to_path_buf)
        .unwrap_or_else(std::env::temp_dir);
    let (tmp, bytes, sha256) = spool(body, &dir, MAX_IMPORT_BYTES).await?;
    let source = Source {
        path: tmp.path().to_path_buf(),
        file_name,
        digest: Some((bytes, sha256)),
    };
    let report = import::import(&state.store, source, opts)
        .await
        .map_err(api_error)?;
    drop(tmp);
    state.hub.event(
        "run",
        serde_json::json!({"run_id": report.run_id, "status": "completed"}),
    );
    Ok((
        StatusCode::CREATED,
        axum::Json(serde_json::to_value(&report).unwrap_or_default()),
    )
        .into_response())
}

/// The endpoint's OpenAPI operation (`e401`, `e422`: the shared error answers).
pub fn openapi(e401: &serde_json::Value, e422: &serde_json::Value) -> serde_json::Value {
    use serde_json::json;
    let q = |name: &str, desc: &str| json!({"name": name, "in": "query", "required": false, "description": desc, "schema": {"type": "string"}});
    let file = json!({"schema": {"type": "string", "format": "binary"}});
    let types: serde_json::Map<String, serde_json::Value> = FILE_TYPES
        .iter()
        .map(|t| (t.to_string(), file.clone()))
        .collect();
    let error = |desc: &str| json!({"description": desc, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}});
    json!({"post": {
        "summary": "Import a recording made elsewhere (the body: a CSV, MATLAB level 5 MAT-file or Parquet file, streamed) as a run of kind `imported`, as `bench runs import` does; nothing is stored when it is refused",
        "parameters": [
            q("file", "the file's name (provenance; its extension gives the format when `format` is absent)"),
            q("format", "csv, mat or parquet (default: from `file`'s extension, else the first bytes)"),
            q("columns", "t=COL,x=COL,v=COL,u=COL,friction=COL (t required; default: the columns named so)"),
            {"name": "scale", "in": "query", "required": false, "description": "NAME=FACTOR, repeatable: multiplies a mapped column as read", "schema": {"type": "array", "items": {"type": "string"}}, "style": "form", "explode": true},
            q("geometry", "rotary (rad, rad/s, N m) or linear (m, m/s, N); default: the file's units, else rotary"),
            q("name", "the run's name (default: `file`)"),
            q("bench", "the bench the recording was made on (bench_id)")],
        "requestBody": {"required": true, "description": "the recording itself", "content": types},
        "responses": {
            "201": {"description": "the import report", "content": {"application/json": {"schema": {"type": "object", "properties": {
                "run_id": {"type": "integer"}, "name": {"type": "string"}, "kind": {"const": "imported"},
                "source": {"type": "object", "description": "file, bytes, sha256, format, read (how it was read)"},
                "columns": {"type": "object"}, "scales": {"type": "object"}, "units": {"type": "object"}, "stated_units": {"type": "object"},
                "geometry": {"enum": ["rotary", "linear"]}, "stats": {"type": "object", "description": "samples, t_first, t_last, dt_min, dt_max, dt_mean, largest_gap_at, uniform, ranges"},
                "seconds": {"type": "number"}, "mb_per_s": {"type": "number"}}}}}},
            "400": error("Unknown or repeated query parameter"),
            "401": e401.clone(),
            "413": error("The recording is over 1 GiB (the message names the limit)"),
            "415": error("Content-Type is not a recording's (text/csv, application/octet-stream, application/x-matlab-data, application/vnd.apache.parquet, ...)"),
            "422": e422.clone()}
    }})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_recording_types_pass_never_form_or_plain_text() {
        assert!(is_file_type("text/csv; charset=utf-8"));
        assert!(is_file_type("Application/Octet-Stream"));
        assert!(is_file_type("application/vnd.apache.parquet"));
        for no in [
            "text/plain",
            "multipart/form-data; boundary=x",
            "application/x-www-form-urlencoded",
            "application/json",
        ] {
            assert!(!is_file_type(no), "{no}");
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
}
