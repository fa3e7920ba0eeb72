#!/usr/bin/env bash
# Load figures for issues #4 and #18: watch fan-out, idle watchers, LIST and informer sync, measured
# by cmd/apiloom-load against servers started here on loopback, printed side
# by side with ratios to the first target.
#
#   hack/load.sh                 # apiloom (watch cache on)
#   PEER=1 hack/load.sh          # + apiloom --watch-cache=false + kube-apiserver (CRD)
#   TARGETS="apiloom kube-apiserver" hack/load.sh
#   PROFILE=1 hack/load.sh       # + a Go CPU profile of each server during the fanout writes,
#                                #   and one of the load generator itself
#   BASE=<git rev> hack/load.sh  # + apiloom built from another commit (target apiloom-base),
#                                #   first, so every ratio is to it: a change measured in one run
#   TARGETS="apiloom apiloom-gohttp2" SCENARIOS="fanout idle" hack/load.sh
#                                # our HTTP/2 server against Go's (--http2-server=go), in one run
#   TARGETS="apiloom-alwaysallow apiloom-rbac" hack/load.sh
#                                # the load as a user that RBAC authorizes (a ClusterRole for what
#                                # the load does, among RBAC_FILLER other Roles and bindings)
#                                # against the same user with --authorization-mode=AlwaysAllow
#   TARGETS="apiloom-noadmission apiloom" SCENARIOS=admission hack/load.sh
#                                # what dynamic admission costs a create: apiloom with its four
#                                # plugins disabled (one round, no admission), then rounds with
#                                # none configured, 1 and 10 ValidatingAdmissionPolicies and a
#                                # validating webhook the load generator serves on 127.0.0.1;
#                                # the summary's "÷ apiloom-noadmission none" rows are the ratios
#   TARGETS="apiloom apiloom-kine-sqlite apiloom-kine-postgres" SCENARIOS="list fanout" LIST_CREATORS=32 hack/load.sh
#                                # embedded etcd against kine (bin/kine, hack/build-kine.sh) over
#                                # SQLite and over PostgreSQL (hack/lib/postgres.sh): apiloom
#                                # --etcd-servers at a kine on a free loopback port, with kine's
#                                # defaults; the CPU figures are apiloom's, kine's and postgres's
#                                # (postmaster and its backends), each
#   SCENARIOS=scale SCALE_OBJECTS="10000 100000 1000000" hack/load.sh
#                                # issue 39: the list scenario's objects grown step by step
#                                # (each step creates only the difference, LIST_CREATORS at
#                                # once) and measured at each count: creates/s, RSS (each
#                                # process and summed), heap in use, the etcd db file, LISTs
#                                # (RV=0, consistent, paged), GETs, informer syncs
#                                # (SCALE_INFORMER_FORMATS, default "json protobuf"), the
#                                # FANOUT_WATCHERS fan-out round, and a restart: the server
#                                # stopped and started again on the same data dir and port
#                                # (by this script's scale_stop_*/scale_start_* functions,
#                                # which the load tool runs) and timed until /readyz is 200 and
#                                # until a LIST RV=0 returns every object. PEER=1 adds the
#                                # kube-apiserver peer (its etcd's db and RSS counted too); the
#                                # run is bounded by LOAD_TIMEOUT (default 6h with scale, else
#                                # 15m). One row per (figure, count) in the summary, a column
#                                # per target; OUT/charts/scale-*.png against object count.
#
# Sizes (environment): FANOUT_WATCHERS (several counts, e.g. "100 1000 10000", are a fan-out
# round each, charted as latency against watchers) FANOUT_TRANSPORTS (default "h2"; "h2 http1"
# adds an HTTP/1.1 round per count: a TLS connection per watcher, as client-go with HTTP/2
# disabled) FANOUT_RATE FANOUT_DURATION IDLE_WATCHERS
# IDLE_HOLD LIST_OBJECTS LIST_REPEATS LIST_CREATORS (concurrent creates and patches of the list
# scenario) LIST_PAGE_SIZE (limit of the paged LIST) GET_REQUESTS (GETs by name of each kind
# after the LISTs, 0: none) LIST_COMPRESSION (false: no gzip, which
# kube-apiserver otherwise spends CPU on for large lists) INFORMER_OBJECTS (default LIST_OBJECTS;
# several counts, e.g. "10000 100000", give informer sync against objects) INFORMER_FORMATS
# (default "json cbor protobuf": client-go's dynamic informer in JSON, and with its CBOR gates on;
# the generated clientset's informer in protobuf, for apiloom's kinds only; a round the server
# answers in another format is reported "not served") INFORMER_REPEATS FLOOR_PUTS (puts of the
# floor scenario, default LIST_OBJECTS; the floor puts into the target's own etcd at LIST_CREATORS
# concurrency: apiloom's embedded etcd socket, the peer's etcd URL; kine targets skip it)
# ADMISSION_CREATES (creates a round of the admission scenario) ADMISSION_CREATORS ADMISSION_ROUNDS
# (default "none policy-1 policies-10 webhook-1"; apiloom-noadmission runs "none" only)
# ADMISSION_REPEATS (the rounds run this many times over, interleaved, and are pooled by name)
# SCENARIOS APILOOM_FLAGS (added to
# every apiloom target's flags, e.g. --watch-cache=false); results and logs go to
# OUT (default: a new temporary directory, printed at the end), PNG charts of them
# (apiloom-load charts) to OUT/charts.
# The kube-apiserver peer is ../shared/peers/kube-apiserver.sh (PEER_SCRIPT);
# its first build takes about 6 minutes. It serves the example kinds as the CRDs
# controller-gen makes of them (hack/peer-crds, written by make generate), so both
# servers store and send the same objects; PEER_KIND=widget loads the peer
# script's own widgets CRD instead (a payload in spec, fewer fields: the objects
# of the runs before 2026-11-28).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

