#!/usr/bin/env bash
# The fault-injection suite (issue 17), make robustness: builds apiloom and
# the suite's etcd member (test/robustness/cmd/etcd, etcd at the version of
# apiloom's go.mod), then runs every scenario of test/robustness — a
# 3-member etcd cluster and two apiloom replicas as processes, traffic,
# a fault, the checks — verbosely, and repeats each scenario's figures at
# the end. One package at a time (-p 1): scenarios sharing the machine's two
# cores would skew each other's figures. Ports 18400-18499 on 127.0.0.1 must be free
# ($ROBUSTNESS_BASE_PORT moves them).
#
#   hack/robustness.sh [go test flags, e.g. -run TestKillEtcdLeader]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
GO=${GO:-go}
mkdir -p bin
"$GO" build -o bin/apiloom ./cmd/apiloom
# The planted-bug tests (planted_test.go) run this build with one failpoint armed.
"$GO" build -tags apiloom_failpoints -o bin/apiloom-failpoints ./cmd/apiloom
(cd test/robustness && "$GO" build -o "$root/bin/robustness-etcd" ./cmd/etcd)

out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
(cd test/robustness && APILOOM_ROBUSTNESS=1 APILOOM_BIN="$root/bin/apiloom" APILOOM_FAILPOINTS_BIN="$root/bin/apiloom-failpoints" ROBUSTNESS_ETCD_BIN="$root/bin/robustness-etcd" \
  "$GO" test -p 1 -count=1 -v -timeout 30m "$@" ./...) 2>&1 | tee "$out" || status=$?
echo "== figures"
grep -o 'FIGURES .*' "$out" || echo "(no scenario reported figures)"
exit "$status"
