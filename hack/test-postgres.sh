#!/usr/bin/env bash
# make test-postgres: the storage and watch cache conformance suites
# (test/kine) on kine over a real PostgreSQL (hack/lib/postgres.sh installs
# Debian's when missing and starts it in a scratch directory).
#
#   PG_KEEP=1   leaves the scratch directory (the database's log) behind
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
source hack/lib/postgres.sh
trap pg_teardown EXIT
pg_setup

export APILOOM_KINE_ENDPOINT=$PG_ENDPOINT
echo "== go test ./test/kine/ on PostgreSQL ($("$PG_BIN/postgres" --version))"
(cd test/kine && "$GO" test -race -count=1 -timeout 15m -skip '^TestDatabaseRestart$' ./...)

# The database stopped and started under load: the test runs pg_stop and
# pg_start from this library, and prints its figures (docs/backends.md).
export APILOOM_PG_LIB=$PWD/hack/lib/postgres.sh
echo "== PostgreSQL stopped and started under load (TestDatabaseRestart)"
(cd test/kine && "$GO" test -race -count=1 -timeout 10m -run '^TestDatabaseRestart$' -v ./...) |
  grep -vE '^=== (RUN|PAUSE|CONT)'