: "${FANOUT_WATCHERS:=1000}" "${FANOUT_TRANSPORTS:=h2}" "${FANOUT_RATE:=20}" "${FANOUT_DURATION:=20s}"
: "${IDLE_WATCHERS:=10000}" "${IDLE_HOLD:=10s}"
: "${LIST_OBJECTS:=10000}" "${LIST_REPEATS:=5}" "${LIST_COMPRESSION:=true}"
: "${LIST_CREATORS:=8}" "${LIST_PAGE_SIZE:=500}" "${GET_REQUESTS:=1000}"
: "${FLOOR_PUTS:=0}" "${INFORMER_OBJECTS:=$LIST_OBJECTS}" "${INFORMER_FORMATS:=json cbor protobuf}" "${INFORMER_REPEATS:=3}"
: "${ADMISSION_CREATES:=3000}" "${ADMISSION_CREATORS:=8}" "${ADMISSION_ROUNDS:=none policy-1 policies-10 webhook-1}" "${ADMISSION_REPEATS:=1}"
: "${SCENARIOS:=baseline fanout idle list floor informer apf}"
: "${SCALE_OBJECTS:=10000 100000 1000000}" "${SCALE_INFORMER_FORMATS:=json protobuf}"
if [[ -z ${LOAD_TIMEOUT:-} ]]; then
  LOAD_TIMEOUT=15m
  [[ " $SCENARIOS " == *" scale "* ]] && LOAD_TIMEOUT=6h
fi
# apf (issue 37): test/apfload starts its own two servers, API Priority and Fairness on and
# off, after the targets; APF_OBJECTS APF_NOISY APF_SECONDS size it (10000, 200, 30).
: "${APF_OBJECTS:=10000}" "${APF_NOISY:=200}" "${APF_SECONDS:=30}"
: "${PEER_SCRIPT:=$root/../shared/peers/kube-apiserver.sh}" "${PEER_PORT:=}" "${PEER_KIND:=example}"
: "${PROFILE:=0}" "${PPROF_PORT:=16060}"
if [[ -z ${TARGETS:-} ]]; then
  TARGETS=apiloom
  [[ ${PEER:-0} == 1 ]] && TARGETS="apiloom apiloom-nocache kube-apiserver"
  [[ -n ${BASE:-} ]] && TARGETS="apiloom-base $TARGETS"
fi
OUT=${OUT:-$(mktemp -d /tmp/apiloom-load.XXXXXX)}
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)

# 10k watchers are 10k streams over a dozen connections, but the servers'
# etcd clients, the peer and headroom want more than the usual 1024.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || ulimit -n 65536 2>/dev/null || true
echo "open-file limit: $(ulimit -n)"

