#!/usr/bin/env bash
# make test-mysql: the storage and watch cache conformance suites
# (test/kine) on kine over a real MySQL (Debian's MariaDB; hack/lib/mysql.sh
# installs it when missing and starts it in a scratch directory).
#
#   MY_KEEP=1   leaves the scratch directory (the database's log) behind
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
source hack/lib/mysql.sh
trap my_teardown EXIT
my_setup

export APILOOM_KINE_ENDPOINT=$MY_ENDPOINT
echo "== go test ./test/kine/ on MySQL ($(mariadbd --version))"
(cd test/kine && "$GO" test -race -count=1 -timeout 15m ./...)
