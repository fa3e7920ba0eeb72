package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiloom/apiloom/cmd/apiloom-load/internal/procfs"
)

// config is everything a run needs; flags fill it and validate checks it
// once, before anything connects.
type config struct {
	Kubeconfig string
	PIDs       []int
	// PIDTrees are processes measured with all their descendants (a
	// database that forks a backend per connection); PIDNames name the
	// --pid then the --pid-tree processes in the results.
	PIDTrees []int
	PIDNames []string
	Label    string
	Out      string
	Timeout  time.Duration

	// The resource under load; namespaced.
	Group, Version, Resource, Kind, Namespace string
	// PayloadField is the dotted path of a string field that carries the
	// ~1 KiB payload, and that updates change: by default an annotation,
	// since the example's Database has no free-form spec field that may
	// change (its spec.region is immutable, a hook says); BaseSpec is a JSON object the spec starts from
	// (required fields of the kind).
	PayloadField string
	PayloadBytes int
	BaseSpec     string

	StreamsPerConn  int
	OpenConcurrency int

	// FanoutWatchers are the watcher counts of the fan-out rounds, each
	// run over every FanoutTransports transport (h2, http1).
	FanoutWatchers   []int
	FanoutTransports []string
	FanoutRate       float64
	FanoutDuration   time.Duration
	FanoutObjects    int
	Drain            time.Duration

	IdleWatchers int
	IdleHold     time.Duration

	ListObjects     int
	ListRepeats     int
	ListCreators    int
	ListPageSize    int
	ListCompression bool
	// GetRequests is how many GETs of single objects the list scenario
	// times of each kind (0: none).
	GetRequests int

	// InformerObjects are the object counts the informer scenario syncs
	// (ascending, each made up from the list scenario's objects);
	// InformerFormats the client formats (json, cbor, protobuf).
	InformerObjects []int
	InformerRepeats int
	InformerFormats []string

	BaselineTime time.Duration

	// AdmissionRounds name the admission scenario's rounds (none,
	// policy-1, policies-N, webhook-1), each AdmissionCreates creates by
	// AdmissionCreators concurrent clients.
	AdmissionRounds   []string
	AdmissionCreates  int
	AdmissionCreators int

	// FloorEtcd is the target's etcd (unix:// socket or loopback http://
	// URL) the floor scenario puts into; FloorPuts how many (0: as many as
	// ListObjects).
	FloorEtcd string
	FloorPuts int

	// ScaleObjects are the object counts the scale scenario grows the
	// namespace to, in ascending order; ScaleInformerFormats its informer
	// formats. ScaleStop and ScaleStart are shell commands (run by bash)
	// that stop the server and start it again on the same data: the start
	// prints the new --pid PIDs, in order, on its last line (empty: no
	// restart measured). ScaleEtcdDB is the file whose size is the
	// storage figure (etcd's member/snap/db; empty: none).
	ScaleObjects         []int
	ScaleInformerFormats []string
	ScaleStop            string
	ScaleStart           string
	ScaleEtcdDB          string

	StalledWatchers  int
	StalledObjects   int
	StalledTransport string
	StalledHold      time.Duration
	StalledWriteRate float64

	RapidResetDuration time.Duration
	RapidResetWarmup   time.Duration

	// Profile names a pprof CPU profile endpoint to sample during the
	// fanout writes ("server" for the target's /debug/pprof/profile);
	// ProfileOut is where the profile goes.
	Profile    string
	ProfileOut string
	// SelfProfile is where the load generator writes a CPU profile of
	// itself: on a shared 2-core machine its own cost shapes the tails.
	SelfProfile string
}

