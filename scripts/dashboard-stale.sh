#!/usr/bin/env bash
# Exit 0 when web/dist is missing or older than a source of the dashboard, 1 when it is up to
# date (web/openapi.json is a source: web/src/api-types.ts is generated from it). serve-sim.sh
# and test.sh rebuild it only then: a rebuild gives web/dist new times, which
# makes cargo compile the `bench` crate again (it embeds web/dist).
cd "$(dirname "$0")/.."
[ -f web/dist/index.html ] || exit 0
newer="$(find web/src web/openapi.json web/index.html web/favicon.svg web/build.mjs web/package.json web/package-lock.json \
  web/tsconfig.json -newer web/dist/index.html 2>/dev/null | head -n 1)"
[ -n "$newer" ]
