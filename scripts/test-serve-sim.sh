#!/usr/bin/env bash
# issue 31: ./scripts/serve-sim.sh is a demo that harms nothing. Run with a scratch $HOME: the
# demo's runs must land in target/serve-sim/, never in the user's run database; its first line
# says where they go; --listen and --db replace its defaults (once failed with "the argument
# '--listen <ADDR>' cannot be used multiple times"); it serves the dashboard.
# Usage: scripts/test-serve-sim.sh (after the test command's builds)
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
pid=
stop() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; pid=; }
trap 'stop; rm -rf "$work"' EXIT
# The toolchains and caches stay where they are; only the user's data directory moves.
export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
export npm_config_cache="${npm_config_cache:-$HOME/.npm}"
export HOME="$work/home"
unset FRICTIONBENCH_DB XDG_DATA_HOME
mkdir -p "$HOME"

# Starts the demo with "$@" (output in $work/out); sets $url once it serves.
start() {
  "$@" >"$work/out" 2>"$work/err" &
  pid=$!
  url=
  for _ in $(seq 600); do
    url="$(grep -so 'http://[0-9.:]*' "$work/out" | head -1 || true)"
    [ -n "$url" ] && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  echo "serve-sim did not start:" >&2
  cat "$work/out" "$work/err" >&2
  exit 1
}
fail() { echo "test-serve-sim: $*" >&2; cat "$work/out" >&2; exit 1; }

rm -rf target/serve-sim
start ./scripts/serve-sim.sh --listen 127.0.0.1:0
head -1 "$work/out" | grep -q '^serve-sim: runs go to target/serve-sim/frictionbench.db' \
  || fail "the first line does not say where the runs go"
curl -sf "$url/api/health" | grep -q '"status":"ok"' || fail "no health answer at $url"
curl -sf "$url/" | grep -qi '<html' || fail "no dashboard at $url/"
curl -sf -X POST "$url/api/runs" -H 'content-type: application/json' \
  -d @experiments/specs/torque_ramp.json >/dev/null \
  || fail "a run was refused"
stop
[ -f target/serve-sim/frictionbench.db ] || fail "no database in target/serve-sim/"
[ ! -e "$HOME/.local/share/frictionbench" ] || fail "the demo wrote into the user's data directory"

# --db replaces the default (and the first line says so); no build this time.
SERVE_SIM_NO_BUILD=1 start ./scripts/serve-sim.sh --listen=127.0.0.1:0 --db "$work/mine.db" --create
head -1 "$work/out" | grep -q 'the database your --db names' || fail "the first line ignores --db"
stop
[ -f "$work/mine.db" ] || fail "--db was not used"
echo "serve-sim: its runs stay in target/serve-sim/, --listen and --db replace its defaults"
