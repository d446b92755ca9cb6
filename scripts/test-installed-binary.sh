#!/usr/bin/env bash
# issue 16, one binary: `cargo install` embeds web/dist (built before this runs), so the
# installed `bench serve --sim`, started from a directory outside the source tree, serves the
# dashboard rather than the "dashboard not built" page.
# Usage: scripts/test-installed-binary.sh (from scripts/test.sh, after `npm run build`).
set -euo pipefail
cd "$(dirname "$0")/.."
test -f web/dist/index.html || { echo "web/dist is not built" >&2; exit 1; }
root="$PWD/target/install-test"
# --debug: the dev profile (optimised here) that `cargo test` already built; no release compile.
cargo install --debug --locked --quiet --force --path bench-daemon --root "$root"
away="$(mktemp -d)"
log="$away/serve.log"
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$away"' EXIT
(cd "$away" && exec "$root/bin/bench" serve --sim --listen 127.0.0.1:0 --db "$away/runs.sqlite" >"$log" 2>&1) &
pid=$!
for _ in $(seq 1 100); do
  grep -q 'http://' "$log" 2>/dev/null && break
  sleep 0.2
done
url="$(grep -o 'http://[^ ]*' "$log" | head -1)"
test -n "$url" || { echo "bench serve did not start:" >&2; cat "$log" >&2; exit 1; }
page="$(curl -fsS "$url")"
if grep -q 'dashboard is not built' <<<"$page" || ! grep -qi '<html' <<<"$page"; then
  echo "the installed bench does not serve the dashboard at $url:" >&2
  head -c 600 <<<"$page" >&2
  exit 1
fi
# The page's own script comes from the binary too.
script="$(grep -o 'src="[^"]*\.js"' <<<"$page" | head -1 | cut -d'"' -f2)"
if [ -n "$script" ]; then
  curl -fsS -o /dev/null "${url%/}/${script#/}"
fi
echo "installed bench serves the dashboard from $away: ok"