echo "building bin/apiloom and bin/apiloom-load"
go build -o bin/apiloom ./cmd/apiloom
go build -o bin/apiloom-load ./cmd/apiloom-load
apiloom_bin=bin/apiloom
if [[ -n ${BASE:-} ]]; then
  echo "building apiloom at $BASE"
  base_src=$OUT/base-src
  rm -rf "$base_src"; mkdir -p "$base_src"
  git archive "$BASE" | tar -x -C "$base_src"
  (cd "$base_src" && go build -o "$OUT/base-bin/apiloom" ./cmd/apiloom)
fi
if [[ $PROFILE == 1 ]]; then
  # A profiling build: the same server plus net/http/pprof on a loopback port,
  # added through a build overlay so that no source file changes.
  mkdir -p "$OUT/pprof-overlay"
  cat >"$OUT/pprof-overlay/zz_pprof.go" <<'GO'
package main

import (
	"net/http"
	_ "net/http/pprof"
	"os"
)

func init() {
	if addr := os.Getenv("APILOOM_PPROF_ADDR"); addr != "" {
		go func() { _ = http.ListenAndServe(addr, nil) }()
	}
}
GO
  printf '{"Replace":{"%s":"%s"}}\n' "$root/cmd/apiloom/zz_pprof.go" "$OUT/pprof-overlay/zz_pprof.go" >"$OUT/pprof-overlay/overlay.json"
  go build -overlay "$OUT/pprof-overlay/overlay.json" -o "$OUT/apiloom-pprof" ./cmd/apiloom
  apiloom_bin=$OUT/apiloom-pprof
fi

if [[ " $TARGETS " == *" apiloom-kine-"* ]]; then
  echo "building bin/kine"
  kine_bin=$(hack/build-kine.sh | tail -1)
  # shellcheck source=lib/postgres.sh
  source hack/lib/postgres.sh
fi

started=()   # "apiloom PID", "pidfile FILE", "kine PID", "postgres" or "peer DIR", for cleanup
scale_flags=()
cleanup() {
  local i
  # Last started first: apiloom before the kine it uses, kine before its
  # database.
  for ((i = ${#started[@]} - 1; i >= 0; i--)); do
    set -- ${started[i]}
    case $1 in
      apiloom | kine) kill "$2" 2>/dev/null && wait "$2" 2>/dev/null || true ;;
      # A server the scale scenario restarted is no child of this shell.
      pidfile) [[ -f $2 ]] && stop_pid "$(cat "$2")" ;;
      postgres) pg_teardown; PG_DIR= ;;
      peer) scale_stop_peer "$PEER_SCRIPT" "$2" ;;
    esac
  done
  started=()
}
trap cleanup EXIT

# stop_pid PID: SIGTERM, then SIGKILL after a minute; returns once it is gone.
stop_pid() {
  kill "$1" 2>/dev/null || return 0
  for _ in $(seq 600); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$1" 2>/dev/null || true
}

# The scale scenario's restart hooks: apiloom-load runs them with bash
# (hence export -f), stop first, then start, which must print the new
# --pid PIDs on its last line once the processes are started.
#
# scale_stop_apiloom DIR: stops the apiloom whose PID is DIR/server.pid.
scale_stop_apiloom() { stop_pid "$(cat "$1/server.pid")"; }

# scale_start_apiloom DIR [PID...]: starts apiloom again with the command
# line it was first started with (DIR/start.cmd) on the port it had, so
# that every kubeconfig of it stays valid; prints its PID and the PIDs
# given (processes that kept running: kine).
scale_start_apiloom() {
  local dir=$1 port pid; shift
  port=$(grep -o 'server: https://127.0.0.1:[0-9]*' "$dir/kubeconfig" | grep -o '[0-9]*$')
  [[ -n $port ]] || { echo "no port in $dir/kubeconfig" >&2; return 1; }
  rm -f "$dir/kubeconfig"
  # exec: the background job's PID is apiloom's, not a subshell's.
  eval "exec $(cat "$dir/start.cmd") --secure-port $port" >>"$dir/server.log" 2>&1 &
  pid=$!
  echo "$pid" >"$dir/server.pid"
  for _ in $(seq 600); do
    [[ -s $dir/kubeconfig ]] && { echo "$pid" "$@"; return 0; }
    kill -0 "$pid" 2>/dev/null || { echo "apiloom exited on restart:" >&2; tail -20 "$dir/server.log" >&2; return 1; }
    sleep 0.1
  done
  echo "apiloom: no kubeconfig 60s after restart" >&2; return 1
}

