#!/usr/bin/env bash
# make test-postgres: on kine over a real PostgreSQL (hack/lib/postgres.sh
# installs Debian's when missing and starts it in a scratch directory),
#   1. the storage and watch cache conformance suites (test/kine, kine in
#      the test's process), and TestCreatesWhileConnectionsDie (creates
#      while kine's database connections are terminated every 20 ms);
#   2. the end-to-end core (test/e2e, E2E_CORE below) against bin/kine
#      (hack/build-kine.sh) on the same database: kubectl, the generated
#      clientset, client-go informers, watch fan-out;
#   3. TestDatabaseRestart (test/kine): PostgreSQL stopped and started
#      under load, with its figures (without -race: see below).
#
#   PG_KEEP=1   leaves the scratch directory (the database's and kine's logs) behind
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
source hack/lib/postgres.sh

# The end-to-end core: what a client does through every layer down to
# storage, each on the watch cache and, where the test has the variant,
# without it (straight to kine):
#   TestKubectl                   kubectl apply (create, unchanged, configure), get, get -w, explain, delete --wait (bin/apiloom --etcd-servers)
#   TestKubectlServerSideApply    kubectl apply --server-side, conflicts, managed fields
#   TestKubectlStrategicMergePatch  kubectl patch, client-side apply's patches
#   TestClientsetNamespacedLifecycle  create, get, update (conflict on a stale resourceVersion), status, patches, selectors, delete preconditions
#   TestClientsetClusterScopedAndPagination  cluster-scoped CRUD, paged lists, deletecollection
#   TestClientsetApply, TestApplyWatchEvents  server-side apply through the clientset, its watch events
#   TestResourceVersionSemantics  Exact and NotOlderThan lists, pages on one snapshot, watch replay, 504 for a future resourceVersion
#   TestVersionsListAndWatch      lists and watches in two versions at one resourceVersion
#   TestInformers                 informers (watch-list and list-and-watch, with and without the cache), listers
#   TestWatchFanOut               100 watchers see every write once, in order, with the cache and on kine's own watches
#   TestReplicasShareOneEtcd      two apiloom replicas on one kine
#   TestPrefixesKeepServersApart  two servers on one kine under different --etcd-prefix values
# Left out, as they test embedded etcd itself: TestEtcdProbe,
# TestEtcdUnreachableByOtherUsers, TestServerListensOnlyOnItsAPIPort (its
# unix socket), TestEtcdQuotaFull, TestDiskFull, TestStartOnFullDisk (its
# quota and the disk guard), TestCompaction (the server's compactor on
# etcd; kine compacts by itself, test/kine covers what a compaction does
# on it), TestCorruptObject, TestRestartOnCorruptValue (values written
# into etcd's own keys). The other e2e tests check what sits above storage
# (validation, RBAC, GC, namespaces, hooks, HTTP/2, limits), which sends
# storage the requests the core already sends; they stay on embedded etcd
# to keep this target within a few minutes.
E2E_CORE='^(TestKubectl|TestKubectlServerSideApply|TestKubectlStrategicMergePatch|TestClientsetNamespacedLifecycle|TestClientsetClusterScopedAndPagination|TestClientsetApply|TestApplyWatchEvents|TestResourceVersionSemantics|TestVersionsListAndWatch|TestInformers|TestWatchFanOut|TestReplicasShareOneEtcd|TestPrefixesKeepServersApart)$'

kine_pid=
cleanup() {
  if [[ -n $kine_pid ]]; then kill "$kine_pid" 2>/dev/null || true; wait "$kine_pid" 2>/dev/null || true; fi
  pg_teardown
}
trap cleanup EXIT
pg_setup

export APILOOM_KINE_ENDPOINT=$PG_ENDPOINT
echo "== go test ./test/kine/ on PostgreSQL ($("$PG_BIN/postgres" --version))"
(cd test/kine && "$GO" test -race -count=1 -timeout 15m -skip '^TestDatabaseRestart$' ./...)

kine=$(GO=$GO hack/build-kine.sh)
socket=$PG_DIR/kine.sock
# kine's defaults but for the metrics listener (none): no compaction of its
# own (--compact-interval 0), the servers started by the tests do not
# compact either.
"$kine" --endpoint "$PG_ENDPOINT" --listen-address "unix://$socket" --metrics-bind-address 0 >"$PG_DIR/kine.log" 2>&1 &
kine_pid=$!
for _ in $(seq 100); do
  [[ -S $socket ]] && break
  kill -0 "$kine_pid" 2>/dev/null || { cat "$PG_DIR/kine.log"; exit 1; }
  sleep 0.1
done
[[ -S $socket ]] || { echo "kine did not listen on $socket"; cat "$PG_DIR/kine.log"; exit 1; }

kubectl_dir=$(hack/ensure-kubectl.sh)
echo "== go test ./test/e2e/ (the end-to-end core) on kine $(awk '$1 == "github.com/k3s-io/kine" {print $2}' test/kine/go.mod) on PostgreSQL"
PATH=$kubectl_dir:$PATH APILOOM_E2E_ETCD_SERVERS="unix://$socket" APILOOM_CI=1 \
  "$GO" test -race -count=1 -timeout 15m -run "$E2E_CORE" ./test/e2e/

# The database stopped and started under load, last, with the e2e's kine
# stopped: the test runs pg_stop and pg_start from this library, and prints
# its figures (docs/backends.md).
kill "$kine_pid"; wait "$kine_pid" 2>/dev/null || true; kine_pid=
export APILOOM_PG_LIB=$PWD/hack/lib/postgres.sh
# Without the race detector: kine v0.17.5's watch loop (pkg/server/watch.go)
# appends the events that queue up while the database is away to a batch it
# shares with every other watch, a race inside kine itself, in this test's
# process, that failed one of four CI runs on 2026-11-25. Every other suite here and in
# make test runs apiloom's code with -race.
echo "== PostgreSQL stopped and started under load (TestDatabaseRestart)"
(cd test/kine && "$GO" test -count=1 -timeout 10m -run '^TestDatabaseRestart$' -v ./...) |
  grep -vE '^=== (RUN|PAUSE|CONT)'
