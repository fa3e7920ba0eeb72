#!/usr/bin/env bash
# The whole test suite, as CI runs it (make test): every package with the
# race detector, then the end-to-end suite once more against Go's own HTTP/2
# server (--http2-server=go), the fallback that must keep working. That
# second pass runs without the race detector: the handlers it drives are
# the ones the first pass raced, Go's server is the standard library's, and
# under race the suite now takes ~20 minutes a pass on two cores, which two
# passes of would leave CI's 90 minutes too little room.
#
# APILOOM_CI=1 makes every test that needs an outside tool run or fail,
# never skip (internal/testenv): kubectl is ensured here
# (hack/ensure-kubectl.sh builds one when none is installed), protoc too
# (test/scaffold's make generate runs it; hack/lib/protoc.sh installs
# Debian's), and h2spec is built from the module pinned in
# server/internal/h2/testdata/h2spec. kube-apiserver and
# kube-controller-manager v1.37 (internal/hostcluster's host cluster, for
# the tests of apiloom as an aggregated API server and of the manifests) are
# built once by hack/ensure-kube-apiserver.sh and named by
# APILOOM_KUBE_APISERVER and APILOOM_KUBE_CONTROLLER_MANAGER.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
kubectl_dir=$(hack/ensure-kubectl.sh)
source hack/lib/protoc.sh
protoc_ensure
export PATH=$kubectl_dir:$PATH APILOOM_CI=1
kas_dir=$(hack/ensure-kube-apiserver.sh)
export APILOOM_KUBE_APISERVER=$kas_dir/kube-apiserver APILOOM_KUBE_CONTROLLER_MANAGER=$kas_dir/kube-controller-manager

echo "== go test ./... (HTTP/2: apiloom's own server)"
"$GO" test -race -timeout 35m ./...

echo "== go test ./test/kine/ (the storage and watch cache suites on kine over SQLite; a module of its own)"
(cd test/kine && "$GO" test -race -timeout 10m ./...)

echo "== go test ./test/robustness/ (the fault-injection suite's recorder, checkers and harness unit tests; its scenarios run in make robustness)"
(cd test/robustness && "$GO" test -race -timeout 5m ./...)

echo "== go test ./test/e2e/ (HTTP/2: Go's server, --http2-server=go)"
APILOOM_E2E_HTTP2_SERVER=go "$GO" test -timeout 25m ./test/e2e/
