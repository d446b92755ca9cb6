//! The OpenAPI 3.1 document (`/api/openapi.json`), generated from the router: every route is
//! added with its handler's typed inputs (body, query, path) and outputs, so a route or field
//! that is not documented does not build. Here the answers every route shares are added: those
//! of the checks before any handler (`guard.rs`, the body limit, the lab view's refusal).

use aide::openapi::{Info, OpenApi};
use serde_json::{Value, json};

/// The document's head.
pub fn api() -> OpenApi {
    OpenApi {
        info: Info {
            title: "frictionbench bench serve".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            description: Some(DESCRIPTION.into()),
            ..Info::default()
        },
        ..OpenApi::default()
    }
}

const DESCRIPTION: &str = "REST API of the friction bench daemon. JSON everywhere; errors are {\"error\", \"field\"}. Times are RFC 3339 UTC; units SI. A configured token (required beyond loopback) is needed by every POST/PUT/DELETE but POST /api/estop (`Authorization: Bearer <token>`), with --token-for-reads by GETs too (header or ?access_token=). With [[users]] in bench.toml every request but POST /api/estop and GET /api/health needs a user's token, and a role: viewer reads, operator changes, admin resets faults and reads GET /api/audit (401 without a user's token, 403 naming the role needed). Every POST/PUT/PATCH/DELETE, allowed or refused, is appended to the audit log. Bodies must be application/json; Host must name the server; a foreign Origin on a POST/PUT/DELETE is refused; none of this applies to POST /api/estop, which nothing refuses. Duplicate keys in a body are refused (400).";

/// The finished document as JSON: the bearer scheme and, on every operation, the answers of
/// the checks every request passes.
pub fn finish(api: &OpenApi) -> Value {
    let mut doc = serde_json::to_value(api).unwrap_or(Value::Null);
    unescape(&mut doc);
    doc["components"]["securitySchemes"] = json!({"bearer": {"type": "http", "scheme": "bearer"}});
    for (path, ops) in doc["paths"].as_object_mut().into_iter().flatten() {
        for (method, op) in ops.as_object_mut().into_iter().flatten() {
            guarded(path, method, op);
        }
    }
    doc
}

fn err(desc: &str) -> Value {
    json!({"description": desc, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
}

/// The answers of the checks `op` (`method` on `path`) passes before its handler.
fn guarded(path: &str, method: &str, op: &mut Value) {
    let has_body = op.get("requestBody").is_some();
    let Some(r) = op["responses"].as_object_mut() else {
        return;
    };
    let mut add = |code: &str, desc: &str| {
        r.entry(code).or_insert_with(|| err(desc));
    };
    let estop = path == "/api/estop";
    if !estop {
        add(
            "421",
            "Host does not name this server (its address, localhost or an allowed_hosts entry)",
        );
    }
    if method != "get" {
        if !estop {
            add(
                "403",
                "Origin is a different host:port than Host (a cross-site request), or the user's role is too low ([[users]])",
            );
            add(
                "415",
                "A request body that is not Content-Type: application/json",
            );
            add(
                "401",
                "Missing or wrong bearer token (a token or [[users]] configured)",
            );
        }
        add(
            "409",
            "A lab view (bench serve --lab): read-only, no bench attached",
        );
    } else if path != "/api/health" {
        add(
            "401",
            "Missing or wrong bearer token (with --token-for-reads or [[users]]; not /api/health)",
        );
        add("403", "The user's role is too low ([[users]])");
    }
    if has_body {
        add("413", "Body over 2 MiB");
    }
}

/// Descriptions taken from doc comments without their rustdoc escapes (`\[s\]` → `[s]`).
fn unescape(v: &mut Value) {
    match v {
        Value::Array(a) => a.iter_mut().for_each(unescape),
        Value::Object(o) => {
            for (k, v) in o.iter_mut() {
                match v {
                    Value::String(s) if k == "description" => {
                        *s = s.replace("\\[", "[").replace("\\]", "]");
                    }
                    v => unescape(v),
                }
            }
        }
        _ => {}
    }
}
