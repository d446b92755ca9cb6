//! The router: every resource's routes (each module adds its own, documented by their types),
//! the OpenAPI document generated from them, the live stream, `/metrics` and the dashboard,
//! behind the body limit, the guard and the lab view's refusal.

use super::error::ApiError;
use super::schema::opaque;
use super::state::AppState;
use aide::axum::ApiRouter;
use aide::axum::routing::get_with;
use axum::extract::State;
use axum::http::{Method, StatusCode};
use axum::middleware;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Extension, Json, Router};
use std::path::Path as FsPath;
use std::sync::Arc;

/// Every documented route: one line per resource module.
fn routes() -> ApiRouter<AppState> {
    ApiRouter::new()
        .merge(super::bench::routes())
        .merge(super::runs::routes())
        .merge(super::campaigns::routes())
        .merge(super::queue::routes())
        .merge(super::schedule::routes())
        .merge(super::params::routes())
        .merge(super::fits::routes())
        .merge(super::estop::routes())
        .merge(super::live::routes())
        .merge(super::metrics::routes())
        .merge(super::audit::routes())
        .merge(super::trends::routes())
        .merge(super::procedures::routes())
        .merge(super::lab_benches::routes())
        .merge(super::sensors::routes())
        .merge(super::curves::routes())
        .api_route(
            "/api/openapi.json",
            get_with(openapi, |op| op.summary("This document")),
        )
}

opaque!(
    /// The OpenAPI 3.1 document.
    Document,
    {"type": "object"}
);

async fn openapi(Extension(doc): Extension<Arc<serde_json::Value>>) -> Json<Document> {
    Json(Document(doc.as_ref().clone()))
}

/// The OpenAPI document of [`router`] (what `/api/openapi.json` serves).
pub fn document() -> serde_json::Value {
    let mut api = super::openapi::api();
    let _ = routes().finish_api(&mut api);
    super::openapi::finish(&api)
}

/// The router: the API, the live stream, the OpenAPI document and the dashboard.
/// `web`: a dashboard directory (`--web`), else the dashboard embedded at build time.
pub fn router(state: AppState, web: Option<&FsPath>) -> Router {
    let mut api = super::openapi::api();
    let routes = routes().finish_api(&mut api);
    let doc = Arc::new(super::openapi::finish(&api));
    let api = routes
        .layer(Extension(doc))
        .route("/api/{*rest}", any(api_not_found));
    let app = match web {
        Some(dir) if dir.is_dir() => api.fallback_service(tower_http::services::ServeDir::new(dir)),
        None if super::web::embedded() => api.fallback(super::web::serve),
        _ => {
            let page = not_built_page(web);
            api.route("/", get(move || async move { Html(page) }))
                .fallback(api_not_found)
        }
    };
    layered(app, state)
}

/// Just the e-stop, behind the same layers: what the HTTP front ([`super::front`]) answers on
/// its own thread.
pub fn estop_router(state: AppState) -> Router {
    let estop = Router::new()
        .route("/api/estop", post(super::estop::estop))
        .fallback(api_not_found);
    layered(estop, state)
}

/// The body limit and the guard (Host, Origin, content type, token) around `routes`.
fn layered(routes: Router<AppState>, state: AppState) -> Router {
    routes
        .layer(middleware::from_fn_with_state(state.lab, read_only_lab))
        .layer(axum::extract::DefaultBodyLimit::max(
            super::body::MAX_BODY_BYTES,
        ))
        .layer(middleware::from_fn_with_state(
            state.guard.clone(),
            super::guard::guard,
        ))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            super::audit::audit,
        ))
        .layer(middleware::from_fn(slow_requests))
        .with_state(state)
}

/// Requests whose answer took longer than this are logged (a request should never wait on
/// the bench: the engine-room goal is 1 s at most on any mutating route).
pub const SLOW_REQUEST: std::time::Duration = std::time::Duration::from_secs(1);

/// Logs every request answered after [`SLOW_REQUEST`] or more (to its headers; a stream's body
/// goes on after), with its method, path and status: what to look at when a client timed out.
async fn slow_requests(req: axum::extract::Request, next: middleware::Next) -> Response {
    let (method, path) = (req.method().clone(), req.uri().path().to_string());
    let t0 = std::time::Instant::now();
    let answer = next.run(req).await;
    let took = t0.elapsed();
    if took >= SLOW_REQUEST {
        tracing::warn!(
            "slow request: {method} {path} answered {} after {} ms",
            answer.status().as_u16(),
            took.as_millis()
        );
    }
    answer
}

/// In a lab view (`bench serve --lab`), every call but GET, HEAD and OPTIONS is answered 409
/// before it reaches its handler: nothing there can change the store or move a bench.
async fn read_only_lab(
    State(lab): State<bool>,
    req: axum::extract::Request,
    next: middleware::Next,
) -> Response {
    let reads = [Method::GET, Method::HEAD, Method::OPTIONS];
    if lab && !reads.contains(req.method()) {
        return ApiError::conflict(format!(
            "{} {}: this is a lab view (bench serve --lab), read-only with no bench attached; \
             run, queue, fit and compare on a bench's own daemon, then bench runs push",
            req.method(),
            req.uri().path()
        ))
        .into_response();
    }
    next.run(req).await
}

