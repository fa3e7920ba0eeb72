// Command apiloom-load measures how a Kubernetes-style API server copes
// with many watchers: it runs bounded scenarios against a server on this
// machine (loopback only) named by a kubeconfig, for any namespaced
// resource, so the same figures come from apiloom and from kube-apiserver.
//
//	apiloom-load --kubeconfig DIR/kubeconfig --pid PID fanout idle list baseline
//	apiloom-load --kubeconfig DIR/kubeconfig --floor-etcd unix://DIR/etcd/etcd.sock list floor
//	apiloom-load compare a.json b.json
//	apiloom-load charts --out DIR apiloom=a.json kube-apiserver=b.json
//
// Scenarios:
//
//   - fanout: N watchers from the current resourceVersion, then one writer
//     updating ~1 KiB objects at R writes/s for D seconds. Reports the
//     write rate achieved, events delivered, write→last-watcher latency,
//     server CPU per delivered event, and any missing, duplicate or
//     out-of-order event (a correct server has none). One round per
//     --fanout-watchers count and --fanout-transports transport: h2
//     (--streams-per-conn watches a connection) or http1 (a TLS
//     connection per watcher, client-go with HTTP/2 disabled).
//   - idle: N watchers that receive nothing; server RSS per watcher, and
//     whether all N are still open afterwards.
//   - list: K objects of ~1 KiB created and then patched by C concurrent
//     clients (rate and server CPU of each), then LIST with
//     resourceVersion=0, a consistent LIST, and a paged traversal (limit
//     500, every continue token), median time and server CPU of each;
//     then --get-requests GETs of single objects by name (drawn at random,
//     seeded), one at a time, with resourceVersion unset and then =0: p50,
//     p99 and server CPU per GET of each kind.
//   - informer: for each --informer-objects count (the list scenario's
//     objects, created when missing), a new informer over the namespace,
//     timed from start to HasSynced, --informer-repeats times (median) with
//     watch-list off (LIST, then watch) and on (client-go's WatchListClient
//     gate), for each --informer-formats format: json and cbor (the
//     ClientsAllowCBOR and ClientsPreferCBOR gates on) with client-go's
//     dynamic informer, protobuf with the generated clientset's informer
//     (the kinds of apis/ only; another resource is asked once whether it
//     is served in protobuf). Server CPU per sync and peak RSS. A round is
//     recorded as failed unless the requests client-go made and the media
//     types of the answers show it measured what it is named after; one
//     answered in another format is "not served".
//   - stalled: N watchers from resourceVersion=0, over HTTP/1.1 (a TLS
//     connection each) or HTTP/2, that never read while objects change;
//     server RSS and heap, and how many the server ended.
//   - rapidreset: one HTTP/2 connection opens streams and resets them at
//     once (CVE-2023-44487) while a healthy client times small LISTs on
//     its own connection; whether and when the server sent GOAWAY and
//     closed the attacker, and the healthy p50/p99 before and during.
//   - floor: raw etcd puts into the target's own etcd (--floor-etcd: the
//     embedded etcd's unix socket, or the peer's client URL), as many as
//     the list scenario creates and from as many workers, each value the
//     size of a list-scenario object; puts/s, p50/p99 and server CPU, so
//     that create throughput reads as a fraction of what its storage
//     can do. The keys live under /apiloom-load-floor/, which no server
//     watches, and one range delete removes them afterwards.
//   - admission: what dynamic admission costs a create. Rounds of
//     --admission-creates creates of new objects by --admission-creators
//     concurrent clients, each with another configuration in effect:
//     none, policy-1 and policies-N (ValidatingAdmissionPolicies with a
//     Deny binding and one expression every object passes), webhook-1 (a
//     validating webhook that allows, served by the load generator itself
//     on 127.0.0.1 over TLS with a certificate it makes, registered with
//     it as caBundle). A round starts once a dry-run create of a probe
//     object, which each policy and the webhook deny, shows the
//     configuration acting; one that never does (a server without dynamic
//     admission) is recorded as failed. Creates/s and server CPU per create
//     of each round, with ratios to the first; the policies, webhook and
//     objects are removed afterwards.
//   - scale: the list scenario's objects grown to each --scale-objects
//     count in turn (each step creates only the difference, with
//     --list-creators clients) and measured there: creates/s of the step,
//     RSS of the --pid processes (each and summed) and heap in use
//     (go_memstats_heap_inuse_bytes) once the creates are done, the size
//     of --scale-etcd-db, the three LISTs and the GETs of the list
//     scenario, informer syncs (--scale-informer-formats, watch-list off
//     and on), the fan-out rounds, and a restart: the --scale-stop
//     command, then the --scale-start command (whose last line of output
//     is the new --pid PIDs), timed from the start until /readyz is 200
//     and until a LIST with resourceVersion=0 returns every object, with
//     RSS and heap once it does. The script that owns the server's
//     processes (hack/load.sh) supplies both commands.
//   - baseline: what the machine itself charges for the work a server must
//     do per event: a 1 KiB loopback write (plain and TLS) and encoding a
//     1 KiB object, so CPU per event can be read as a ratio.
//
// charts writes PNG charts (gonum.org/v1/plot) of result files: write
// throughput (with the floor's puts/s), LIST times, fan-out latency
// (against watchers when a label's rounds, in one file or several, have
// several watcher counts) and informer sync (against objects when several
// counts were synced), and the scale scenario's figures against object
// count, a line per target; only those whose data exists.
//
// Watches are raw HTTP/2 streams over client-go's transport (its TLS, auth
// and HTTP/2 set-up), spread over ceil(N/streams-per-conn) connections
// because servers cap concurrent streams per connection (apiloom and
// kube-apiserver at 100 by default); the http1 fan-out rounds use the same
// transport with HTTP/2 off. Writes go through client-go's dynamic client.
// Server CPU and memory come from /proc/PID for the --pid processes, and
// for the --pid-tree ones with all their descendants (a database's
// backends), each reported apart as well as summed.
package main
