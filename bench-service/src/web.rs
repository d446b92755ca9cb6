//! The dashboard compiled into the binary (see `build.rs`): `bench serve` without `--web` serves
//! these files, so an installed binary needs no source tree.

use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

include!(concat!(env!("OUT_DIR"), "/web_assets.rs"));

/// Whether the binary was built with a dashboard (`web/dist` existed at build time).
pub fn embedded() -> bool {
    !WEB_ASSETS.is_empty()
}

/// The embedded file at `path` (`/` and directories mean their `index.html`).
pub fn asset(path: &str) -> Option<&'static [u8]> {
    let mut rel = path.trim_start_matches('/').to_string();
    if rel.is_empty() || rel.ends_with('/') {
        rel.push_str("index.html");
    }
    WEB_ASSETS
        .binary_search_by(|(p, _)| (*p).cmp(rel.as_str()))
        .ok()
        .map(|i| WEB_ASSETS[i].1)
}

/// The fallback handler: GET/HEAD of an embedded file, with its content type.
pub async fn serve(method: Method, uri: Uri) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let Some(body) = asset(uri.path()) else {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    };
    let path = uri.path();
    let ext = if path.ends_with('/') {
        "html"
    } else {
        path.rsplit('.').next().unwrap_or("")
    };
    let ctype = HeaderValue::from_static(content_type(ext));
    ([(header::CONTENT_TYPE, ctype)], body).into_response()
}

fn content_type(ext: &str) -> &'static str {
    match ext {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_table_is_sorted_so_lookups_find_every_file() {
        for (path, body) in super::WEB_ASSETS {
            assert_eq!(super::asset(path), Some(*body), "{path}");
        }
        assert!(super::asset("/no/such/file.js").is_none());
        assert_eq!(super::embedded(), super::asset("/").is_some());
    }
}
