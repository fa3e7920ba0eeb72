#!/usr/bin/env bash
# make conformance: Kubernetes' own end-to-end tests against apiloom.
#
# Builds (once, then cached) the test binary of test/conformance: upstream's
# test/e2e packages at the k8s.io/kubernetes version its go.mod names, as one
# Ginkgo suite (test/conformance/suite). Starts bin/apiloom on an embedded
# etcd in a temporary directory and runs every test listed in
# test/conformance/tests.txt against it twice: with the e2e framework's
# clientset speaking JSON, then protobuf. Prints each run's tests that did
# not pass and its "N passed, M failed", then the total; exits non-zero when
# any listed test failed, was skipped or did not run.
#
# Env:
#   CONFORMANCE_PORT   the server's port (default 18470)
#   CONFORMANCE_FOCUS  an extended regexp: run only the listed tests matching it
#   CONFORMANCE_TYPES  the content types to run with (default: JSON, then protobuf)
#   CONFORMANCE_OUT    where each run's report, log and summary go (default: a temporary directory)
#   APILOOM_TOOLS_CACHE  where the test binary is kept (default ~/.cache/apiloom-tools)
#
# The first build takes 10 to 30 minutes on two cores with a cold Go build
# cache; a cached binary is reused while go.mod, go.sum and the suite are
# unchanged.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
GO=${GO:-go}
port=${CONFORMANCE_PORT:-18470}
types=${CONFORMANCE_TYPES:-application/json application/vnd.kubernetes.protobuf}
cache=${APILOOM_TOOLS_CACHE:-$HOME/.cache/apiloom-tools}/conformance
mod=$root/test/conformance
mkdir -p "$cache"

# The test binary, rebuilt when what it is built from changes.
bin=$cache/e2e.test
sum=$(cat "$mod/go.mod" "$mod/go.sum" "$mod"/suite/*.go | sha256sum | cut -d' ' -f1)
exec 9>"$cache/build.lock"
flock 9
if [[ ! -x $bin || ! -f $bin.sum || $(cat "$bin.sum") != "$sum" ]]; then
  echo "== building the e2e test binary (10 to 30 minutes on a cold Go build cache)"
  start=$SECONDS
  (cd "$mod" && "$GO" test -c -o "$bin.tmp" ./suite)
  mv -f "$bin.tmp" "$bin"
  echo "$sum" >"$bin.sum"
  echo "built $bin in $((SECONDS - start)) s"
fi
flock -u 9
(cd "$mod" && "$GO" build -o "$cache/summarize" ./summarize)
"$GO" build -o bin/apiloom ./cmd/apiloom

out=${CONFORMANCE_OUT:-$(mktemp -d)}
mkdir -p "$out"
data=$(mktemp -d)
server_pid=
cleanup() {
  if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$data"
}
trap cleanup EXIT

echo "== starting apiloom on 127.0.0.1:$port (log: $out/apiloom.log)"
bin/apiloom --data-dir "$data" --secure-port "$port" >"$out/apiloom.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 600); do
  if [[ -f $data/kubeconfig ]] && curl -skf "https://127.0.0.1:$port/readyz" >/dev/null 2>&1; then break; fi
  kill -0 "$server_pid" 2>/dev/null || { tail -20 "$out/apiloom.log"; echo "apiloom exited" >&2; exit 1; }
  sleep 0.1
done
curl -skf "https://127.0.0.1:$port/readyz" >/dev/null || { echo "apiloom not ready after 60 s" >&2; exit 1; }

# The list without reasons, and one focus expression matching exactly its
# names: Ginkgo matches the focus against the suite's description, a
# space and each test's full name.
names=$out/names.txt
sed -e 's/[[:space:]]*##.*$//' -e '/^[[:space:]]*#/d' -e '/^[[:space:]]*$/d' test/conformance/tests.txt >"$names"
if [[ -n ${CONFORMANCE_FOCUS:-} ]]; then
  grep -E -- "$CONFORMANCE_FOCUS" "$names" >"$names.focus" || true
  mv "$names.focus" "$names"
fi
[[ -s $names ]] || { echo "no test selected" >&2; exit 2; }
focus=$(awk '{ printf "%s(^| )\\Q%s\\E$", (NR > 1 ? "|" : ""), $0 }' "$names")

total_passed=0 total_failed=0 status=0
for type in $types; do
  run=$out/${type##*/}
  mkdir -p "$run"
  echo "== $(wc -l <"$names") tests, the framework's client speaking $type (log: $run/e2e.log)"
  # The framework's flags for a server without nodes or pods: no waiting
  # for schedulable nodes or system pods, and no dump of them on failure.
  # It does wait for each namespace's default ServiceAccount, which the
  # server's serviceaccount controller creates.
  set +e
  "$bin" \
    --kubeconfig="$data/kubeconfig" \
    --provider=skeleton \
    --allowed-not-ready-nodes=-1 \
    --num-nodes=0 \
    --minStartupPods=-1 \
    --dump-logs-on-failure=false \
    --disable-log-dump=true \
    --kube-api-content-type="$type" \
    --report-dir="$run" \
    --e2e-output-dir="$run" \
    --ginkgo.focus="$focus" \
    --ginkgo.json-report="$run/report.json" \
    --ginkgo.timeout=30m \
    --ginkgo.no-color \
    --ginkgo.v >"$run/e2e.log" 2>&1
  "$cache/summarize" "$names" "$run/report.json" "$run" | sed 's/^/  /'
  rc=${PIPESTATUS[0]}
  set -e
  ((rc == 0)) || status=1
  read -r p _ f _ < <(tail -1 "$run/summary.txt")
  total_passed=$((total_passed + p)) total_failed=$((total_failed + f))
  [[ -s $run/failures.txt ]] && echo "  why: $run/failures.txt"
done
echo "conformance: $total_passed passed, $total_failed failed"
exit "$status"
