//! No cross-site control: every request passes these checks before any handler sees it, so a
//! refused request changes nothing. The one exception is `POST /api/estop`, which passes them
//! all: an e-stop is never refused for its shape, its origin or its host name, since it can only
//! make the bench safer (`estop.rs` records who sent it).
//!
//! - `Host` must name the address the connection came in on, the listen address, `localhost`
//!   or an `allowed_hosts` entry of bench.toml (421 otherwise): a DNS-rebinding page, whose
//!   requests carry its own host name, cannot reach the API through the browser.
//! - A POST, PUT, DELETE or PATCH with an `Origin` whose host:port differs from `Host` is
//!   refused (403): a foreign page may not drive the bench (it may press the e-stop).
//! - A request body must be `application/json` (415): HTML forms and "simple" cross-site
//!   requests (`text/plain`) cannot be JSON without a CORS preflight, which is never granted.
//!   `POST /api/runs/import` also takes its recording's own types (`text/csv`,
//!   `application/octet-stream`, ...), none of which a form or a simple request can send.
//! - A configured token is required of every mutating call on every listener, loopback
//!   included — except `POST /api/estop`, which only makes the bench safer — and, with
//!   `--token-for-reads`, of every `/api/` GET but `/api/health`, and of `/metrics`. GETs may
//!   carry it as `?access_token=` (RFC 6750 §2.3) since a browser's `EventSource` and download
//!   links cannot set headers; the parameter is removed before the handler sees the query.
//! - With `[[users]]` in bench.toml instead of one token, every `/api/` request but the e-stop
//!   and `/api/health`, and `/metrics`, needs a user's token (401 without one or with an
//!   unknown one) whose role allows it (403 naming the role needed, [`role_needed`]). Who it
//!   was ([`Caller`]) goes with the request to its handler and with the answer to the audit.

use super::error::ApiError;
use axum::body::HttpBody;
use axum::extract::connect_info::Connected;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::serve::IncomingStream;
use bench_daemon::users::{Role, Users};
use std::net::SocketAddr;
use std::sync::Arc;

/// Shortest token `bench serve` accepts.
pub const MIN_TOKEN_CHARS: usize = 16;

/// A connection's two ends: the address it came in on (the server's side, for the `Host`
/// check on a listener bound to every interface) and the client's (recorded with an e-stop).
#[derive(Clone, Copy, Debug)]
pub struct ConnAddrs {
    /// The server's side.
    pub local: SocketAddr,
    /// The client's side.
    pub peer: SocketAddr,
}

impl Connected<IncomingStream<'_, tokio::net::TcpListener>> for ConnAddrs {
    fn connect_info(stream: IncomingStream<'_, tokio::net::TcpListener>) -> Self {
        let peer = *stream.remote_addr();
        ConnAddrs {
            local: stream.io().local_addr().unwrap_or(peer),
            peer,
        }
    }
}

/// `POST /api/estop`, which no check refuses.
pub fn is_estop(method: &Method, path: &str) -> bool {
    *method == Method::POST && path == "/api/estop"
}

/// What the checks compare against.
#[derive(Debug)]
pub struct Guard {
    /// Bearer token, if configured.
    pub token: Option<Arc<str>>,
    /// GETs under /api/ need the token too.
    pub token_for_reads: bool,
    /// The listen address.
    pub listen: SocketAddr,
    /// Extra host names (`allowed_hosts`), lower case; an entry with a port matches only that.
    pub allowed_hosts: Vec<String>,
    /// The `[[users]]` of bench.toml (then `token` is `None`).
    pub users: Option<Arc<Users>>,
}

/// Who sent a request, as far as the guard could tell: an extension of the request (for its
/// handler) and of the answer (for the audit).
#[derive(Clone, Debug, Default)]
pub struct Caller {
    /// The user whose token it carried (none with a single shared token, or none given).
    pub user: Option<Arc<str>>,
    /// Their role.
    pub role: Option<Role>,
    /// The client's address.
    pub remote: Option<String>,
}

/// Marks an answer the guard gave itself: the request was refused before any handler.
#[derive(Clone, Copy, Debug)]
pub struct Refused;

/// The role a request needs when bench.toml has users: admin for the fault reset and the audit
/// log, operator for every other change, viewer for reads.
pub fn role_needed(method: &Method, path: &str) -> Role {
    if path == "/api/faults/reset" || path == "/api/audit" {
        Role::Admin
    } else if mutating(method) {
        Role::Operator
    } else {
        Role::Viewer
    }
}

/// Refuses a token that is blank or shorter than [`MIN_TOKEN_CHARS`]; `source` names where it
/// came from.
pub fn check_token(token: &str, source: &str) -> Result<(), String> {
    if token.trim().is_empty() {
        return Err(format!(
            "{source}: the token is blank: give at least {MIN_TOKEN_CHARS} characters"
        ));
    }
    let n = token.chars().count();
    if n < MIN_TOKEN_CHARS {
        return Err(format!(
            "{source}: the token has {n} characters: give at least {MIN_TOKEN_CHARS}"
        ));
    }
    Ok(())
}

