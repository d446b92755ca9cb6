# Sourced by scripts/test.sh and scripts/test-schemathesis.sh.
# venv [--with-pip] DIR PACKAGE...: a venv of its own at DIR with PACKAGE... from PyPI.
# Without a pip of its own unless asked: the machine's pip installs into it (`pip --python`,
# pip 22.3 and later), where ensurepip took 4 s of CPU a venv; with its own pip where the
# machine's pip cannot. --no-compile: Python compiles a module when it is first imported, not
# every module of every package at install (pandas, pyarrow, hypothesis: ~7 s of CPU for the
# client's venv).
venv() {
  local with_pip=false
  [ "$1" = --with-pip ] && with_pip=true && shift
  local dir=$1
  shift
  local install=(install --quiet --disable-pip-version-check --no-compile "$@")
  if ! $with_pip; then
    python3 -m venv --without-pip "$dir"
    python3 -m pip --python "$dir/bin/python" "${install[@]}" 2>/dev/null && return
    rm -rf "$dir"
  fi
  python3 -m venv "$dir"
  "$dir/bin/pip" "${install[@]}"
}