func defaultConfig() config {
	return config{
		Label:   "apiloom",
		Timeout: 15 * time.Minute,
		Group:   "example.apiloom.dev", Version: "v1", Resource: "databases", Kind: "Database", Namespace: "bench",
		PayloadField: "metadata.annotations.load-payload", PayloadBytes: 900, BaseSpec: `{"engine":"postgres"}`,
		StreamsPerConn: 100, OpenConcurrency: 100,
		FanoutWatchers: []int{1000}, FanoutTransports: []string{transportH2}, FanoutRate: 20, FanoutDuration: 20 * time.Second, FanoutObjects: 16, Drain: 30 * time.Second,
		IdleWatchers: 10000, IdleHold: 10 * time.Second,
		ListObjects: 10000, ListRepeats: 5, ListCreators: 8, ListPageSize: 500, ListCompression: true, GetRequests: 1000,
		InformerObjects: []int{10000}, InformerRepeats: 3, InformerFormats: []string{formatJSON},
		BaselineTime:    500 * time.Millisecond,
		AdmissionRounds: []string{"none", "policy-1", "policies-10", "webhook-1"}, AdmissionCreates: 3000, AdmissionCreators: 8,
		ScaleObjects: []int{10000, 100000, 1000000}, ScaleInformerFormats: []string{formatJSON, formatProtobuf},
		StalledWatchers: 2000, StalledObjects: 10000, StalledTransport: "http1", StalledHold: 60 * time.Second, StalledWriteRate: 50,
		RapidResetDuration: 20 * time.Second, RapidResetWarmup: 5 * time.Second,
		ProfileOut: "fanout.cpu.pprof",
	}
}