# scale_stop_peer SCRIPT DIR: stops the peer; the script only signals, so
# wait until both processes are gone and the ports free.
scale_stop_peer() {
  "$1" stop "$2" || true
  for f in "$2"/kube-apiserver.pid "$2"/etcd.pid; do
    [[ -f $f ]] || continue
    for _ in $(seq 300); do kill -0 "$(cat "$f")" 2>/dev/null || break; sleep 0.1; done
  done
}

# scale_start_peer SCRIPT DIR PORT: starts the peer again on its data, in
# the background (the script itself waits for /readyz, which the load tool
# times), and prints kube-apiserver's and etcd's PIDs once both are
# written.
scale_start_peer() {
  local script=$1 dir=$2 port=$3
  rm -f "$dir/kube-apiserver.pid" "$dir/etcd.pid"
  "$script" start "$dir" "$port" >>"$dir/restart.log" 2>&1 &
  for _ in $(seq 600); do
    if [[ -s $dir/kube-apiserver.pid && -s $dir/etcd.pid ]]; then
      echo "$(cat "$dir/kube-apiserver.pid") $(cat "$dir/etcd.pid")"; return 0
    fi
    sleep 0.1
  done
  echo "kube-apiserver: no PID files 60s after restart; see $dir/restart.log" >&2; return 1
}
export -f stop_pid scale_stop_apiloom scale_start_apiloom scale_stop_peer scale_start_peer

# shellcheck disable=SC2086 # FANOUT_WATCHERS, FANOUT_TRANSPORTS, INFORMER_OBJECTS and INFORMER_FORMATS are word lists
load_flags=(--fanout-watchers "$(echo $FANOUT_WATCHERS | tr ' ' ,)" --fanout-transports "$(echo $FANOUT_TRANSPORTS | tr ' ' ,)" --fanout-rate "$FANOUT_RATE" --fanout-duration "$FANOUT_DURATION"
  --idle-watchers "$IDLE_WATCHERS" --idle-hold "$IDLE_HOLD" --list-objects "$LIST_OBJECTS" --list-repeats "$LIST_REPEATS"
  --list-creators "$LIST_CREATORS" --list-page-size "$LIST_PAGE_SIZE" --get-requests "$GET_REQUESTS" --list-compression="$LIST_COMPRESSION"
  --informer-objects "$(echo $INFORMER_OBJECTS | tr ' ' ,)" --informer-formats "$(echo $INFORMER_FORMATS | tr ' ' ,)"
  --informer-repeats "$INFORMER_REPEATS" --floor-puts "$FLOOR_PUTS"
  --admission-creates "$ADMISSION_CREATES" --admission-creators "$ADMISSION_CREATORS"
  --scale-objects "$(echo $SCALE_OBJECTS | tr ' ' ,)" --scale-informer-formats "$(echo $SCALE_INFORMER_FORMATS | tr ' ' ,)"
  --timeout "$LOAD_TIMEOUT")

# start_apiloom NAME [FLAGS...]: sets kubeconfig and pids.
start_apiloom() { start_apiloom_bin "$apiloom_bin" "$@"; }

