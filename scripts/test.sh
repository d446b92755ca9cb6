#!/usr/bin/env bash
# Runs every frictionbench test on a fresh machine: installs what the tests need, then runs them.
# Usage: ./scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# pymodbus (PyPI, pinned) is the independent Modbus peer of the interoperability tests.
if [ ! -x target/pyenv/bin/python ] || ! target/pyenv/bin/python -c 'import pymodbus, sys; sys.exit(pymodbus.__version__ != "3.16.1")' 2>/dev/null; then
  python3 -m venv target/pyenv
  target/pyenv/bin/pip install --quiet --disable-pip-version-check 'pymodbus[serial]==3.16.1'
fi
export FRICTIONBENCH_PYTHON="$PWD/target/pyenv/bin/python"

cargo test --workspace --locked
