#!/usr/bin/env bash
# make builtin-conformance: the built-in kinds' differential test of issue 31
# (test/builtinconf).
#
# 1. Starts a real kube-apiserver v1.37 with its own etcd and
#    kube-controller-manager's namespace and garbage-collector controllers
#    (PEER_SCRIPT, default ../shared/peers/kube-apiserver.sh, with PEER_KCM=1,
#    on PEER_PORT, default 17420; its etcd listens on PEER_PORT+10 and +11),
#    runs the table (test/builtinconf/testdata/cases.yaml) against it and
#    records every answer in test/builtinconf/testdata/golden.yaml (commit
#    it when it changes).
# 2. Runs the same table against apiloom (TestAPILoomMatchesKubeAPIServer,
#    which make test also runs) and prints the comparison with totals.
#
# PEER_KUBECONFIG (a running peer's kubeconfig, started with PEER_KCM=1)
# skips starting one.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
GO=${GO:-go}
: "${PEER_SCRIPT:=$root/../shared/peers/kube-apiserver.sh}" "${PEER_PORT:=17420}"

if [[ -z ${PEER_KUBECONFIG:-} ]]; then
  dir=$(mktemp -d)
  trap '"$PEER_SCRIPT" stop "$dir"; rm -rf "$dir"' EXIT
  echo "== starting kube-apiserver and kube-controller-manager on 127.0.0.1:$PEER_PORT"
  PEER_KUBECONFIG=$(PEER_KCM=1 "$PEER_SCRIPT" start "$dir" "$PEER_PORT" | tail -1)
fi

echo "== recording kube-apiserver's answers (test/builtinconf/testdata/golden.yaml)"
APILOOM_BUILTINCONF_PEER_KUBECONFIG=$PEER_KUBECONFIG \
  "$GO" test -count=1 -run '^TestRecordKubeAPIServer$' ./test/builtinconf/

echo "== apiloom against kube-apiserver"
report=$(mktemp)
APILOOM_BUILTINCONF_TABLE=$report "$GO" test -count=1 -run '^TestAPILoomMatchesKubeAPIServer$' ./test/builtinconf/ || status=$?
cat "$report"
rm -f "$report"
exit "${status:-0}"
