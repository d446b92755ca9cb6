#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests (issue 14): Debian's postgresql server binaries,
# a fresh cluster in DIR (initdb), a free TCP port on loopback and a unix socket in DIR.
#   scripts/pg-cluster.sh start DIR   prints `export FRICTIONBENCH_TEST_PG=postgres://...`
#   scripts/pg-cluster.sh stop DIR    stops the server and removes DIR
# The server runs as the `postgres` user when started by root (initdb refuses root).
set -euo pipefail
cmd=${1:?start or stop}
dir=$(realpath -m "${2:?cluster directory}")
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$bin" ] || { echo "pg-cluster: no PostgreSQL server (apt-get install postgresql)" >&2; exit 1; }
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
case "$cmd" in
  start)
    [ -d "$dir/data" ] && as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    as_owner "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-sync >"$dir/initdb.log"
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300" start >/dev/null
    echo "export FRICTIONBENCH_TEST_PG='postgres://postgres@localhost:$port/postgres?host=$dir'"
    ;;
  stop)
    [ -d "$dir/data" ] && as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
