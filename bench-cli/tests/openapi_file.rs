//! `web/openapi.json`, the document the dashboard's API types are generated from, is what the
//! service serves. Regenerate it with `BENCH_WRITE_OPENAPI=1 cargo test -p bench-cli --test
//! integration openapi_file`.

use crate::daemon::Daemon;
use std::path::Path;

#[test]
fn web_openapi_json_is_what_the_service_serves() {
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::in_process(&["--sim"], &dir.path().join("runs.db"));
    let served = d.json("/api/openapi.json");
    let text = serde_json::to_string_pretty(&served).unwrap() + "\n";
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../web/openapi.json");
    if std::env::var_os("BENCH_WRITE_OPENAPI").is_some() {
        std::fs::write(&file, &text).unwrap();
    }
    let committed = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(
        committed == text,
        "{} differs from GET /api/openapi.json; regenerate it with \
         `BENCH_WRITE_OPENAPI=1 cargo test -p bench-cli --test integration openapi_file` \
         and commit it (npm run build then regenerates web/src/api-types.ts)",
        file.display()
    );
}
