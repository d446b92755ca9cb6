#!/usr/bin/env bash
# schemathesis (PyPI, pinned) against the real `bench serve --sim`: the OpenAPI document at
# /api/openapi.json drives generated requests (examples, coverage, fuzzing and stateful links),
# bounded and seeded. It fails on any server error, response outside the document, rejection of
# a request the document allows, or acceptance of one it forbids. Rules the document cannot
# express (bench limits, run state) are listed in scripts/schemathesis.toml.
# Usage: BENCH_BIN=target/debug/bench scripts/test-schemathesis.sh
#        scripts/test-schemathesis.sh install   (only installs schemathesis into target/stenv)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
version=4.32.5
if ! target/stenv/bin/schemathesis --version 2>/dev/null | grep -q "version $version"; then
  rm -rf target/stenv
  venv target/stenv "schemathesis==$version"
fi
[ "${1:-}" = install ] && exit 0
work="$(mktemp -d)"
"${BENCH_BIN:-target/debug/bench}" serve --sim --listen 127.0.0.1:0 --web /nonexistent \
  --db "$work/runs.db" >"$work/serve.out" 2>"$work/serve.err" &
serve=$!
trap 'kill $serve 2>/dev/null; wait $serve 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do
  grep -q 'http://' "$work/serve.out" && break
  sleep 0.1
done
url="$(grep -o 'http://[^/]*' "$work/serve.out" | head -1)"
# schemathesis keeps a cache in ./.schemathesis: run it in the scratch directory, so the clone
# stays as it was.
repo="$PWD"
# The daemon's own word on any request it answered after a second or more (its route and
# status), printed whether schemathesis passed or not.
slow() { grep 'slow request' "$work/serve.err" || true; }
# Two seeds of generated requests. The examples and the coverage phase (each operation's
# boundary values) do not depend on the seed, so the second seed runs only the generated phases.
for run in "1 examples,coverage,fuzzing,stateful" "2 fuzzing,stateful"; do
  read -r seed phases <<<"$run"
  (cd "$work" && "$repo/target/stenv/bin/schemathesis" --config-file "$repo/scripts/schemathesis.toml" run \
    "$url/api/openapi.json" --checks all --max-examples 30 --seed "$seed" --phases "$phases" \
    --request-timeout 20 --generation-database none --no-color) || { slow; exit 1; }
done
slow
