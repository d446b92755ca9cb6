#!/bin/sh
# cargo's RUSTC_WORKSPACE_WRAPPER (set by scripts/clippy-env.sh), called as
# `workspace-rustc.sh RUSTC ARGS...` for each workspace crate:
# - every crate compiles through clippy-driver, so the lints run in the build itself;
# - the test harnesses (`--test`: unit tests and integration tests) of the crates whose tests
#   are requests, queries and assertions compile at opt-level 0, the last `-C opt-level` given
#   being the one rustc keeps. Their libraries, and the `bench` the tests start, keep the dev
#   profile's levels: a `[profile.test.package]` override would reach those too (cargo builds a
#   `cargo test`'s workspace libraries with the test profile) and `bench` would then be built
#   twice. At opt-level 1 the run store's integration test took 98 s of CPU to compile, at 0
#   7 s, and ran its 81 tests in the same 11 s. The numerical crates (friction, experiments,
#   bench-sim) keep their level: their tests compute.
harness=false
io_crate=false
for arg in "$@"; do
  case "$arg" in
    --test) harness=true ;;
    run-store/* | protocols/* | bench-daemon/* | recording-import/* | campaign/* | bench-service/* | bench-cli/*) io_crate=true ;;
  esac
done
if $harness && $io_crate; then
  exec clippy-driver "$@" -C opt-level=0
fi
exec clippy-driver "$@"