impl Guard {
    /// Whether `host` (the `Host` header) names this server.
    fn host_allowed(&self, host: &str, local: Option<SocketAddr>) -> bool {
        let host = host.trim().to_ascii_lowercase();
        if self.allowed_hosts.contains(&host) {
            return true;
        }
        let name = host_name(&host);
        if name == "localhost" || self.allowed_hosts.iter().any(|a| a == name) {
            return true;
        }
        let Ok(ip) = name
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
        else {
            return false;
        };
        ip == self.listen.ip() || local.is_some_and(|l| l.ip() == ip)
    }

    fn needs_token(&self, method: &Method, path: &str) -> bool {
        if self.token.is_none() && self.users.is_none() {
            return false;
        }
        if mutating(method) {
            return !is_estop(method, path);
        }
        (self.token_for_reads || self.users.is_some())
            && (path.starts_with("/api/") && path != "/api/health" || path == "/metrics")
    }

    /// Who the token (`given`) says sent `method path`; `Err` with the refusal when it says
    /// nobody or someone whose role is too low.
    async fn caller(
        &self,
        method: &Method,
        path: &str,
        given: Option<String>,
    ) -> Result<Caller, Response> {
        let given = given.as_deref();
        if let Some(users) = &self.users {
            let user = match given {
                Some(t) => users.identify(t).await,
                None => None,
            };
            let Some(user) = user else {
                let why = if given.is_some() {
                    "the token is no user's"
                } else {
                    "no token given"
                };
                return Err(unauthorized(format!(
                    "{method} {path}: {why}: bench.toml has users, send Authorization: Bearer \
                     <your token> (bench users add makes one)"
                )));
            };
            let needed = role_needed(method, path);
            let caller = Caller {
                user: Some(user.name.clone()),
                role: Some(user.role),
                remote: None,
            };
            if user.role < needed {
                let mut r = refuse(
                    StatusCode::FORBIDDEN,
                    "Authorization",
                    format!(
                        "{method} {path} needs the {needed} role: {} has the {} role",
                        user.name, user.role
                    ),
                );
                r.extensions_mut().insert(caller);
                return Err(r);
            }
            return Ok(caller);
        }
        let ok = match &self.token {
            Some(token) => given.is_some_and(|g| constant_time_eq(g.as_bytes(), token.as_bytes())),
            None => true,
        };
        if !ok {
            let what = if mutating(method) {
                "mutating calls"
            } else {
                "reads (--token-for-reads)"
            };
            return Err(unauthorized(format!(
                "a token is configured: {what} need Authorization: Bearer <token>"
            )));
        }
        Ok(Caller::default())
    }
}

/// The token a request carries: `Authorization: Bearer`, or `?access_token=` on a GET.
fn token_given(req: &Request) -> Option<String> {
    let header = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match header {
        Some(h) => Some(h.to_string()),
        None if *req.method() == Method::GET => query_token(req.uri()),
        None => None,
    }
}

/// 401 with `WWW-Authenticate: Bearer`.
fn unauthorized(error: String) -> Response {
    let mut r = refuse(StatusCode::UNAUTHORIZED, "Authorization", error);
    r.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    r
}

/// POST, PUT, DELETE or PATCH: what the token guards and the audit records.
pub fn mutating(method: &Method) -> bool {
    matches!(
        *method,
        Method::POST | Method::PUT | Method::DELETE | Method::PATCH
    )
}

/// The host part of `host[:port]` or `[v6]:port`.
fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        return host
            .split_once(']')
            .map_or(host, |(h, _)| &host[..=h.len()]);
    }
    match host.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => host,
    }
}

/// `scheme://host[:port]` → `host[:port]`, lower case (`None` for `null` or garbage).
fn origin_authority(origin: &str) -> Option<String> {
    let (_, rest) = origin.split_once("://")?;
    let auth = rest.split('/').next()?;
    (!auth.is_empty()).then(|| auth.to_ascii_lowercase())
}

fn query_token(uri: &Uri) -> Option<String> {
    uri.query()?.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == "access_token").then(|| v.to_string())
    })
}