func (c *config) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Kubeconfig, "kubeconfig", c.Kubeconfig, "kubeconfig of the server under load (its server must be a loopback address)")
	fs.IntSliceVar(&c.PIDs, "pid", c.PIDs, "server process(es) to read CPU and RSS from /proc; repeat for a server with a separate etcd (figures are summed)")
	fs.IntSliceVar(&c.PIDTrees, "pid-tree", c.PIDTrees, "like --pid, but the process together with all its descendants (e.g. a PostgreSQL postmaster and its backends)")
	fs.StringSliceVar(&c.PIDNames, "pid-names", c.PIDNames, "names of the --pid then the --pid-tree processes, for the per-process CPU figures")
	fs.StringVar(&c.Label, "label", c.Label, "name of this target in the results")
	fs.StringVar(&c.Out, "out", c.Out, "write the results as JSON to this file")
	fs.DurationVar(&c.Timeout, "timeout", c.Timeout, "bound on the whole run")
	fs.StringVar(&c.Group, "group", c.Group, "API group of the resource")
	fs.StringVar(&c.Version, "version", c.Version, "API version of the resource")
	fs.StringVar(&c.Resource, "resource", c.Resource, "plural resource name")
	fs.StringVar(&c.Kind, "kind", c.Kind, "kind of the resource")
	fs.StringVar(&c.Namespace, "namespace", c.Namespace, "namespace to work in (created when missing)")
	fs.StringVar(&c.PayloadField, "payload-field", c.PayloadField, "dotted path of a string field to carry the payload")
	fs.IntVar(&c.PayloadBytes, "payload-bytes", c.PayloadBytes, "payload size in bytes (the object is ~this plus ~200 bytes of metadata)")
	fs.StringVar(&c.BaseSpec, "spec", c.BaseSpec, "JSON object the spec of every object starts from")
	fs.IntVar(&c.StreamsPerConn, "streams-per-conn", c.StreamsPerConn, "watch streams per HTTP/2 connection")
	fs.IntVar(&c.OpenConcurrency, "open-concurrency", c.OpenConcurrency, "watch requests in flight while opening watchers")
	fs.IntSliceVar(&c.FanoutWatchers, "fanout-watchers", c.FanoutWatchers, "fanout: watchers; several counts (e.g. 100,1000,10000) are one round each")
	fs.StringSliceVar(&c.FanoutTransports, "fanout-transports", c.FanoutTransports, `fanout: "h2" (--streams-per-conn streams a connection) and/or "http1" (a TLS connection per watcher, as client-go with HTTP/2 disabled); each a round per watcher count`)
	fs.Float64Var(&c.FanoutRate, "fanout-rate", c.FanoutRate, "fanout: updates per second")
	fs.DurationVar(&c.FanoutDuration, "fanout-duration", c.FanoutDuration, "fanout: how long to write")
	fs.IntVar(&c.FanoutObjects, "fanout-objects", c.FanoutObjects, "fanout: objects the updates rotate over")
	fs.DurationVar(&c.Drain, "drain", c.Drain, "fanout: how long to wait after the last write for every watcher to catch up")
	fs.IntVar(&c.IdleWatchers, "idle-watchers", c.IdleWatchers, "idle: watchers")
	fs.DurationVar(&c.IdleHold, "idle-hold", c.IdleHold, "idle: how long to hold the watchers open before checking them")
	fs.IntVar(&c.ListObjects, "list-objects", c.ListObjects, "list: objects to create")
	fs.IntVar(&c.ListRepeats, "list-repeats", c.ListRepeats, "list: LISTs of each kind")
	fs.IntVar(&c.ListCreators, "list-creators", c.ListCreators, "list: concurrent creates (and patches): the create-throughput figure's workers")
	fs.IntVar(&c.ListPageSize, "list-page-size", c.ListPageSize, "list: limit of each page of the paged LIST (client-go's pager and kubectl use 500)")
	fs.BoolVar(&c.ListCompression, "list-compression", c.ListCompression, "list: accept gzip, as client-go does by default")
	fs.IntVar(&c.GetRequests, "get-requests", c.GetRequests, "list: GETs by name of objects chosen at random (seeded), one at a time, with resourceVersion unset and then =0, after the LISTs (0: none)")
	fs.IntSliceVar(&c.InformerObjects, "informer-objects", c.InformerObjects, "informer: objects the namespace holds while informers sync, one round set per count (the list scenario's objects, created when missing)")
	fs.IntVar(&c.InformerRepeats, "informer-repeats", c.InformerRepeats, "informer: syncs of each format and mode (the median is reported)")
	fs.StringSliceVar(&c.InformerFormats, "informer-formats", c.InformerFormats, `informer: client formats among "json", "cbor" (client-go's ClientsAllowCBOR and ClientsPreferCBOR gates on) and "protobuf" (the generated clientset's informer, protobuf content types, on the kinds of apis/)`)
	fs.StringVar(&c.FloorEtcd, "floor-etcd", c.FloorEtcd, "floor: the target's etcd, unix:///path/to/socket or a loopback http://127.0.0.1:PORT")
	fs.IntVar(&c.FloorPuts, "floor-puts", c.FloorPuts, "floor: puts to make (0: --list-objects)")
	fs.DurationVar(&c.BaselineTime, "baseline-time", c.BaselineTime, "baseline: time spent on each measurement")
	fs.StringSliceVar(&c.AdmissionRounds, "admission-rounds", c.AdmissionRounds, `admission: rounds in order, each "none", "policy-1", "policies-N" (N ValidatingAdmissionPolicies of one passing expression) or "webhook-1" (a validating webhook the load generator serves on 127.0.0.1)`)
	fs.IntVar(&c.AdmissionCreates, "admission-creates", c.AdmissionCreates, "admission: creates of new objects in each round")
	fs.IntVar(&c.AdmissionCreators, "admission-creators", c.AdmissionCreators, "admission: concurrent creates")
	fs.IntSliceVar(&c.ScaleObjects, "scale-objects", c.ScaleObjects, "scale: object counts to grow the namespace to, ascending; each step creates the difference (--list-creators at once) and measures at that count")
	fs.StringSliceVar(&c.ScaleInformerFormats, "scale-informer-formats", c.ScaleInformerFormats, "scale: informer formats synced at each count (as --informer-formats)")
	fs.StringVar(&c.ScaleStop, "scale-stop", c.ScaleStop, "scale: bash command that stops the server (returning once it has exited), for the restart-to-ready figure")
	fs.StringVar(&c.ScaleStart, "scale-start", c.ScaleStart, "scale: bash command that starts the server again on the same data and kubeconfig path, returning once it is started, with the new --pid PIDs (in order) on its last line of output")
	fs.StringVar(&c.ScaleEtcdDB, "scale-etcd-db", c.ScaleEtcdDB, "scale: the storage file whose size is reported at each count (etcd's member/snap/db)")
	fs.IntVar(&c.StalledWatchers, "stalled-watchers", c.StalledWatchers, "stalled: watchers from resourceVersion=0 that never read")
	fs.IntVar(&c.StalledObjects, "stalled-objects", c.StalledObjects, "stalled: objects to create (skipping those that exist)")
	fs.StringVar(&c.StalledTransport, "stalled-transport", c.StalledTransport, "stalled: http1 (a TLS connection each) or h2 (--streams-per-conn streams a connection)")
	fs.DurationVar(&c.StalledHold, "stalled-hold", c.StalledHold, "stalled: how long to hold the watchers unread")
	fs.Float64Var(&c.StalledWriteRate, "stalled-write-rate", c.StalledWriteRate, "stalled: object updates a second during the hold")
	fs.DurationVar(&c.RapidResetDuration, "rapid-reset-duration", c.RapidResetDuration, "rapidreset: how long one connection opens and resets streams")
	fs.DurationVar(&c.RapidResetWarmup, "rapid-reset-warmup", c.RapidResetWarmup, "rapidreset: how long healthy requests are timed before the attack")
	fs.StringVar(&c.Profile, "profile", c.Profile, `fanout: pprof CPU profile URL (loopback) to sample while writing, or "server" for the target's /debug/pprof/profile`)
	fs.StringVar(&c.ProfileOut, "profile-out", c.ProfileOut, "fanout: where to write the CPU profile (with several rounds, each round's watchers and transport go before the extension)")
	fs.StringVar(&c.SelfProfile, "self-cpuprofile", c.SelfProfile, "write a CPU profile of the load generator itself to this file")
}

