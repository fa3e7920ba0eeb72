#!/usr/bin/env bash
# Interoperability of a real apiloom server with HTTP clients other than the
# ones the end-to-end suite uses (client-go, x/net's http2.Transport): curl
# over HTTP/2 and HTTP/1.1, nghttp2's nghttp and h2load, and Go's standard
# net/http client over HTTP/2 and HTTP/1.1 (hack/interop-client). Each runs a
# POST (create, and a duplicate: 409 AlreadyExists), a GET (and a missing
# one: 404 NotFound), a LIST, and a WATCH from resourceVersion 0 that must
# deliver the initial ADDED, then the ADDED of an object created while it is
# open, and be ended by the server at its timeoutSeconds. h2load runs many
# LISTs, and many watches, as concurrent streams of few connections.
#
#   hack/interop.sh                      # against --http2-server=apiloom, then =go
#   SERVERS=apiloom hack/interop.sh
#   INSTALL=1 hack/interop.sh            # apt-get install curl and nghttp2-client first
#
# Sizes (environment): H2LOAD_REQUESTS (LISTs, default 20000) and
# H2LOAD_WATCHES (default 400), over H2LOAD_CLIENTS connections (default 2),
# H2LOAD_STREAMS concurrent LIST streams each (default 100; the watches all
# run at once). Prints one PASS or FAIL line per check and h2load's figures;
# logs go to OUT (default: a new temporary directory). Exits 1 if a check
# failed.
set -euo pipefail
cd "$(dirname "$0")/.."

: "${SERVERS:=apiloom go}" "${H2LOAD_REQUESTS:=20000}" "${H2LOAD_WATCHES:=400}"
: "${H2LOAD_CLIENTS:=2}" "${H2LOAD_STREAMS:=100}"
# A temporary OUT is removed on exit (each run leaves ~250 MiB of etcd data);
# an OUT the caller names is kept.
keep_out=1
[[ -n ${OUT:-} ]] || { OUT=$(mktemp -d /tmp/apiloom-interop.XXXXXX); keep_out=0; }
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)