/// The URI without its `access_token` query parameter.
fn strip_query_token(uri: &Uri) -> Option<Uri> {
    let q = uri.query()?;
    if !q.split('&').any(|kv| kv.starts_with("access_token=")) {
        return None;
    }
    let rest: Vec<&str> = q
        .split('&')
        .filter(|kv| !kv.starts_with("access_token="))
        .collect();
    let pq = if rest.is_empty() {
        uri.path().to_string()
    } else {
        format!("{}?{}", uri.path(), rest.join("&"))
    };
    let mut parts = uri.clone().into_parts();
    parts.path_and_query = pq.parse().ok();
    Uri::from_parts(parts).ok()
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn is_json(ctype: &str) -> bool {
    ctype
        .split(';')
        .next()
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
}

fn has_body(req: &Request) -> bool {
    req.body().size_hint().exact() != Some(0)
}

/// The checks, in order: Host (421), Origin (403), token (401), Content-Type (415); none for
/// the e-stop.
pub async fn guard(State(guard): State<Arc<Guard>>, mut req: Request, next: Next) -> Response {
    if is_estop(req.method(), req.uri().path()) {
        return next.run(req).await;
    }
    let local = req
        .extensions()
        .get::<ConnectInfo<ConnAddrs>>()
        .map(|c| c.0.local);
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .or_else(|| req.uri().authority().map(|a| a.as_str()))
        .unwrap_or_default()
        .to_string();
    if !guard.host_allowed(&host, local) {
        return refuse(
            StatusCode::MISDIRECTED_REQUEST,
            "Host",
            format!(
                "Host '{host}' does not name this server: use its address, localhost, or add \
                 the name to allowed_hosts in bench.toml"
            ),
        );
    }
    if mutating(req.method())
        && let Some(origin) = req.headers().get(header::ORIGIN)
    {
        let origin = origin.to_str().unwrap_or_default();
        if origin_authority(origin).as_deref() != Some(host.to_ascii_lowercase().as_str()) {
            return refuse(
                StatusCode::FORBIDDEN,
                "Origin",
                format!(
                    "Origin '{origin}' is not this server ({host}): cross-site requests may \
                     not change the bench"
                ),
            );
        }
    }
    let path = req.uri().path().to_string();
    let caller = if guard.needs_token(req.method(), &path) {
        let (method, given) = (req.method().clone(), token_given(&req));
        match guard.caller(&method, &path, given).await {
            Ok(caller) => caller,
            Err(refusal) => return refusal,
        }
    } else {
        Caller::default()
    };
    let caller = Caller {
        remote: req
            .extensions()
            .get::<ConnectInfo<ConnAddrs>>()
            .map(|c| c.0.peer.to_string()),
        ..caller
    };
    if has_body(&req) {
        let ctype = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok());
        // An import's body is the recording itself, in its own (never form) content type.
        let file =
            |c: &str| path == super::body::RECORDING_PATH && super::body::is_recording_type(c);
        if !ctype.is_some_and(|c| is_json(c) || file(c)) {
            return refuse(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Content-Type",
                format!(
                    "Content-Type ({}) must be application/json for a request body",
                    ctype.unwrap_or("none")
                ),
            );
        }
    }
    if let Some(uri) = strip_query_token(req.uri()) {
        *req.uri_mut() = uri;
    }
    req.extensions_mut().insert(caller.clone());
    let mut answer = next.run(req).await;
    answer.extensions_mut().insert(caller);
    answer
}

/// The guard's own answer, marked [`Refused`] for the audit.
fn refuse(status: StatusCode, field: &str, error: String) -> Response {
    let mut r = ApiError {
        status,
        error,
        field: Some(field.into()),
    }
    .into_response();
    r.extensions_mut().insert(Refused);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> Guard {
        Guard {
            token: None,
            token_for_reads: false,
            listen: "0.0.0.0:8080".parse().unwrap(),
            allowed_hosts: vec!["bench.lab".into(), "proxy.lab:443".into()],
            users: None,
        }
    }

    #[test]
    fn hosts_naming_this_server_pass_and_others_do_not() {
        let g = guard();
        let local = Some("10.0.0.5:8080".parse().unwrap());
        for ok in [
            "localhost:8080",
            "LOCALHOST",
            "10.0.0.5:8080",
            "bench.lab:8080",
            "proxy.lab:443",
        ] {
            assert!(g.host_allowed(ok, local), "{ok}");
        }
        for bad in ["evil.example:8080", "10.0.0.6:8080", "proxy.lab:80", ""] {
            assert!(!g.host_allowed(bad, local), "{bad}");
        }
        let v6 = Guard {
            listen: "[::1]:8080".parse().unwrap(),
            ..guard()
        };
        assert!(v6.host_allowed("[::1]:8080", None));
    }

    #[test]
    fn tokens_must_be_long_and_not_blank() {
        assert!(check_token("", "--token").unwrap_err().contains("blank"));
        assert!(check_token("                ", "--token").is_err());
        assert!(check_token("s3cret", "--token").unwrap_err().contains("16"));
        assert!(check_token("0123456789abcdef", "--token").is_ok());
    }

    #[test]
    fn the_query_token_is_read_and_removed() {
        let uri: Uri = "/api/live?x=1&access_token=abc".parse().unwrap();
        assert_eq!(query_token(&uri).as_deref(), Some("abc"));
        assert_eq!(strip_query_token(&uri).unwrap(), "/api/live?x=1");
        let only: Uri = "/api/live?access_token=abc".parse().unwrap();
        assert_eq!(strip_query_token(&only).unwrap(), "/api/live");
        assert_eq!(
            origin_authority("http://127.0.0.1:8080").as_deref(),
            Some("127.0.0.1:8080")
        );
        assert_eq!(origin_authority("null"), None);
    }
}