# start_apiloom_bin BINARY NAME [FLAGS...]: start_apiloom with another build.
start_apiloom_bin() {
  local bin=$1 name=$2; shift 2
  local dir=$OUT/$name
  rm -rf "$dir"; mkdir -p "$dir"
  # shellcheck disable=SC2086 # APILOOM_FLAGS is a word list
  local cmd=(env APILOOM_PPROF_ADDR="$([[ $PROFILE == 1 ]] && echo "127.0.0.1:$PPROF_PORT")"
    "$(realpath "$bin")" --data-dir "$dir" --secure-port 0 "$@" ${APILOOM_FLAGS:-})
  "${cmd[@]}" >"$dir/server.log" 2>&1 &
  local pid=$!
  started+=("apiloom $pid" "pidfile $dir/server.pid")
  # For the scale scenario's restart: the command line, and the PID of
  # whichever process is the server now.
  printf '%q ' "${cmd[@]}" >"$dir/start.cmd"
  echo "$pid" >"$dir/server.pid"
  scale_flags=(--scale-stop "scale_stop_apiloom $(printf %q "$dir")" --scale-start "scale_start_apiloom $(printf %q "$dir")"
    --scale-etcd-db "$dir/etcd/member/snap/db")
  for _ in $(seq 300); do
    [[ -s $dir/kubeconfig ]] && break
    kill -0 "$pid" 2>/dev/null || { echo "$name exited:"; tail -20 "$dir/server.log"; return 1; }
    sleep 0.1
  done
  [[ -s $dir/kubeconfig ]] || { echo "$name: no kubeconfig after 30s"; return 1; }
  kubeconfig=$dir/kubeconfig pids=(--pid "$pid") pid_names=apiloom
  target_flags=()
  # The floor's etcd: the embedded one's unix socket, as the server logs
  # it (it is in a temporary directory when the data dir is too deep);
  # none with --etcd-servers (kine), so the floor is skipped there.
  etcd_endpoint=
  if [[ " $* ${APILOOM_FLAGS:-} " != *" --etcd-servers"[\ =]* ]]; then
    etcd_endpoint=$(grep -o 'unix://[^" ]*' "$dir/server.log" | head -1)
    [[ -n $etcd_endpoint ]] || { echo "$name: no embedded etcd socket in its log"; return 1; }
  fi
  [[ $PROFILE == 1 ]] && target_flags=(--profile "http://127.0.0.1:$PPROF_PORT/debug/pprof/profile" --profile-out "$OUT/$name.cpu.pprof")
  return 0
}

# as_load_user NAME: makes the load run as user "load" instead of the
# admin (whom system:masters lets through before any authorizer), bound to
# a ClusterRole allowing what apiloom-load does, with RBAC_FILLER Roles and
# RoleBindings (and as many cluster ones) for other users beside it, so
# that the authorizer has a realistic amount to search.
as_load_user() {
  local dir=$OUT/$1 admin=$kubeconfig n=${RBAC_FILLER:-500}
  "$apiloom_bin" kubeconfig --data-dir "$dir" --user load --group load-testers --out "$dir/load.kubeconfig" || return 1
  {
    cat <<'YAML'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: load}
rules:
- {apiGroups: [example.apiloom.dev], resources: [databases], verbs: ["*"]}
- {apiGroups: [""], resources: [namespaces], verbs: [get, create]}
- {nonResourceURLs: [/metrics], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: load}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: load}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: load-testers}]
YAML
    for i in $(seq "$n"); do
      cat <<YAML
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: filler-$i}
rules: [{apiGroups: [example.apiloom.dev], resources: [databases, regions], verbs: [get, list, watch], resourceNames: [db-$i]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: filler-$i}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: filler-$i}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: user-$i}, {apiGroup: rbac.authorization.k8s.io, kind: Group, name: group-$i}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: filler-$i, namespace: default}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get, update], resourceNames: [cm-$i]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: filler-$i, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: filler-$i}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: user-$i}]
YAML
    done
  } >"$dir/rbac.yaml"
  for _ in $(seq 300); do kubectl --kubeconfig "$admin" get namespace default >/dev/null 2>&1 && break; sleep 0.1; done
  kubectl --kubeconfig "$admin" create -f "$dir/rbac.yaml" >/dev/null || return 1
  kubeconfig=$dir/load.kubeconfig
}

# free_port: a port p with p, p+10 and p+11 free (the peer's etcd takes
# p+10 and p+11), so that runs by others on this machine do not collide.
free_port() {
  local p
  for _ in $(seq 50); do
    p=$((20000 + RANDOM % 20000))
    if ! ss -ltn | awk '{print $4}' | grep -Eq ":($p|$((p + 10))|$((p + 11)))\$"; then
      echo "$p"; return 0
    fi
  done
  return 1
}