missing=()
for tool in curl nghttp h2load stdbuf; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if ((${#missing[@]} > 0)); then
  if [[ ${INSTALL:-0} == 1 ]]; then
    apt-get update -qq && apt-get install -y -qq curl nghttp2-client >/dev/null
  else
    echo "interop: missing ${missing[*]}; install curl and nghttp2-client (Debian), or run with INSTALL=1" >&2
    exit 2
  fi
fi
echo "curl: $(curl --version | head -1)"
echo "nghttp2: $(nghttp --version)"

echo "building apiloom and interop-client"
go build -o "$OUT/bin/apiloom" ./cmd/apiloom
go build -o "$OUT/bin/interop-client" ./hack/interop-client

failed=0
check() { # WHAT OK(0|1) [DETAIL]
  if [[ $2 == 0 ]]; then echo "PASS $1"; else echo "FAIL $1${3:+: $3}"; failed=$((failed + 1)); fi
}
# holds COMMAND...: 0 if it succeeds, else 1; for check, under set -e.
holds() { if "$@"; then echo 0; else echo 1; fi; }

pid=
stop_server() {
  [[ -n $pid ]] || return 0
  kill -INT "$pid" 2>/dev/null || true
  local code=0
  wait "$pid" || code=$?
  pid=
  return $code
}
cleanup() {
  local code=0
  stop_server || code=$?
  [[ $keep_out == 1 ]] || rm -rf "$OUT"
  return $code
}
trap cleanup EXIT

# start_server IMPL: sets server, ca, token (a file) and pid.
start_server() {
  local dir=$OUT/$1
  rm -rf "$dir"; mkdir -p "$dir"
  "$OUT/bin/apiloom" --data-dir "$dir" --secure-port 0 --http2-server "$1" >"$dir/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 300); do
    [[ -s $dir/kubeconfig ]] && break
    kill -0 "$pid" 2>/dev/null || { echo "apiloom exited:"; tail -20 "$dir/server.log"; return 1; }
    sleep 0.1
  done
  server=$(awk '$1 == "server:" {print $2}' "$dir/kubeconfig")
  ca=$dir/pki/ca.crt token=$dir/admin-token
  [[ -n $server ]] || { echo "apiloom: no kubeconfig after 30s"; return 1; }
  for _ in $(seq 300); do
    [[ $(curl -s --cacert "$ca" "$server/readyz" || true) == ok ]] && return 0
    sleep 0.1
  done
  echo "apiloom: not ready after 30s"; return 1
}

collection=/apis/example.apiloom.dev/v1/namespaces/interop/databases
database() { # NAME: a Database as JSON, in a file whose path is printed
  local f=$OUT/$1.json
  printf '{"apiVersion":"example.apiloom.dev/v1","kind":"Database","metadata":{"name":"%s"},"spec":{"engine":"postgres","version":"16.4","replicas":3,"storageGiB":100,"region":"eu-central"}}' "$1" >"$f"
  echo "$f"
}

# wait_for FILE PATTERN: until FILE holds PATTERN, at most 10 s.
wait_for() {
  for _ in $(seq 100); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}

# curl_req METHOD PATH [BODY FILE]: "version code" of curl $flag; the
# body in $log.body (curl_checks' flag and log).
curl_req() {
  local extra=()
  if [[ -n ${3:-} ]]; then extra=(-H 'Content-Type: application/json' --data-binary "@$3"); fi
  curl -sS "$flag" --cacert "$ca" -H "Authorization: Bearer $(cat "$token")" -o "$log.body" -w '%{http_version} %{http_code}' \
    -X "$1" "${extra[@]}" "$server$2" 2>>"$log.err" || true
}

# curl_expect WHAT CODE PATTERN METHOD PATH [BODY FILE]
curl_expect() {
  local what=$1 code=$2 pattern=$3 got; shift 3
  got=$(curl_req "$@")
  check "$label $what" "$(holds eval '[[ $got == "$version $code" ]] && grep -q "$pattern" "$log.body"')" \
    "got $got $(head -c 200 "$log.body" 2>/dev/null)"
}

# curl_checks LABEL FLAG VERSION: the checks over curl FLAG (--http2 or
# --http1.1), whose answers must come as HTTP VERSION.
curl_checks() {
  local label=$1 flag=$2 version=$3 name=$1 log=$OUT/$impl/$1
  curl_expect "POST create" 201 "\"name\":\"$name\"" POST "$collection" "$(database "$name")"
  curl_expect "POST duplicate 409 AlreadyExists" 409 '"reason":"AlreadyExists"' POST "$collection" "$(database "$name")"
  curl_expect "GET" 200 "\"name\":\"$name\"" GET "$collection/$name"
  curl_expect "GET missing 404 NotFound" 404 '"reason":"NotFound"' GET "$collection/no-such-$name"
  curl_expect "LIST" 200 '"kind":"DatabaseList"' GET "$collection"

  # The watch: its initial ADDED, then one for an object created while
  # it is open; the server ends it at timeoutSeconds (curl's --max-time,
  # exit 28, would mean it did not).
  local watch_code=0 ok=0
  curl -sS -N "$flag" --max-time 20 --cacert "$ca" -H "Authorization: Bearer $(cat "$token")" -o "$log.watch" \
    -w '%{http_version} %{http_code}' "$server$collection?watch=true&resourceVersion=0&timeoutSeconds=3" >"$log.watch.status" 2>>"$log.err" &
  local watcher=$!
  wait_for "$log.watch" "\"type\":\"ADDED\".*\"name\":\"$name\"" || ok=1
  [[ $(curl_req POST "$collection" "$(database "$name-live")") == "$version 201" ]] || ok=1
  wait "$watcher" || watch_code=$?
  [[ $watch_code == 0 && $(cat "$log.watch.status") == "$version 200" ]] || ok=1
  grep -q "\"type\":\"ADDED\".*\"name\":\"$name-live\"" "$log.watch" || ok=1
  check "$label WATCH initial ADDED, a live ADDED, end at timeoutSeconds" $ok "curl exit $watch_code, $(cat "$log.watch.status"), $(wc -l <"$log.watch") events"
}

# nghttp_req PATH [BODY FILE]: the status nghttp got (a POST with a body);
# its verbose log in $log.out (nghttp_checks' log).
nghttp_req() {
  local extra=()
  if [[ -n ${2:-} ]]; then extra=(-d "$2" -H 'content-type: application/json'); fi
  nghttp -v -H "authorization: Bearer $(cat "$token")" "${extra[@]}" "$server$1" >"$log.out" 2>>"$log.err" || echo "exit $?" >>"$log.out"
  grep -o ':status: [0-9]*' "$log.out" | head -1 | cut -d' ' -f2 || true
}

# nghttp_expect WHAT CODE PATTERN PATH [BODY FILE]
nghttp_expect() {
  local what=$1 code=$2 pattern=$3 got; shift 3
  got=$(nghttp_req "$@")
  check "$label $what" "$(holds eval '[[ $got == "$code" ]] && grep -q "$pattern" "$log.out" && ! grep -q "^exit " "$log.out"')" "status $got"
}

# nghttp_checks: the same checks with nghttp, which speaks only HTTP/2 and
# does not verify the certificate (it warns).
nghttp_checks() {
  local label=nghttp name=nghttp log=$OUT/$impl/nghttp
  nghttp_expect "POST create" 201 "\"name\":\"$name\"" "$collection" "$(database "$name")"
  nghttp_expect "POST duplicate 409 AlreadyExists" 409 '"reason":"AlreadyExists"' "$collection" "$(database "$name")"
  nghttp_expect "GET" 200 "\"name\":\"$name\"" "$collection/$name"
  nghttp_expect "GET missing 404 NotFound" 404 '"reason":"NotFound"' "$collection/no-such-$name"
  nghttp_expect "LIST" 200 '"kind":"DatabaseList"' "$collection"

  local watch_code=0 ok=0
  # stdbuf: nghttp's output is buffered when it is not a terminal.
  timeout 20 stdbuf -o0 nghttp -H "authorization: Bearer $(cat "$token")" \
    "$server$collection?watch=true&resourceVersion=0&timeoutSeconds=3" >"$log.watch" 2>>"$log.err" &
  local watcher=$!
  wait_for "$log.watch" "\"type\":\"ADDED\".*\"name\":\"$name\"" || ok=1
  [[ $(nghttp_req "$collection" "$(database "$name-live")") == 201 ]] || ok=1
  wait "$watcher" || watch_code=$?
  [[ $watch_code == 0 ]] || ok=1
  grep -q "\"type\":\"ADDED\".*\"name\":\"$name-live\"" "$log.watch" || ok=1
  check "$label WATCH initial ADDED, a live ADDED, end at timeoutSeconds" $ok "exit $watch_code (124: not ended by the server), $(wc -l <"$log.watch") events"
}

# h2load_run LABEL WANT PATH H2LOAD-ARGS...: h2load must see every one of
# WANT requests succeed with a 2xx, over h2.
h2load_run() {
  local label=$1 want=$2 path=$3 log=$OUT/$impl/h2load-$1.out; shift 3
  h2load "$@" -H "authorization: Bearer $(cat "$token")" "$server$path" >"$log" 2>&1 || true
  check "h2load $label" "$(holds eval 'grep -q "^Application protocol: h2$" "$log" &&
    grep -q "^requests: $want total, $want started, $want done, $want succeeded, 0 failed, 0 errored, 0 timeout" "$log" &&
    grep -q "^status codes: $want 2xx, 0 3xx, 0 4xx, 0 5xx" "$log"')" "$(grep -E '^(requests|status codes):' "$log" | tr '\n' ' ')"
  grep -E '^(finished in|time for request:)' "$log" | sed "s/^/     h2load $label: /"
}

for impl in $SERVERS; do
  echo; echo "=== apiloom --http2-server=$impl"
  if ! start_server "$impl"; then
    check "$impl: server start" 1; continue
  fi
  # Writes are admitted by their namespace, which must exist.
  got=$(curl -sS --cacert "$ca" -H "Authorization: Bearer $(cat "$token")" -H 'Content-Type: application/json' -o /dev/null -w '%{http_code}' \
    --data-binary '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"interop"}}' "$server/api/v1/namespaces" || true)
  check "$impl: create namespace interop" "$(holds eval '[[ $got == 201 ]]')" "got $got"
  curl_checks curl-h2 --http2 2
  curl_checks curl-h1 --http1.1 1.1
  nghttp_checks
  for proto in h2 http/1.1; do
    name=go-${proto//\//}
    out=$("$OUT/bin/interop-client" -server "$server" -ca "$ca" -token "$token" -proto "$proto" -name "$name" 2>&1) && code=0 || code=$?
    echo "$out"
    failed=$((failed + $(grep -c '^FAIL' <<<"$out" || true)))
    [[ $code == 0 ]] || { grep -q '^FAIL' <<<"$out" || check "$name client" 1 "exit $code"; }
  done
  h2load_run "LIST ($H2LOAD_REQUESTS over $H2LOAD_CLIENTS connections, $H2LOAD_STREAMS streams each)" "$H2LOAD_REQUESTS" "$collection" \
    -n "$H2LOAD_REQUESTS" -c "$H2LOAD_CLIENTS" -m "$H2LOAD_STREAMS"
  h2load_run "WATCH ($H2LOAD_WATCHES of 2 s at once over $H2LOAD_CLIENTS connections)" "$H2LOAD_WATCHES" \
    "$collection?watch=true&resourceVersion=0&timeoutSeconds=2" \
    -n "$H2LOAD_WATCHES" -c "$H2LOAD_CLIENTS" -m $(((H2LOAD_WATCHES + H2LOAD_CLIENTS - 1) / H2LOAD_CLIENTS))
  if stop_server; then shutdown=0; else shutdown=1; fi # not in a subshell: wait needs the server's parent
  check "$impl: graceful shutdown (exit 0)" $shutdown "see $OUT/$impl/server.log"
done

echo; echo "logs: $OUT"
if ((failed > 0)); then echo "interop: $failed checks failed"; exit 1; fi
echo "interop: every check passed"
