#!/usr/bin/env bash
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
# - each library and binary is then documented by rustdoc, warnings denied (what
#   `RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps` checks), from the arguments it
#   was compiled with: rustdoc reads the dependencies this build compiled. `cargo doc` would
#   first check every dependency again (about 90 s of CPU on 2 cores, in a test command of
#   which the compiler takes two thirds). Its pages go to target/<profile>/rustdoc/<crate>.
set -euo pipefail
harness=false
io_crate=false
# Documented: a library or binary; not a query of cargo's (`-vV`, `--print`) or a build script.
document=false
query=false
for arg in "$@"; do
  case "$arg" in
    --test) harness=true ;;
    run-store/* | protocols/* | bench-daemon/* | recording-import/* | campaign/* | bench-service/* | bench-cli/*) io_crate=true ;;
    --crate-type=lib | --crate-type=bin | lib | bin) document=true ;;
    --print* | -vV | build_script_build) query=true ;;
  esac
done
if $harness && $io_crate; then
  exec clippy-driver "$@" -C opt-level=0
fi
clippy-driver "$@"
{ $document && ! $harness && ! $query; } || exit 0

# rustdoc's share of the arguments: rustc's minus its code generation and output options.
shift # the rustc cargo named
doc=()
out_dir=
private=false
while [ $# -gt 0 ]; do
  case "$1" in
    --crate-name | --crate-type | --cfg | --check-cfg | -L | --extern | --edition | --json | --error-format | --diagnostic-width | -W | -A | -D | -F)
      [ "$1" = --crate-type ] && [ "$2" = bin ] && private=true
      doc+=("$1" "$2") && shift ;;
    --crate-name=* | --crate-type=* | --cfg=* | --check-cfg=* | --extern=* | --edition=* | --json=* | --error-format=* | --diagnostic-width=* | -L* | --warn=* | --allow=* | --deny=* | --forbid=*)
      [ "$1" = --crate-type=bin ] && private=true
      doc+=("$1") ;;
    --out-dir) out_dir=$2 && shift ;;
    --out-dir=*) out_dir=${1#--out-dir=} ;;
    -C | --codegen | --emit | -o | --cap-lints) shift ;;
    -*) ;;
    *) doc+=("$1") ;; # the crate's root file
  esac
  shift
done
# Binaries as `cargo doc` documents them: with their private items.
$private && doc+=(--document-private-items)
exec rustdoc "${doc[@]}" -D warnings -o "${out_dir:-target}/../rustdoc"
