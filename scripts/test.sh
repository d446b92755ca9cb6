#!/usr/bin/env bash
# Runs every frictionbench test on a fresh machine: installs what the tests need, then runs them.
# Usage: ./scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# issue 16: the manual (docs/, mdBook from crates.io, pinned): build it, check its internal links
# and that no file cites a document the repository does not contain.
export PATH="$PATH:${CARGO_HOME:-$HOME/.cargo}/bin"
if ! mdbook --version 2>/dev/null | grep -qx 'mdbook v0.4.52'; then
  cargo install mdbook --locked --version 0.4.52 --no-default-features --features search
fi
mdbook build docs
python3 scripts/check-book-links.py

# House rules: formatted, lint-free, documentation without warnings.
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

# pymodbus (PyPI, pinned) is the independent Modbus peer of the interoperability tests.
if [ ! -x target/pyenv/bin/python ] || ! target/pyenv/bin/python -c 'import pymodbus, sys; sys.exit(pymodbus.__version__ != "3.16.1")' 2>/dev/null; then
  python3 -m venv target/pyenv
  target/pyenv/bin/pip install --quiet --disable-pip-version-check 'pymodbus[serial]==3.16.1'
fi
export FRICTIONBENCH_PYTHON="$PWD/target/pyenv/bin/python"

# issue 14: a throwaway PostgreSQL cluster (Debian's postgresql) under target/, on a free port
# with its unix socket in the cluster directory; the run-store suite and the lab tests run on it
# as well as on SQLite. Stopped and removed when this script ends.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql
fi
trap 'scripts/pg-cluster.sh stop target/pg-test' EXIT
eval "$(scripts/pg-cluster.sh start target/pg-test)"
export FRICTIONBENCH_REQUIRE_PG=1

cargo test --workspace --locked

# issue 7: the dashboard end to end, in a real headless Chromium (Debian's chromium driven by
# playwright-core from npm) against `bench serve --sim`; screenshots in target/e2e-screenshots/.
if ! command -v chromium >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
fi
scripts/need-node.sh 20
(cd web && npm ci --no-audit --no-fund && npm run build)
# The binary `cargo test` just built (the dev profile is optimised; no second compile).
cargo build --locked -p bench-daemon
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
(cd web && BENCH_BIN="$target_dir/debug/bench" CHROMIUM="$(command -v chromium)" npm run test:e2e)

# issue 31: the README's first command, serve-sim.sh, harms nothing (scratch $HOME; its runs
# stay under target/) and passes its flags through.
scripts/test-serve-sim.sh

# issue 13: schemathesis against the real server: the OpenAPI document exactly as strict as it.
BENCH_BIN="$target_dir/debug/bench" scripts/test-schemathesis.sh

# issue 16: the Python client (clients/python), installed into a fresh venv with pinned
# dependencies from PyPI, against `bench serve --sim`; then the installed binary serves the
# embedded dashboard from outside the source tree.
rm -rf target/clientenv
python3 -m venv target/clientenv
target/clientenv/bin/pip install --quiet --disable-pip-version-check 'httpx==0.28.1' \
  'pandas==3.1.1' 'pyarrow==26.0.1' 'numpy==2.4.6' 'xarray==2026.9.0' 'pytest==9.2.0' ./clients/python
BENCH_BIN="$target_dir/debug/bench" target/clientenv/bin/python -m pytest -q -p no:cacheprovider clients/python/tests
scripts/test-installed-binary.sh

# issue 31: every example of README.md and docs/ runs as written (scripts/test-docs.py; the
# self-test first shows that a wrong example fails).
BENCH_BIN="$target_dir/debug/bench" python3 scripts/test-docs.py --self-test
BENCH_BIN="$target_dir/debug/bench" CLIENT_PYTHON=target/clientenv/bin/python DOCTEST_JOBS=4 \
  python3 scripts/test-docs.py

# issue 31: the test command leaves the clone as it found it.
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
  echo "the tests changed or left files in the clone:" >&2
  git status --porcelain >&2
  exit 1
fi