// Limits that keep a run bounded whatever the flags say.
const (
	maxWatchers = 50000
	// maxIdleWatchers is higher: issue 18 asks one server to hold
	// 100,000 idle watchers.
	maxIdleWatchers = 100000
	maxWrites       = 100000
	maxObjects      = 100000
	// maxScaleObjects is higher: issue 39 asks for a million objects.
	maxScaleObjects = 2000000
)

var errConfig = errors.New("apiloom-load: invalid flags")

func (c *config) validate() error {
	var problems []string
	check := func(ok bool, format string, args ...any) {
		if !ok {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	check(c.Kubeconfig != "", "--kubeconfig is required")
	check(c.Version != "" && c.Resource != "" && c.Kind != "" && c.Namespace != "", "--version, --resource, --kind and --namespace must be set")
	check(strings.Count(c.PayloadField, ".") >= 1 && !strings.Contains(c.PayloadField, ".."), "--payload-field must be a dotted path such as spec.payload")
	check(c.PayloadBytes >= 16 && c.PayloadBytes <= 1<<20, "--payload-bytes must be in [16, 1Mi]")
	check(c.Timeout > 0 && c.Timeout <= 12*time.Hour, "--timeout must be in (0, 12h]")
	check(c.StreamsPerConn >= 1 && c.StreamsPerConn <= 10000, "--streams-per-conn must be in [1, 10000]")
	check(c.OpenConcurrency >= 1 && c.OpenConcurrency <= 1000, "--open-concurrency must be in [1, 1000]")
	check(len(c.FanoutWatchers) >= 1 && slices.IndexFunc(c.FanoutWatchers, func(n int) bool { return n < 1 || n > maxWatchers }) < 0,
		"--fanout-watchers must be counts in [1, %d]", maxWatchers)
	check(len(c.FanoutTransports) >= 1 && slices.IndexFunc(c.FanoutTransports, func(t string) bool { return t != transportH2 && t != transportHTTP1 }) < 0,
		"--fanout-transports must be h2 and/or http1")
	check(c.IdleWatchers >= 1 && c.IdleWatchers <= maxIdleWatchers, "--idle-watchers must be in [1, %d]", maxIdleWatchers)
	check(c.FanoutRate > 0 && c.FanoutDuration > 0, "--fanout-rate and --fanout-duration must be positive")
	check(c.fanoutWrites() >= 1 && c.fanoutWrites() <= maxWrites, "--fanout-rate × --fanout-duration must give 1..%d writes", maxWrites)
	check(c.FanoutObjects >= 1 && c.FanoutObjects <= 1000, "--fanout-objects must be in [1, 1000]")
	check(c.ListObjects >= 1 && c.ListObjects <= maxObjects, "--list-objects must be in [1, %d]", maxObjects)
	check(c.ListRepeats >= 1 && c.ListRepeats <= 100, "--list-repeats must be in [1, 100]")
	check(len(c.PIDNames) == 0 || len(c.PIDNames) == len(c.PIDs)+len(c.PIDTrees), "--pid-names must name every --pid and --pid-tree process")
	check(c.ListPageSize >= 1 && c.ListPageSize <= 100000, "--list-page-size must be in [1, 100000]")
	check(c.GetRequests >= 0 && c.GetRequests <= maxObjects, "--get-requests must be in [0, %d]", maxObjects)
	check(c.ListCreators >= 1 && c.ListCreators <= 64, "--list-creators must be in [1, 64]")
	check(len(c.InformerObjects) >= 1 && slices.IndexFunc(c.InformerObjects, func(n int) bool { return n < 1 || n > maxObjects }) < 0,
		"--informer-objects must be counts in [1, %d]", maxObjects)
	check(c.InformerRepeats >= 1 && c.InformerRepeats <= 100, "--informer-repeats must be in [1, 100]")
	check(len(c.InformerFormats) >= 1 && slices.IndexFunc(c.InformerFormats, func(f string) bool { return acceptedMedia[f] == nil }) < 0,
		"--informer-formats must be among json, cbor and protobuf")
	check(c.FloorPuts >= 0 && c.floorPuts() <= maxObjects, "--floor-puts must be in [0, %d]", maxObjects)
	check(c.BaselineTime > 0 && c.BaselineTime <= 10*time.Second, "--baseline-time must be in (0, 10s]")
	check(len(c.AdmissionRounds) >= 1 && slices.IndexFunc(c.AdmissionRounds, func(n string) bool { _, err := parseAdmissionRound(n); return err != nil }) < 0,
		`--admission-rounds must be among "none", "policy-1", "policies-N" (N ≤ %d) and "webhook-1"`, maxAdmissionPolicies)
	check(c.AdmissionCreates >= 1 && c.AdmissionCreates <= maxObjects, "--admission-creates must be in [1, %d]", maxObjects)
	check(c.AdmissionCreators >= 1 && c.AdmissionCreators <= 64, "--admission-creators must be in [1, 64]")
	check(len(c.ScaleObjects) >= 1 && slices.IsSorted(c.ScaleObjects) && c.ScaleObjects[0] >= 1 && c.ScaleObjects[len(c.ScaleObjects)-1] <= maxScaleObjects,
		"--scale-objects must be ascending counts in [1, %d]", maxScaleObjects)
	check(slices.IndexFunc(c.ScaleInformerFormats, func(f string) bool { return acceptedMedia[f] == nil }) < 0,
		"--scale-informer-formats must be among json, cbor and protobuf")
	check((c.ScaleStop == "") == (c.ScaleStart == ""), "--scale-stop and --scale-start go together")
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", errConfig, strings.Join(problems, "; "))
	}
	return nil
}

// processes is what the sampler measures: the --pid processes, then the
// --pid-tree ones.
func (c *config) processes() procfs.Group {
	var g procfs.Group
	for _, p := range c.PIDs {
		g = append(g, procfs.Member{PID: p})
	}
	for _, p := range c.PIDTrees {
		g = append(g, procfs.Member{PID: p, Tree: true})
	}
	return g
}

// fanoutWrites is the number of updates the fanout writer makes.
func (c *config) fanoutWrites() int {
	return int(c.FanoutRate * c.FanoutDuration.Seconds())
}
