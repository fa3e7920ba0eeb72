# shellcheck shell=bash
# Sourced by the scripts that need a real PostgreSQL (make test-postgres,
# hack/load.sh's kine targets): installs Debian's when missing and runs one
# in a scratch directory, on a unix socket only, as the postgres user
# (PostgreSQL refuses to run as root).
#
#   pg_setup             starts it; sets PG_DIR, PG_BIN and PG_ENDPOINT (kine's
#                        --endpoint for the database "kine")
#   pg_stop [MODE]       stops it (pg_ctl -m MODE, default fast)
#   pg_start             starts it again on the same data
#   pg_teardown          stops it and removes PG_DIR unless PG_KEEP=1
#
# Callers trap EXIT to pg_teardown.

pg_as=()

pg_setup() {
  PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
  if [[ -z $PG_BIN ]]; then
    echo "postgres: installing postgresql (Debian)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  fi
  PG_DIR=$(mktemp -d /tmp/apiloom-pg.XXXXXX)
  chmod 0755 "$PG_DIR"
  if [[ $(id -u) == 0 ]]; then
    id postgres >/dev/null 2>&1 || useradd --system --home "$PG_DIR" postgres
    chown postgres "$PG_DIR"
    pg_as=(runuser -u postgres --)
  fi
  "${pg_as[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust >"$PG_DIR/initdb.log"
  pg_start
  "${pg_as[@]}" "$PG_BIN/createdb" -h "$PG_DIR" -U postgres kine
  PG_ENDPOINT="postgres://postgres@/kine?host=$PG_DIR&sslmode=disable"
  export PG_DIR PG_BIN PG_ENDPOINT
}

pg_start() {
  # No TCP listener: the socket in PG_DIR only.
  "${pg_as[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/postgres.log" -w \
    -o "-c listen_addresses='' -c unix_socket_directories='$PG_DIR' -c max_connections=300" start >/dev/null
}

pg_stop() {
  "${pg_as[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m "${1:-fast}" -w stop >/dev/null
}

pg_teardown() {
  [[ -n ${PG_DIR:-} ]] || return 0
  pg_stop immediate 2>/dev/null || true
  if [[ ${PG_KEEP:-0} == 1 ]]; then echo "postgres: kept $PG_DIR"; else rm -rf "$PG_DIR"; fi
}
