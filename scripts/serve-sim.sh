#!/usr/bin/env bash
# Builds the dashboard and the `bench` binary, runs the daemon against the simulated bench,
# then opens the dashboard in the browser (when one is available).
# Usage: ./scripts/serve-sim.sh [serve flags]
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v npm >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm
fi
(cd web && npm ci --no-audit --no-fund && npm run build)
# The workspace's one profile (optimised; Cargo.toml): `./scripts/test.sh` builds the same
# artifacts, so whichever runs second compiles nothing the first did.
cargo build --locked -p bench-daemon
target_dir="${CARGO_TARGET_DIR:-target}"
url="http://127.0.0.1:8080/"
if command -v xdg-open >/dev/null 2>&1; then
  (sleep 2 && xdg-open "$url" >/dev/null 2>&1 || true) &
fi
exec "$target_dir/debug/bench" serve --sim --listen 127.0.0.1:8080 "$@"