# start_kine NAME DB: starts bin/kine on a free loopback port, over SQLite
# (kine's default database, ./db/state.db in its own directory, with kine's
# default SQLite parameters) or PostgreSQL (a scratch one from
# hack/lib/postgres.sh), then apiloom NAME with --etcd-servers at it. Every
# kine setting is kine's default but --metrics-bind-address 0: its metrics
# listener would take :8080 on every interface.
start_kine() {
  local name=$1 db=$2 dir=$OUT/$1.kine port args
  rm -rf "$dir"; mkdir -p "$dir"
  port=$(free_port) || { echo "$name: no free port"; return 1; }
  args=(--listen-address "127.0.0.1:$port" --metrics-bind-address 0)
  if [[ $db == postgres ]]; then
    started+=("postgres")
    pg_setup >"$dir/postgres-setup.log" 2>&1 || { echo "$name: postgres did not start"; cat "$dir/postgres-setup.log"; return 1; }
    args+=(--endpoint "$PG_ENDPOINT")
  fi
  (cd "$dir" && exec "$kine_bin" "${args[@]}") >"$dir/kine.log" 2>&1 &
  local kpid=$!
  started+=("kine $kpid")
  for _ in $(seq 300); do
    ss -ltn | awk '{print $4}' | grep -qx "127.0.0.1:$port" && break
    kill -0 "$kpid" 2>/dev/null || { echo "$name: kine exited:"; tail -20 "$dir/kine.log"; return 1; }
    sleep 0.1
  done
  ss -ltn | awk '{print $4}' | grep -qx "127.0.0.1:$port" || { echo "$name: kine not listening after 30s"; return 1; }
  start_apiloom "$name" --etcd-servers "http://127.0.0.1:$port" || return 1
  pids+=(--pid "$kpid") pid_names+=,kine
  # A restart restarts apiloom only; kine keeps running. The storage file
  # is SQLite's (kine's default ./db/state.db); PostgreSQL's has none.
  scale_flags=(--scale-stop "${scale_flags[1]}" --scale-start "${scale_flags[3]} $kpid" --scale-etcd-db "$dir/db/state.db")
  [[ $db == postgres ]] && scale_flags=("${scale_flags[@]:0:4}")
  if [[ $db == postgres ]]; then
    # The postmaster and the backend it forks for each of kine's connections.
    pids+=(--pid-tree "$(head -1 "$PG_DIR/data/postmaster.pid")") pid_names+=,postgres
  fi
}

start_peer() {
  local dir=$OUT/kube-apiserver port=${PEER_PORT:-$(free_port)}
  echo "starting kube-apiserver on 127.0.0.1:$port (first build takes ~6 minutes)"
  started+=("peer $dir")
  kubeconfig=$("$PEER_SCRIPT" start "$dir" "$port" | tail -1) || { echo "kube-apiserver did not start; see $dir/*.log"; return 1; }
  pids=(--pid "$(cat "$dir/kube-apiserver.pid")" --pid "$(cat "$dir/etcd.pid")") pid_names=kube-apiserver,etcd
  scale_flags=(--scale-stop "scale_stop_peer $(printf %q "$PEER_SCRIPT") $(printf %q "$dir")"
    --scale-start "scale_start_peer $(printf %q "$PEER_SCRIPT") $(printf %q "$dir") $port"
    --scale-etcd-db "$dir/etcd-data/member/snap/db")
  # Its etcd's client URL: the peer script puts etcd on port+10.
  etcd_endpoint=http://127.0.0.1:$((port + 10))
  case $PEER_KIND in
    example)
      # The kinds apiloom serves, as CRDs: the load's flags are apiloom's.
      kubectl --kubeconfig "$kubeconfig" apply -f hack/peer-crds >/dev/null || return 1
      kubectl --kubeconfig "$kubeconfig" wait --for condition=Established --timeout 60s \
        -f hack/peer-crds >/dev/null || return 1
      target_flags=() ;;
    widget)
      target_flags=(--group bench.example.com --version v1 --resource widgets --kind Widget
        --payload-field spec.payload --spec '{}') ;;
    *) echo "unknown PEER_KIND $PEER_KIND (example or widget)"; return 1 ;;
  esac
  [[ $PROFILE == 1 ]] && target_flags+=(--profile server --profile-out "$OUT/kube-apiserver.cpu.pprof")
  return 0
}

