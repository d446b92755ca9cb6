#!/usr/bin/env bash
# A demo that harms nothing: builds the dashboard and the `bench` binary (the same build the
# test command uses), then runs `bench serve --sim`, the simulated bench in-process, with the
# dashboard at http://127.0.0.1:8080/. Its runs go to target/serve-sim/frictionbench.db, never
# to your own run database, unless you give --db.
#
# Usage: ./scripts/serve-sim.sh [bench serve flags]
#   Every flag is passed to `bench serve --sim`; --listen, --db and --web replace this script's
#   defaults (127.0.0.1:8080, target/serve-sim/frictionbench.db, the embedded dashboard).
#   SERVE_SIM_NO_BUILD=1 skips the builds (the binary must exist).
set -euo pipefail
cd "$(dirname "$0")/.."

listen=(--listen 127.0.0.1:8080)
db=(--db target/serve-sim/frictionbench.db --create)
for arg in "$@"; do
  case "$arg" in
    --listen | --listen=*) listen=() ;;
    --db | --db=*) db=() ;;
    --create) [ ${#db[@]} -gt 0 ] && db=(--db target/serve-sim/frictionbench.db) ;;
  esac
done
if [ ${#db[@]} -gt 0 ]; then
  echo "serve-sim: runs go to target/serve-sim/frictionbench.db (give --db PATH for another database)"
else
  echo "serve-sim: runs go to the database your --db names"
fi

# The dashboard is rebuilt only when a source of it changed (scripts/dashboard-stale.sh).
if [ -z "${SERVE_SIM_NO_BUILD:-}" ]; then
  if scripts/dashboard-stale.sh; then
    scripts/need-node.sh
    (cd web && npm ci --no-audit --no-fund && npm run build)
  fi
  # The workspace's one profile (optimised; Cargo.toml), through clippy where it is installed:
  # `./scripts/test.sh` builds the same artifacts, so whichever runs second compiles nothing
  # the first did.
  . scripts/clippy-env.sh
  cargo build --locked -p bench-cli
fi
target_dir="${CARGO_TARGET_DIR:-target}"
url="http://127.0.0.1:8080/"
if [ ${#listen[@]} -gt 0 ] && command -v xdg-open >/dev/null 2>&1; then
  (sleep 2 && xdg-open "$url" >/dev/null 2>&1 || true) &
fi
exec "$target_dir/debug/bench" serve --sim "${listen[@]}" "${db[@]}" "$@"
