# Sourced by scripts/test.sh and scripts/serve-sim.sh: the workspace's own crates compile
# through clippy (cargo's RUSTC_WORKSPACE_WRAPPER, what `cargo clippy` does), warnings denied.
# The lints then cost no build of their own: `cargo clippy` would compile every dependency a
# second time (check mode) in a target directory of its own; here the dependencies build once,
# as usual, and the lints run as the test build compiles the workspace. Both scripts set the
# same, so their builds share every artifact. The wrapper (scripts/workspace-rustc.sh) also
# builds the I/O crates' test harnesses at opt-level 0, and documents each library and binary
# with rustdoc, warnings denied, from the dependencies the build compiled.
# Usage: . scripts/clippy-env.sh [--required]
if clippy-driver --version >/dev/null 2>&1; then
  export RUSTC_WORKSPACE_WRAPPER="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/workspace-rustc.sh"
  export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
elif [ "${1:-}" = --required ]; then
  echo "the lints need clippy: rustup component add clippy" >&2
  exit 1
fi