status=0
results=()
for target in $TARGETS; do
  echo; echo "=== $target"
  case $target in
    apiloom) start=(start_apiloom apiloom) ;;
    apiloom-base) start=(start_apiloom_bin "$OUT/base-bin/apiloom" apiloom-base) ;;
    apiloom-nocache) start=(start_apiloom apiloom-nocache --watch-cache=false) ;;
    apiloom-noadmission)
      # Dynamic admission off: the admission scenario's one round is the
      # reference the other targets' rounds are divided by.
      start=(start_apiloom apiloom-noadmission
        --disable-admission-plugins=ValidatingAdmissionPolicy,MutatingAdmissionPolicy,ValidatingAdmissionWebhook,MutatingAdmissionWebhook)
      admission_rounds=$(printf 'none,%.0s' $(seq "$ADMISSION_REPEATS")) admission_rounds=${admission_rounds%,} ;;
    apiloom-gohttp2) start=(start_apiloom apiloom-gohttp2 --http2-server=go) ;;
    apiloom-rbac) start=(eval 'start_apiloom apiloom-rbac --authorization-mode=RBAC && as_load_user apiloom-rbac') ;;
    apiloom-alwaysallow) start=(eval 'start_apiloom apiloom-alwaysallow --authorization-mode=AlwaysAllow && as_load_user apiloom-alwaysallow') ;;
    apiloom-kine-sqlite) start=(start_kine apiloom-kine-sqlite sqlite) ;;
    apiloom-kine-postgres) start=(start_kine apiloom-kine-postgres postgres) ;;
    kube-apiserver) start=(start_peer) ;;
    *) echo "unknown target $target"; exit 2 ;;
  esac
  if ! "${start[@]}"; then
    status=1; cleanup; continue
  fi
  # shellcheck disable=SC2086 # ADMISSION_ROUNDS is a word list
  [[ $target == apiloom-noadmission ]] || admission_rounds=$(for _ in $(seq "$ADMISSION_REPEATS"); do echo $ADMISSION_ROUNDS; done | tr ' \n' ,,)
  admission_rounds=${admission_rounds%,}
  self_profile=()
  [[ $PROFILE == 1 ]] && self_profile=(--self-cpuprofile "$OUT/$target.load.cpu.pprof")
  scenarios=() floor_flags=()
  for s in $SCENARIOS; do
    [[ $s == apf ]] && continue # run once, below
    if [[ $s == floor && -z $etcd_endpoint ]]; then
      echo "$target: no etcd of its own to put into (kine); skipping the floor"
      continue
    fi
    scenarios+=("$s")
  done
  [[ -n $etcd_endpoint ]] && floor_flags=(--floor-etcd "$etcd_endpoint")
  if ((${#scenarios[@]} == 0)); then
    cleanup; continue
  fi
  if bin/apiloom-load --kubeconfig "$kubeconfig" "${pids[@]}" --pid-names "$pid_names" --label "$target" --out "$OUT/$target.json" "${self_profile[@]}" \
    "${load_flags[@]}" --admission-rounds "$admission_rounds" "${target_flags[@]}" "${floor_flags[@]}" "${scale_flags[@]}" "${scenarios[@]}" 2>&1 | tee "$OUT/$target.log"; then :; else status=1; fi
  [[ -s $OUT/$target.json ]] && results+=("$OUT/$target.json")
  cleanup
done

if ((${#results[@]} > 0)); then
  echo; echo "=== summary (ratios are to ${results[0]##*/})"
  bin/apiloom-load compare "${results[@]}" | tee "$OUT/summary.txt"
  charts=()
  for r in "${results[@]}"; do
    name=${r##*/}
    charts+=("${name%.json}=$r")
  done
  echo; echo "=== charts"
  bin/apiloom-load charts --out "$OUT/charts" "${charts[@]}" || status=1
  echo "charts: $OUT/charts"
fi
if [[ " $SCENARIOS " == *" apf "* ]]; then
  echo; echo "=== apf: noisy LISTs against a quiet user and Lease renewals, APF against max-in-flight"
  if APILOOM_APF_LOAD=1 OBJECTS=$APF_OBJECTS NOISY=$APF_NOISY SECONDS=$APF_SECONDS \
    go test -count=1 -timeout 30m -run '^TestAPFLoad$' -v ./test/apfload/ 2>&1 | tee "$OUT/apf.log" | grep -E '^(apf-load|  |    apfload|--- |ok|FAIL)'; then :; else status=1; fi
fi
echo; echo "results, logs and profiles: $OUT"
exit $status