fn not_built_page(web: Option<&FsPath>) -> String {
    let missing = match web {
        Some(dir) => format!("no directory <code>{}</code>", dir.display()),
        None => "this binary was compiled without <code>web/dist</code>".to_string(),
    };
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>frictionbench</title></head>\
         <body><h1>frictionbench</h1><p>The dashboard is not built: {missing}.</p>\
         <p>Build it with <code>cd web &amp;&amp; npm ci &amp;&amp; npm run build</code>, then rebuild \
         <code>bench</code> (which embeds it) or point <code>--web DIR</code> at the build.</p>\
         <p>The REST API is up: <a href=\"/api/health\">/api/health</a>, \
         <a href=\"/api/openapi.json\">/api/openapi.json</a>.</p></body></html>"
    )
}

async fn api_not_found(method: Method, uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        None,
        format!(
            "no such endpoint: {method} {} (see /api/openapi.json)",
            uri.path()
        ),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    fn responses<'a>(
        doc: &'a Value,
        path: &str,
        method: &str,
    ) -> &'a serde_json::Map<String, Value> {
        doc["paths"][path][method]["responses"]
            .as_object()
            .unwrap_or_else(|| panic!("{method} {path} is not documented"))
    }

    #[test]
    fn every_route_is_documented_with_the_answers_of_its_checks() {
        let doc = super::document();
        let paths = doc["paths"].as_object().unwrap();
        // The routes users' scripts rely on are all there (a new route needs no edit here: the
        // document is generated from the router, so it cannot be missing from it).
        for path in [
            "/api/audit",
            "/api/bench",
            "/api/campaigns",
            "/api/campaigns/{id}",
            "/api/campaigns/{id}/report",
            "/api/comparisons",
            "/api/estop",
            "/api/estop/reset",
            "/api/experiments/check",
            "/api/experiments/kinds",
            "/api/faults/reset",
            "/api/fits",
            "/api/fits/{id}",
            "/api/health",
            "/api/lab/benches",
            "/api/live",
            "/api/models",
            "/api/openapi.json",
            "/api/parameter-sets",
            "/api/parameter-sets/{id}",
            "/api/queue",
            "/api/queue/{id}",
            "/api/runs",
            "/api/runs/import",
            "/api/runs/{id}",
            "/api/runs/{id}/abort",
            "/api/runs/{id}/diff",
            "/api/runs/{id}/export",
            "/api/runs/{id}/results",
            "/api/runs/{id}/resume",
            "/api/runs/{id}/samples",
            "/api/runs/{id}/stop",
            "/api/schedule",
            "/api/schedule/check",
            "/api/schedule/{id}",
            "/metrics",
        ] {
            assert!(paths.contains_key(path), "{path} is not in the document");
        }
        for (p, ops) in paths {
            for (m, op) in ops.as_object().unwrap() {
                let r = op["responses"].as_object().unwrap();
                assert!(r.keys().any(|c| c.starts_with('2')), "{m} {p}: no success");
                assert_eq!(r.contains_key("421"), p != "/api/estop", "{m} {p}");
            }
        }
        let create = responses(&doc, "/api/runs", "post");
        for code in ["201", "400", "403", "409", "413", "415", "422", "503"] {
            assert!(create.contains_key(code), "POST /api/runs: {code}");
        }
        // The recording's own answers, not those of a JSON body.
        let import = responses(&doc, "/api/runs/import", "post");
        for code in ["201", "400", "401", "413", "415", "422"] {
            assert!(import.contains_key(code), "POST /api/runs/import: {code}");
        }
        assert!(
            import["413"]["description"]
                .as_str()
                .unwrap()
                .contains("1 GiB")
        );
        let types = &doc["paths"]["/api/runs/import"]["post"]["requestBody"]["content"];
        assert!(types["text/csv"].is_object() && types["application/json"].is_null());
        assert!(!responses(&doc, "/api/health", "get").contains_key("401"));
        assert!(responses(&doc, "/api/runs/{id}", "get").contains_key("404"));
        assert!(responses(&doc, "/api/fits/{id}", "delete").contains_key("422"));
    }

    #[test]
    fn bodies_and_queries_are_documented_from_their_types() {
        let doc = super::document();
        let schema = |name: &str| &doc["components"]["schemas"][name];
        let body = |path: &str, method: &str| {
            let s =
                &doc["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"];
            let name = s["$ref"]
                .as_str()
                .unwrap_or_default()
                .rsplit('/')
                .next()
                .unwrap_or_default();
            schema(name).clone()
        };
        // deny_unknown_fields: an unknown key is refused, and the document says so.
        let fit = body("/api/fits", "post");
        assert_eq!(fit["additionalProperties"], false, "{fit}");
        assert_eq!(
            fit["required"],
            serde_json::json!(["model", "procedure", "run"])
        );
        assert_eq!(
            fit["properties"]["timeout_s"]["exclusiveMinimum"], 0,
            "{fit}"
        );
        let edit = body("/api/queue", "put");
        assert_eq!(edit["additionalProperties"], false, "{edit}");
        assert!(edit["properties"]["on_failure"].is_object(), "{edit}");
        let params = doc["paths"]["/api/runs"]["get"]["parameters"]
            .as_array()
            .unwrap();
        let names: Vec<&str> = params.iter().filter_map(|p| p["name"].as_str()).collect();
        for q in [
            "kind", "bench", "status", "since", "until", "limit", "offset",
        ] {
            assert!(names.contains(&q), "{q} in {names:?}");
        }
        let params = doc["paths"]["/api/runs/import"]["post"]["parameters"]
            .as_array()
            .unwrap();
        let names: Vec<&str> = params.iter().filter_map(|p| p["name"].as_str()).collect();
        for q in [
            "file", "format", "columns", "scale", "geometry", "name", "bench",
        ] {
            assert!(names.contains(&q), "{q} in {names:?}");
        }
        assert!(schema("Error")["properties"]["field"].is_object());
    }
}
