#!/usr/bin/env bash
# make test-postgres: the storage and watch cache conformance suites
# (test/kine) on kine over a real PostgreSQL, installed from Debian's
# packages when missing and started here in a scratch directory, on a unix
# socket only, as the postgres user (PostgreSQL refuses to run as root).
#
#   PG_KEEP=1   leaves the scratch directory (the database's log) behind
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}

pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [[ -z $pgbin ]]; then
  echo "test-postgres: installing postgresql (Debian)"
  apt-get update -qq && apt-get install -y -qq postgresql >/dev/null
  pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
fi

dir=$(mktemp -d /tmp/apiloom-pg.XXXXXX)
chmod 0755 "$dir"
as_pg=()
if [[ $(id -u) == 0 ]]; then
  id postgres >/dev/null 2>&1 || useradd --system --home "$dir" postgres
  chown postgres "$dir"
  as_pg=(runuser -u postgres --)
fi
stop() {
  "${as_pg[@]}" "$pgbin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  [[ ${PG_KEEP:-0} == 1 ]] && echo "test-postgres: kept $dir" || rm -rf "$dir"
}
trap stop EXIT

"${as_pg[@]}" "$pgbin/initdb" -D "$dir/data" -U postgres --auth=trust >"$dir/initdb.log"
# No TCP listener: the socket in $dir only.
"${as_pg[@]}" "$pgbin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w \
  -o "-c listen_addresses='' -c unix_socket_directories='$dir' -c max_connections=200" start >/dev/null
"${as_pg[@]}" "$pgbin/createdb" -h "$dir" -U postgres kine

export APILOOM_KINE_ENDPOINT="postgres://postgres@/kine?host=$dir&sslmode=disable"
echo "== go test ./test/kine/ on PostgreSQL ($("$pgbin/postgres" --version))"
(cd test/kine && "$GO" test -race -count=1 -timeout 15m ./...)
