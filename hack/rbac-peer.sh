#!/usr/bin/env bash
# The differential RBAC test (make test-rbac-peer): starts a real kube-apiserver v1.37 with
# --authorization-mode=RBAC and its own etcd, runs TestPeerDifferential of server/authz/rbac
# against it (a generated matrix of roles, bindings and requests that both must decide alike),
# and stops it.
#
#   RBAC_PEER_PORT   the peer's secure port (default 18150; its etcd listens on PORT+10, PORT+11)
#   PEER_CACHE       where the kube-apiserver and etcd binaries are (default ~/.cache/apiloom-peer,
#                    the cache `make load PEER=1` builds and fills)
#   RBAC_PEER_KEEP=1 leaves the peer's directory (logs) behind
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
cache=${PEER_CACHE:-$HOME/.cache/apiloom-peer}
port=${RBAC_PEER_PORT:-18150}
eport=$((port + 10))
for b in kube-apiserver etcd; do
  [[ -x $cache/$b ]] || { echo "rbac-peer: $cache/$b missing (build the peer binaries first, as make load PEER=1 does)" >&2; exit 1; }
done
command -v kubectl >/dev/null || { echo "rbac-peer: kubectl is needed (hack/ensure-kubectl.sh)" >&2; exit 1; }

dir=$(mktemp -d)
stop() {
  for p in kube-apiserver etcd; do
    [[ -f $dir/$p.pid ]] || continue
    local pid; pid=$(cat "$dir/$p.pid")
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true
  done
  [[ ${RBAC_PEER_KEEP:-0} == 1 ]] && echo "rbac-peer: logs in $dir" >&2 || rm -rf "$dir"
}
trap stop EXIT

openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
openssl rsa -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null
# The admin token's user is in system:masters, allowed everything before RBAC is asked.
echo 'admintoken,admin,admin,"system:masters"' >"$dir/tokens.csv"
"$cache/etcd" -data-dir "$dir/etcd-data" -listen "http://127.0.0.1:$eport" -peer "http://127.0.0.1:$((eport + 1))" >"$dir/etcd.log" 2>&1 &
echo $! >"$dir/etcd.pid"
"$cache/kube-apiserver" --etcd-servers="http://127.0.0.1:$eport" --secure-port="$port" --bind-address=127.0.0.1 \
  --cert-dir="$dir/certs" --token-auth-file="$dir/tokens.csv" --authorization-mode=RBAC \
  --service-account-issuer=https://kubernetes.default.svc --service-account-signing-key-file="$dir/sa.key" \
  --service-account-key-file="$dir/sa.pub" >"$dir/kube-apiserver.log" 2>&1 &
echo $! >"$dir/kube-apiserver.pid"
cat >"$dir/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: peer, cluster: {server: "https://127.0.0.1:$port", insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: admintoken}}]
contexts: [{name: peer, context: {cluster: peer, user: admin}}]
current-context: peer
KC
# /readyz includes the bootstrap of RBAC's default roles (poststarthook/rbac/bootstrap-roles).
ready=0
for _ in $(seq 240); do
  kubectl --kubeconfig "$dir/kubeconfig" get --raw /readyz >/dev/null 2>&1 && { ready=1; break; }
  sleep 0.5
done
[[ $ready == 1 ]] || { echo "rbac-peer: kube-apiserver not ready; its log:" >&2; tail -20 "$dir/kube-apiserver.log" >&2; exit 1; }

APILOOM_RBAC_PEER_KUBECONFIG="$dir/kubeconfig" $GO test -count=1 -run '^TestPeerDifferential$' -v ./server/authz/rbac/ "$@"
