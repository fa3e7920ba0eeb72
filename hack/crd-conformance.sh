#!/usr/bin/env bash
# make crd-conformance: the CRD conformance test of issue 12 (test/crdconf).
#
# 1. Starts a real kube-apiserver v1.37 with its own etcd (PEER_SCRIPT,
#    default ../shared/peers/kube-apiserver.sh, on PEER_PORT, default 17400;
#    its etcd listens on PEER_PORT+10), applies the CRDs controller-gen made
#    of apis/crdconf (test/crdconf/testdata/crd), runs the table
#    (testdata/cases.yaml) against it and records every answer in
#    test/crdconf/testdata/golden.yaml (commit it when it changes).
# 2. Runs the same table against apiloom (TestAPILoomMatchesCRD, which
#    make test also runs) and prints the comparison with totals.
#
# PEER_KUBECONFIG and PEER_ETCD (a running peer's kubeconfig and etcd
# client URL) skip starting one.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
GO=${GO:-go}
: "${PEER_SCRIPT:=$root/../shared/peers/kube-apiserver.sh}" "${PEER_PORT:=17400}"

if [[ -z ${PEER_KUBECONFIG:-} ]]; then
  dir=$(mktemp -d)
  trap '"$PEER_SCRIPT" stop "$dir"; rm -rf "$dir"' EXIT
  echo "== starting kube-apiserver on 127.0.0.1:$PEER_PORT"
  PEER_KUBECONFIG=$("$PEER_SCRIPT" start "$dir" "$PEER_PORT" | tail -1)
  PEER_ETCD=http://127.0.0.1:$((PEER_PORT + 10))
fi

echo "== recording kube-apiserver's answers (test/crdconf/testdata/golden.yaml)"
APILOOM_CRDCONF_PEER_KUBECONFIG=$PEER_KUBECONFIG APILOOM_CRDCONF_PEER_ETCD=$PEER_ETCD \
  "$GO" test -count=1 -run '^TestRecordKubeAPIServer$' ./test/crdconf/

echo "== apiloom against the CRD"
report=$(mktemp)
APILOOM_CRDCONF_TABLE=$report "$GO" test -count=1 -run '^TestAPILoomMatchesCRD$' ./test/crdconf/ || status=$?
cat "$report"
rm -f "$report"
exit "${status:-0}"
