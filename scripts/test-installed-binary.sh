#!/usr/bin/env bash
# issue 16, one binary: `cargo install` embeds web/dist (built before this runs), so the
# installed `bench serve --sim`, started from a directory outside the source tree, serves the
# dashboard rather than the "dashboard not built" page.
# Usage: scripts/test-installed-binary.sh (scripts/test.sh runs it after `npm run build`).
set -euo pipefail
cd "$(dirname "$0")/.."
test -f web/dist/index.html || { echo "web/dist is not built (cd web && npm run build)" >&2; exit 1; }
root="$PWD/target/install-test"
# --debug: the dev profile (optimised here) that `cargo test` already built; a path install
# builds in the workspace's target directory, so this reuses it instead of a release compile.
cargo install --debug --locked --quiet --force --path bench-cli --root "$root"
# Neither profile keeps debug information in the binary (Cargo.toml): the installed one is small
# (about 50 MiB with the archive's Parquet writer in the run store and the DAQ client: the dev
# profile compiles the daemon's crates, the run store and the transports at opt-level 1, which
# inlines less; debug information would add hundreds of MB).
size=$(stat -c %s "$root/bin/bench")
if [ "$size" -gt $((56 * 1024 * 1024)) ]; then
  echo "the installed bench is $((size / 1024 / 1024)) MiB, over 56 MiB" >&2
  exit 1
fi
away="$(mktemp -d)"
log="$away/serve.log"
pid=""
cleanup() {
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$away"
}
trap cleanup EXIT
(cd "$away" && exec "$root/bin/bench" serve --sim --listen 127.0.0.1:0 --db "$away/runs.sqlite") >"$log" 2>&1 &
pid=$!
for _ in $(seq 1 150); do
  grep -q 'http://' "$log" && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.2
done
url="$(grep -o 'http://[^ ]*' "$log" | head -1 || true)"
if [ -z "$url" ]; then
  echo "the installed bench serve did not start:" >&2
  cat "$log" >&2
  exit 1
fi
page="$(curl -fsS "$url")"
if grep -q 'dashboard is not built' <<<"$page" || ! grep -q '<script' <<<"$page"; then
  echo "the installed bench does not serve the dashboard at $url:" >&2
  head -c 600 <<<"$page" >&2
  exit 1
fi
# The page's script and stylesheet come from the binary too, with their content types.
for asset in main.js main.css; do
  ctype="$(curl -fsS -o /dev/null -w '%{content_type}' "$url$asset")"
  case "$asset:$ctype" in
    *.js:text/javascript*|*.css:text/css*) ;;
    *) echo "$url$asset: content type $ctype" >&2; exit 1 ;;
  esac
done
echo "the installed bench serves the dashboard from $away: ok"
