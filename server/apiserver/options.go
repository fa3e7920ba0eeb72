package apiserver

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	genericoptions "k8s.io/apiserver/pkg/server/options"

	"github.com/apiloom/apiloom/server/admission/dynamic"
	"github.com/apiloom/apiloom/server/controllers"
	"github.com/apiloom/apiloom/server/controllers/gc"
	"github.com/apiloom/apiloom/server/controllers/namespace"
	"github.com/apiloom/apiloom/server/endpoints/patch"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/etcdclient"
	"github.com/apiloom/apiloom/server/hook"
	"github.com/apiloom/apiloom/server/storage"
)

// Options configure a Server. Defaults come from DefaultOptions; Validate
// is called by New, so an invalid Options never starts anything.
type Options struct {
	// DataDir holds the embedded etcd data, generated certificates, the admin
	// token and the kubeconfig written for clients.
	DataDir string

	// EtcdServers lists external etcd client URLs; empty starts embedded etcd
	// inside DataDir.
	EtcdServers  []string
	EtcdCAFile   string
	EtcdCertFile string
	EtcdKeyFile  string
	// EtcdPrefix is the key prefix every object is stored under.
	EtcdPrefix string
	// EtcdQuotaBackendBytes is the embedded etcd's space quota: past it,
	// etcd raises its NOSPACE alarm and refuses writes (deletes still
	// work) until objects are deleted. 0 means
	// etcdclient.DefaultEmbeddedQuotaBytes, 8 GiB.
	EtcdQuotaBackendBytes int64
	// EtcdDefragReclaimableBytes and EtcdDefragReclaimablePercent: after
	// a compaction the embedded etcd is defragmented when at least this
	// many bytes, and this share, of its file are free pages. Percent 0
	// never defragments after compactions.
	EtcdDefragReclaimableBytes   int64
	EtcdDefragReclaimablePercent int
	// EtcdMinFreeDiskBytes is how much free space the embedded etcd's disk
	// keeps: below it writes are refused with 507 before etcd could fail
	// to commit them (which would end the process). 0 disables the guard.
	EtcdMinFreeDiskBytes int64

	BindAddress string
	SecurePort  int
	// TLSCertFile and TLSKeyFile serve a given certificate instead of one
	// generated into DataDir.
	TLSCertFile string
	TLSKeyFile  string
	// ClientCAFile (--client-ca-file) holds CAs whose client certificates
	// are accepted (CN the user, O its groups), besides the server's own
	// CA in DataDir/pki/ca.crt, which is always trusted.
	ClientCAFile string
	// TokenAuthFile (--token-auth-file) is a CSV of bearer tokens in
	// kube-apiserver's format: token,user,uid[,"group1,group2"].
	TokenAuthFile string
	// AnonymousAuth (--anonymous-auth) serves requests without
	// credentials as system:anonymous in system:unauthenticated; off, they
	// get 401 (kube-apiserver's default is on).
	AnonymousAuth bool
	// HTTP2MaxStreamsPerConnection is how many concurrent streams (watches
	// among them) one HTTP/2 client connection may carry; 0 means
	// kube-apiserver's 100, or in aggregated mode
	// AggregatedHTTP2MaxStreams: there one client, the host's aggregator,
	// carries every user's watches over as few connections as it can.
	HTTP2MaxStreamsPerConnection int
	// HTTP2Server names the implementation that serves HTTP/2:
	// HTTP2ServerApiloom, our own connection (server/internal/h2), which
	// carries an idle watch without a goroutine or buffer of its own, or
	// HTTP2ServerGo, Go's (golang.org/x/net/http2, as kube-apiserver
	// serves), with a goroutine per watch: the fallback should ours
	// misbehave.
	HTTP2Server string
	// HTTP2OverheadBudget bounds the work one HTTP/2 client may make its
	// connection do for nothing (frames, streams reset before their
	// answer, header bytes) before the connection is ended with
	// GOAWAY(ENHANCE_YOUR_CALM): rapid reset and frame floods
	// (docs/http2.md). Our HTTP/2 server only; negative disables.
	HTTP2OverheadBudget int

	// BuiltinAPIs are the built-in kinds served (resource.Info.BuiltIn),
	// by resource name ("configmaps") or resource.group
	// ("leases.coordination.k8s.io"); "*" is every one (the default), an
	// empty list none.
	BuiltinAPIs []string
	// DisableAdmissionPlugins are plugins of dynamic admission not run
	// (ValidatingAdmissionPolicy, MutatingAdmissionPolicy and the two
	// webhook plugins; kube-apiserver's flag).
	DisableAdmissionPlugins []string
	// EventTTL is how long core/v1 Events (and events.k8s.io/v1, the same
	// objects) live after their last write; 0 keeps them (kube-apiserver's
	// --event-ttl).
	EventTTL time.Duration
	// LeaseReuseDurationSeconds is how long the etcd lease expiring
	// objects is shared by later writes (kube-apiserver's flag).
	LeaseReuseDurationSeconds int64
	// HookTimeout bounds each point of a write's hooks (package
	// server/hook): past it the request fails with a 500; as long as an
	// admission webhook's default timeout.
	HookTimeout time.Duration
	// WatchCache serves lists and watches from memory; off means every read
	// goes to etcd (for debugging and comparison).
	WatchCache bool
	// CompactionInterval is how often etcd history is compacted; 0 disables.
	CompactionInterval time.Duration
	// EtcdKeepaliveTime and EtcdKeepaliveTimeout are the etcd client's
	// gRPC keepalive: after EtcdKeepaliveTime without a frame from a
	// member it pings, and a connection whose ping is not answered within
	// EtcdKeepaliveTimeout is closed, so that requests and watches move to
	// another member instead of hanging on a connection that silently
	// stopped carrying bytes (a dead host, a partition, a half-open TCP
	// connection). kube-apiserver hard-codes 30s and 10s.
	EtcdKeepaliveTime, EtcdKeepaliveTimeout time.Duration
	// EtcdVerifyCreates reads every create back before acknowledging it:
	// "true", "false", or "auto" (true when the backend is not etcd
	// itself; createcheck.go).
	EtcdVerifyCreates string
	// Profiling serves Go's pprof profiles under /debug/pprof/ (to the
	// admin, like every other path).
	Profiling bool
	// AuthorizationModes are the authorizers every request is asked of,
	// in order, after system:masters' bypass (authorization.go).
	AuthorizationModes []string
	// AuthorizationConfig are --authorization-config and the webhook
	// flags of --authorization-mode=Webhook (options_authorization.go).
	AuthorizationConfig AuthorizationConfigOptions
	// ShutdownTimeout bounds how long in-flight requests get to finish.
	ShutdownTimeout time.Duration
	// TracingConfigFile (--tracing-config-file) holds an
	// apiserver.config.k8s.io TracingConfiguration; empty: no tracing.
	TracingConfigFile string

	// RequestTimeout bounds every request but watches (and pprof
	// profiles): at the deadline the request's context ends, reads of its
	// body and writes of its response fail, and the client gets a 504
	// Timeout Status. A client's ?timeout= shortens it. 0 disables.
	RequestTimeout time.Duration
	// MaxRequestsInFlight and MaxMutatingRequestsInFlight are the seats
	// of read-only (get, list) and of mutating requests served at once.
	// A request takes one, a LIST one per 100 objects it reads (at most
	// 10). One that finds too few free waits for a quarter of
	// RequestTimeout, then gets 429 with Retry-After: 1, which client-go
	// retries. Watches and health checks take none. 0 means no limit.
	MaxRequestsInFlight         int
	MaxMutatingRequestsInFlight int
	// WatchWriteTimeout ends a watch whose client accepts none of its
	// pending data for this long; over our HTTP/2 it applies to every
	// stream (h2.Server.StreamWriteTimeout). With HTTP2ServerGo it bounds
	// the writing of each batch of a watch's events, as over HTTP/1.1.
	// 0 disables.
	WatchWriteTimeout time.Duration
	// MaxRequestBodyBytes is the largest body a write may send (413
	// beyond it); 0 means no limit.
	MaxRequestBodyBytes int64
	// JSONPatchMaxCopyBytes is how much the copy operations of one JSON
	// patch may add to the object (422 beyond it).
	JSONPatchMaxCopyBytes int64
	// StrategicMergePatchMaxListElements bounds the list merging of one
	// strategic merge patch (request.Limits; 413 beyond it); 0 means no
	// limit.
	StrategicMergePatchMaxListElements int
	// EtcdMaxRequestBytes is the largest request etcd accepts: the
	// embedded etcd is started with it, and with an external etcd it must
	// match the cluster's --max-request-bytes. Objects that would not fit
	// are refused with 413 before they are sent.
	EtcdMaxRequestBytes int
	// Snapshots are the scheduled etcd snapshots (options_snapshot.go).
	Snapshots SnapshotOptions
	// ServiceAccounts are the ServiceAccount token flags (options_serviceaccount.go).
	ServiceAccounts ServiceAccountOptions

	// Election decides which replica runs the controllers inside the
	// server (namespace deletion, garbage collection): the one holding
	// their Lease, as kube-controller-manager's --leader-elect.
	Election controllers.Election
	// Controllers names the controllers the server runs (--controllers,
	// kube-controller-manager's syntax): "*" every one, "name" one,
	// "-name" not that one.
	Controllers []string
	MigrationOptions
	ResourceQuotaOptions
	// ConcurrentGCSyncs is how many objects the garbage collector works on
	// at once (kube-controller-manager's --concurrent-gc-syncs).
	ConcurrentGCSyncs int
	// ConcurrentNamespaceSyncs is how many Terminating namespaces the
	// namespace controller deletes the content of at once.
	ConcurrentNamespaceSyncs int

	// APIResponseCompression gzips responses over 128 KiB (large lists)
	// for clients that accept gzip, as kube-apiserver's feature gate of
	// that name (--feature-gates APIResponseCompression=false turns it
	// off there and here).
	APIResponseCompression bool
	// CBORServingAndStorage serves and accepts application/cbor (watches
	// as application/cbor-seq) for every resource, as kube-apiserver does
	// with its feature gate of that name. That gate is alpha and off
	// there; here it is on, as a client only gets CBOR by asking for it
	// (client-go's ClientsAllowCBOR and ClientsPreferCBOR gates).
	// Storage stays JSON.
	CBORServingAndStorage bool

	DeleteCollectionOptions
	SubresourceOptions

	APFOptions

	// Delegation turns on aggregated mode and configures it
	// (aggregated.go): users and permissions are the host cluster's.
	Delegation DelegationOptions
	// Encryption configures encryption at rest (options_encryption.go).
	Encryption EncryptionOptions

	// Audit is kube-apiserver's audit configuration (options_audit.go).
	Audit genericoptions.AuditOptions

	// TokenAuthn configures the JWT (OIDC) and webhook token
	// authenticators (options_authentication.go).
	TokenAuthn TokenAuthnOptions
}

// DefaultEtcdMinFreeDiskBytes is --etcd-min-free-disk-bytes' default
// (etcdclient.DefaultMinFreeDiskBytes, which says why).
const DefaultEtcdMinFreeDiskBytes = etcdclient.DefaultMinFreeDiskBytes

// DefaultOptions returns the options `apiloom` starts with when given no flags.
func DefaultOptions() Options {
	return Options{
		DataDir:                   ".apiloom",
		EtcdPrefix:                "/registry",
		EtcdMinFreeDiskBytes:      DefaultEtcdMinFreeDiskBytes,
		BindAddress:               "127.0.0.1",
		SecurePort:                6443,
		HTTP2Server:               HTTP2ServerApiloom,
		HTTP2OverheadBudget:       10000,
		WatchCache:                true,
		BuiltinAPIs:               []string{"*"},
		EventTTL:                  time.Hour,
		LeaseReuseDurationSeconds: int64(storage.DefaultLeaseReuse / time.Second),
		HookTimeout:               hook.DefaultTimeout,
		CompactionInterval:        5 * time.Minute,
		EtcdKeepaliveTime:         30 * time.Second,
		EtcdKeepaliveTimeout:      10 * time.Second,
		EtcdVerifyCreates:         VerifyCreatesAuto,
		ShutdownTimeout:           30 * time.Second,
		AuthorizationModes:        []string{AuthorizationModeRBAC},
		AuthorizationConfig:       defaultAuthorizationConfigOptions(),
		// kube-apiserver's defaults.
		RequestTimeout:              60 * time.Second,
		MaxRequestsInFlight:         400,
		MaxMutatingRequestsInFlight: 200,
		WatchWriteTimeout:           60 * time.Second,
		MaxRequestBodyBytes:         3 << 20,
		JSONPatchMaxCopyBytes:       patch.DefaultJSONPatchMaxCopyBytes,
		// kube-apiserver has no such bound.
		StrategicMergePatchMaxListElements: request.DefaultStrategicMergePatchMaxListElements,
		// etcd's own default.
		EtcdMaxRequestBytes: storage.DefaultMaxRequestBytes,
		Snapshots:           defaultSnapshotOptions(),
		ServiceAccounts:     defaultServiceAccountOptions(),
		// kube-controller-manager's.
		Election:                 controllers.DefaultElection(),
		Controllers:              []string{"*"},
		ConcurrentGCSyncs:        gc.DefaultWorkers,
		ConcurrentNamespaceSyncs: namespace.DefaultConfig().Workers,
		APIResponseCompression:   true,
		CBORServingAndStorage:    true,
		Delegation:               defaultDelegationOptions(),
		DeleteCollectionOptions:  defaultDeleteCollectionOptions(),
		SubresourceOptions:       defaultSubresourceOptions(),
		APFOptions:               defaultAPFOptions(),
		Audit:                    defaultAuditOptions(),
		TokenAuthn:               defaultTokenAuthnOptions(),

		// MicroShift's, for its single-node etcd (etcdclient says why).
		EtcdDefragReclaimableBytes:   etcdclient.DefaultDefragReclaimableBytes,
		EtcdDefragReclaimablePercent: etcdclient.DefaultDefragReclaimablePercent,
	}
}

// AddFlags binds o to command-line flags named like kube-apiserver's.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir, "directory for embedded etcd data, certificates, the admin token and the kubeconfig")
	fs.StringSliceVar(&o.EtcdServers, "etcd-servers", o.EtcdServers, "external etcd client URLs (comma separated); empty starts an embedded etcd in --data-dir")
	fs.StringVar(&o.EtcdCAFile, "etcd-cafile", o.EtcdCAFile, "CA bundle to verify external etcd servers")
	fs.StringVar(&o.EtcdCertFile, "etcd-certfile", o.EtcdCertFile, "client certificate for external etcd")
	fs.StringVar(&o.EtcdKeyFile, "etcd-keyfile", o.EtcdKeyFile, "client key for external etcd")
	fs.StringVar(&o.EtcdPrefix, "etcd-prefix", o.EtcdPrefix, "etcd key prefix for all objects")
	fs.Int64Var(&o.EtcdQuotaBackendBytes, "etcd-quota-backend-bytes", o.EtcdQuotaBackendBytes,
		"embedded etcd only: space quota of its database; past it writes fail with 507 (deletes still work) and the server compacts, "+
			"defragments and disarms etcd's NOSPACE alarm by itself once objects are deleted; 0: 8 GiB, the most etcd suggests "+
			"(etcd's own default, 2 GiB, holds about a million 1.5 KiB objects and no history); the disk guard protects smaller disks")
	fs.Int64Var(&o.EtcdDefragReclaimableBytes, "etcd-defrag-reclaimable-bytes", o.EtcdDefragReclaimableBytes,
		"embedded etcd only: after a compaction, defragment its database once at least this many bytes of its file are free pages "+
			"(and --etcd-defrag-reclaimable-percent of it), giving them back to the disk; writes wait while it copies what is in use")
	fs.IntVar(&o.EtcdDefragReclaimablePercent, "etcd-defrag-reclaimable-percent", o.EtcdDefragReclaimablePercent,
		"embedded etcd only: after a compaction, defragment its database once at least this share of its file, in percent, is free pages "+
			"(and --etcd-defrag-reclaimable-bytes); 0: never after compactions (the NOSPACE recovery still defragments)")
	fs.Int64Var(&o.EtcdMinFreeDiskBytes, "etcd-min-free-disk-bytes", o.EtcdMinFreeDiskBytes,
		"embedded etcd only: free space to keep on the disk holding its data; below it writes fail with 507 and compaction pauses "+
			"(reads keep working) until a quarter more than this is free again; at start, below it the server serves read-only, and "+
			"it refuses to start with less than 128 MB free (two etcd WAL segments); 0 disables the guard, otherwise at least 64 MB")
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "IP address to serve on")
	fs.IntVar(&o.SecurePort, "secure-port", o.SecurePort, "HTTPS port to serve on (0 picks a free port)")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "serving certificate (PEM); default: generated into --data-dir")
	fs.StringVar(&o.TLSKeyFile, "tls-private-key-file", o.TLSKeyFile, "serving certificate's private key (PEM)")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "PEM file of CAs whose client certificates authenticate requests (the certificate's CommonName is the user, its Organizations the groups); "+
		"the server's own CA (<data-dir>/pki/ca.crt, which signs the admin's and apiloom kubeconfig's certificates) is trusted as well")
	fs.StringVar(&o.TokenAuthFile, "token-auth-file", o.TokenAuthFile, "CSV file of static bearer tokens, kube-apiserver's format: token,user,uid[,\"group1,group2\"]; read at start")
	fs.BoolVar(&o.AnonymousAuth, "anonymous-auth", o.AnonymousAuth, "serve requests that carry no credentials as user system:anonymous in group system:unauthenticated (authorization then decides); "+
		"off, they get 401 Unauthorized (kube-apiserver's default is on; the health checks are served without credentials either way)")
	fs.IntVar(&o.HTTP2MaxStreamsPerConnection, "http2-max-streams-per-connection", o.HTTP2MaxStreamsPerConnection, "concurrent HTTP/2 streams one client connection may carry; clients open more connections beyond it; "+
		"0: 100 (kube-apiserver's), or "+strconv.Itoa(AggregatedHTTP2MaxStreams)+" in aggregated mode, where the host's aggregator proxies every user's watches")
	fs.StringVar(&o.HTTP2Server, "http2-server", o.HTTP2Server, "which implementation serves HTTP/2: "+
		"'apiloom' (our own connection: an idle watch holds no goroutine or buffer) or "+
		"'go' (Go's golang.org/x/net/http2, as kube-apiserver: a goroutine per watch; a fallback); "+
		"both honour --http2-max-streams-per-connection, the 90s idle timeout and --watch-write-timeout "+
		"('go' bounds the writing of each batch of a watch's events and resets the stream with INTERNAL_ERROR, 'apiloom' how long any stream may send nothing of its pending data, and resets it with CANCEL)")
	fs.IntVar(&o.HTTP2OverheadBudget, "http2-overhead-budget", o.HTTP2OverheadBudget, "work an HTTP/2 client may make its connection do for nothing "+
		"(1 a frame, 10 more a stream reset before its answer, 1 per 4 KiB of headers; paid back by answers and data, drained in 10 s) "+
		"before GOAWAY(ENHANCE_YOUR_CALM): rapid reset and frame floods; --http2-server=apiloom only; negative disables")
	fs.StringSliceVar(&o.BuiltinAPIs, "builtin-apis", o.BuiltinAPIs,
		"the built-in kinds to serve, by resource name or resource.group (namespaces,configmaps,secrets,leases.coordination.k8s.io); * serves all of them, an empty value none")
	fs.StringSliceVar(&o.DisableAdmissionPlugins, "disable-admission-plugins", o.DisableAdmissionPlugins,
		"admission plugins not to run, of those configured by API objects: "+strings.Join(dynamic.Names, ", ")+
			"; each runs by default where the kinds that configure it are served (--builtin-apis)")
	fs.DurationVar(&o.EventTTL, "event-ttl", o.EventTTL, "how long events (core/v1 and events.k8s.io/v1) are retained after their last write: an etcd lease deletes them then, "+
		"and watchers see DELETED; 0 keeps them until deleted")
	fs.Int64Var(&o.LeaseReuseDurationSeconds, "lease-reuse-duration-seconds", o.LeaseReuseDurationSeconds, "how long, in seconds, one etcd lease serves the writes of objects that expire "+
		"(events), at most 5% of their TTL: a lower value attaches fewer objects to each lease, so more leases; 0 grants one per write")
	fs.DurationVar(&o.HookTimeout, "hook-timeout", o.HookTimeout, "how long a write's hooks (hooks/<group>/<version>) may run at each point of the admission pipeline "+
		"(mutating, validating, delete); past it the request fails with a 500 InternalError and the hook is logged")
	fs.BoolVar(&o.WatchCache, "watch-cache", o.WatchCache, "serve lists and watches from an in-memory cache fed by one etcd watch per resource")
	fs.DurationVar(&o.CompactionInterval, "etcd-compaction-interval", o.CompactionInterval, "how often to compact etcd history; 0 disables")
	fs.DurationVar(&o.EtcdKeepaliveTime, "etcd-keepalive-time", o.EtcdKeepaliveTime,
		"how long the etcd client's connection to a member may carry no frame before the client pings it (gRPC keepalive; at least 10s, gRPC's floor)")
	fs.DurationVar(&o.EtcdKeepaliveTimeout, "etcd-keepalive-timeout", o.EtcdKeepaliveTimeout,
		"how long the etcd client waits for a keepalive ping's answer before it closes the connection and moves its requests and watches to another member")
	fs.StringVar(&o.EtcdVerifyCreates, "etcd-verify-creates", o.EtcdVerifyCreates,
		"read every create back before acknowledging it (one more read per create): true, false, or auto, true when --etcd-servers is not etcd itself "+
			"(kine may acknowledge a create it did not store while its database fails; see docs/backends.md)")
	fs.BoolVar(&o.Profiling, "profiling", o.Profiling, "serve Go pprof profiles under /debug/pprof/")
	o.addAuthorizationFlags(fs)
	o.addDelegationFlags(fs)
	o.addTracingFlags(fs)
	o.addEncryptionFlags(fs)
	o.addAuditFlags(fs)
	o.addAuthenticationFlags(fs)
	o.addSnapshotFlags(fs)
	o.addServiceAccountFlags(fs)
	fs.DurationVar(&o.ShutdownTimeout, "shutdown-timeout", o.ShutdownTimeout, "how long in-flight requests get to finish on shutdown")
	fs.DurationVar(&o.RequestTimeout, "request-timeout", o.RequestTimeout, "how long a request other than a watch may take: then its body reads and response writes fail and the client gets 504 Timeout; a client's ?timeout= parameter shortens it; 0 disables")
	fs.IntVar(&o.MaxRequestsInFlight, "max-requests-inflight", o.MaxRequestsInFlight, "seats of read-only requests served at once: a get takes one, a list one per 100 objects it reads (at most 10); a request finding too few free waits up to a quarter of --request-timeout (behind at most as many requests as there are seats), then gets 429 Too Many Requests with Retry-After: 1, which clients retry; watches and health checks take none; 0: no limit")
	fs.IntVar(&o.MaxMutatingRequestsInFlight, "max-mutating-requests-inflight", o.MaxMutatingRequestsInFlight, "mutating requests (create, update, patch, delete) served at once, waiting and answered 429 beyond it as for --max-requests-inflight; 0: no limit")
	fs.DurationVar(&o.WatchWriteTimeout, "watch-write-timeout", o.WatchWriteTimeout, "a watch (any stream) whose client accepts none of its pending data for this long is ended")
	fs.Int64Var(&o.MaxRequestBodyBytes, "max-request-body-bytes", o.MaxRequestBodyBytes, "largest request body a write accepts (kube-apiserver's MaxRequestBodyBytes); larger is 413; 0: no limit")
	fs.Int64Var(&o.JSONPatchMaxCopyBytes, "json-patch-max-copy-bytes", o.JSONPatchMaxCopyBytes, "how many bytes the copy operations of one JSON patch may add (kube-apiserver's JSONPatchMaxCopyBytes); more is 422")
	fs.IntVar(&o.StrategicMergePatchMaxListElements, "strategic-merge-patch-max-list-elements", o.StrategicMergePatchMaxListElements, "bounds the work of one strategic merge patch, which grows with the square of each list it merges (the object's elements and the patch's together): one list of this many elements, or lists whose squared lengths add up to its square; more is 413 (kube-apiserver has no bound); 0: no limit")
	fs.BoolVar(&o.Election.Enabled, "leader-elect", o.Election.Enabled, "run the controllers inside the server (namespace deletion, garbage collection) only while this replica holds their Lease (kube-system/apiloom-controllers); off, this replica runs them always, which is right only for a single replica")
	fs.DurationVar(&o.Election.LeaseDuration, "leader-elect-lease-duration", o.Election.LeaseDuration, "how long other replicas wait after the leader's last renewal before taking its Lease over")
	fs.DurationVar(&o.Election.RenewDeadline, "leader-elect-renew-deadline", o.Election.RenewDeadline, "how long the leader keeps trying to renew its Lease before it stops its controllers; less than --leader-elect-lease-duration")
	fs.DurationVar(&o.Election.RetryPeriod, "leader-elect-retry-period", o.Election.RetryPeriod, "how often replicas try to acquire or renew the Lease")
	fs.StringSliceVar(&o.Controllers, "controllers", o.Controllers, "the controllers the server runs ("+strings.Join(controllerNames, ", ")+"): * runs every one, 'name' that one, '-name' not that one (kube-controller-manager's flag); an empty value none")
	o.addMigrationFlags(fs)
	o.addResourceQuotaFlags(fs)
	fs.IntVar(&o.ConcurrentGCSyncs, "concurrent-gc-syncs", o.ConcurrentGCSyncs, "how many objects the garbage collector deletes or updates at once (kube-controller-manager's flag)")
	fs.IntVar(&o.ConcurrentNamespaceSyncs, "concurrent-namespace-syncs", o.ConcurrentNamespaceSyncs, "how many Terminating namespaces the namespace controller deletes the content of at once (kube-controller-manager's flag)")
	fs.Var(o.featureGates(), "feature-gates", "kube-apiserver's feature gates that apiloom shares, as Name=true|false pairs separated by commas: "+
		"APIResponseCompression=true|false (default true) gzips responses over 128 KiB for clients that accept gzip (client-go does), watches never; "+
		"CBORServingAndStorage=true|false (default true; alpha and false in kube-apiserver) serves application/cbor and application/cbor-seq watches and accepts CBOR bodies (stored as JSON)")
	o.addDeleteCollectionFlags(fs)
	o.addSubresourceFlags(fs)
	o.addPriorityAndFairnessFlags(fs)
	fs.IntVar(&o.EtcdMaxRequestBytes, "etcd-max-request-bytes", o.EtcdMaxRequestBytes, "largest request etcd accepts: the embedded etcd's --max-request-bytes, and for --etcd-servers the cluster's; objects that do not fit are refused with 413")
}

// Validate reports every problem with o at once.
func (o *Options) Validate() error {
	var errs []error
	if o.DataDir == "" {
		errs = append(errs, errors.New("--data-dir must not be empty"))
	}
	if net.ParseIP(o.BindAddress) == nil {
		errs = append(errs, fmt.Errorf("--bind-address %q is not an IP address", o.BindAddress))
	}
	if o.SecurePort < 0 || o.SecurePort > 65535 {
		errs = append(errs, fmt.Errorf("--secure-port %d is out of range", o.SecurePort))
	}
	if o.HTTP2MaxStreamsPerConnection < 0 || o.HTTP2MaxStreamsPerConnection > 1<<20 {
		errs = append(errs, fmt.Errorf("--http2-max-streams-per-connection %d is out of range", o.HTTP2MaxStreamsPerConnection))
	}
	if o.HTTP2Server != HTTP2ServerApiloom && o.HTTP2Server != HTTP2ServerGo {
		errs = append(errs, fmt.Errorf("--http2-server %q is neither %q nor %q", o.HTTP2Server, HTTP2ServerApiloom, HTTP2ServerGo))
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file go together"))
	}
	if len(o.EtcdServers) == 0 && (o.EtcdCAFile != "" || o.EtcdCertFile != "" || o.EtcdKeyFile != "") {
		errs = append(errs, errors.New("--etcd-cafile/--etcd-certfile/--etcd-keyfile need --etcd-servers"))
	}
	if (o.EtcdCertFile == "") != (o.EtcdKeyFile == "") {
		errs = append(errs, errors.New("--etcd-certfile and --etcd-keyfile go together"))
	}
	if o.EtcdPrefix == "" || o.EtcdPrefix[0] != '/' {
		errs = append(errs, fmt.Errorf("--etcd-prefix %q must start with /", o.EtcdPrefix))
	}
	if err := validateAdmissionPlugins(o.DisableAdmissionPlugins); err != nil {
		errs = append(errs, err)
	}
	for _, name := range o.Controllers {
		if name != "*" && !slices.Contains(controllerNames, strings.TrimPrefix(name, "-")) {
			errs = append(errs, fmt.Errorf("--controllers: %q is not a controller (%s)", name, strings.Join(controllerNames, ", ")))
		}
	}
	errs = append(errs, o.validateAuthorization()...)
	errs = append(errs, o.validateDelegation()...)
	errs = append(errs, o.validateTracing()...)
	errs = append(errs, o.validateEncryption()...)
	errs = append(errs, o.validateAudit()...)
	errs = append(errs, o.validateAuthentication()...)
	errs = append(errs, o.validateSnapshots()...)
	errs = append(errs, o.validateSubresources()...)
	errs = append(errs, o.validateServiceAccounts()...)
	errs = append(errs, o.validatePriorityAndFairness()...)
	errs = append(errs, o.validateResourceQuota()...)
	if o.ConcurrentNamespaceSyncs < 1 {
		errs = append(errs, fmt.Errorf("--concurrent-namespace-syncs %d must be at least 1", o.ConcurrentNamespaceSyncs))
	}
	if o.EtcdQuotaBackendBytes < 0 {
		errs = append(errs, errors.New("--etcd-quota-backend-bytes must not be negative"))
	}
	if o.EtcdQuotaBackendBytes != 0 && len(o.EtcdServers) > 0 {
		errs = append(errs, errors.New("--etcd-quota-backend-bytes applies to the embedded etcd only; set --quota-backend-bytes on the external etcd"))
	}
	if o.EtcdDefragReclaimableBytes < 0 {
		errs = append(errs, errors.New("--etcd-defrag-reclaimable-bytes must not be negative"))
	}
	if o.EtcdDefragReclaimablePercent < 0 || o.EtcdDefragReclaimablePercent > 100 {
		errs = append(errs, fmt.Errorf("--etcd-defrag-reclaimable-percent %d must be between 0 (off) and 100", o.EtcdDefragReclaimablePercent))
	}
	if o.EtcdMinFreeDiskBytes != 0 && o.EtcdMinFreeDiskBytes < etcdclient.MinMinFreeDiskBytes {
		errs = append(errs, fmt.Errorf("--etcd-min-free-disk-bytes must be 0 (off) or at least %d (one etcd WAL segment)", etcdclient.MinMinFreeDiskBytes))
	}
	if o.EventTTL < 0 {
		errs = append(errs, errors.New("--event-ttl must not be negative"))
	}
	if o.HookTimeout <= 0 {
		errs = append(errs, errors.New("--hook-timeout must be positive"))
	}
	if o.LeaseReuseDurationSeconds < 0 {
		errs = append(errs, errors.New("--lease-reuse-duration-seconds must not be negative"))
	}
	if o.CompactionInterval < 0 {
		errs = append(errs, errors.New("--etcd-compaction-interval must not be negative"))
	}
	if o.EtcdKeepaliveTime < 10*time.Second {
		errs = append(errs, errors.New("--etcd-keepalive-time must be at least 10s (gRPC raises shorter ones to 10s)"))
	}
	if o.EtcdKeepaliveTimeout <= 0 {
		errs = append(errs, errors.New("--etcd-keepalive-timeout must be positive"))
	}
	if !slices.Contains([]string{VerifyCreatesAuto, "true", "false"}, o.EtcdVerifyCreates) {
		errs = append(errs, fmt.Errorf("--etcd-verify-creates %q is none of auto, true, false", o.EtcdVerifyCreates))
	}
	if o.RequestTimeout < 0 {
		errs = append(errs, errors.New("--request-timeout must not be negative"))
	}
	if o.MaxRequestsInFlight < 0 {
		errs = append(errs, errors.New("--max-requests-inflight must not be negative"))
	}
	if o.MaxMutatingRequestsInFlight < 0 {
		errs = append(errs, errors.New("--max-mutating-requests-inflight must not be negative"))
	}
	if o.MaxRequestBodyBytes < 0 {
		errs = append(errs, errors.New("--max-request-body-bytes must not be negative"))
	}
	if o.JSONPatchMaxCopyBytes <= 0 {
		errs = append(errs, errors.New("--json-patch-max-copy-bytes must be positive"))
	}
	if o.StrategicMergePatchMaxListElements < 0 {
		errs = append(errs, errors.New("--strategic-merge-patch-max-list-elements must not be negative"))
	}
	if o.EtcdMaxRequestBytes < 4096 {
		errs = append(errs, errors.New("--etcd-max-request-bytes must be at least 4096"))
	}
	if o.WatchWriteTimeout < 0 {
		errs = append(errs, errors.New("--watch-write-timeout must not be negative"))
	}
	if o.ConcurrentGCSyncs < 1 {
		errs = append(errs, errors.New("--concurrent-gc-syncs must be at least 1"))
	}
	if e := o.Election; e.Enabled && (e.RetryPeriod <= 0 || e.RenewDeadline <= e.RetryPeriod || e.LeaseDuration <= e.RenewDeadline) {
		errs = append(errs, errors.New("--leader-elect-retry-period < --leader-elect-renew-deadline < --leader-elect-lease-duration must hold, all positive"))
	}
	return errors.Join(errs...)
}

// AggregatedHTTP2MaxStreams is --http2-max-streams-per-connection's
// default in aggregated mode: thousands of watches through one connection
// of the aggregator, which an idle stream of our HTTP/2 server carries
// without a goroutine or buffer (docs/aggregation.md).
const AggregatedHTTP2MaxStreams = 10000

// http2MaxStreams is the stream limit of one HTTP/2 connection.
func (o *Options) http2MaxStreams() int {
	switch {
	case o.HTTP2MaxStreamsPerConnection > 0:
		return o.HTTP2MaxStreamsPerConnection
	case o.Aggregated():
		return AggregatedHTTP2MaxStreams
	}
	return 100
}

func (o *Options) path(name ...string) string {
	return filepath.Join(append([]string{o.DataDir}, name...)...)
}

// etcdConfig is the etcd to connect to, from the --etcd-* flags; the
// embedded etcd lives in DataDir/etcd.
func (o *Options) etcdConfig() etcdclient.Config {
	return etcdclient.Config{
		Servers:           o.EtcdServers,
		CAFile:            o.EtcdCAFile,
		CertFile:          o.EtcdCertFile,
		KeyFile:           o.EtcdKeyFile,
		Dir:               o.path("etcd"),
		QuotaBackendBytes: o.EtcdQuotaBackendBytes,
		MinFreeDiskBytes:  o.EtcdMinFreeDiskBytes,
		MaxRequestBytes:   o.EtcdMaxRequestBytes,
		KeepaliveTime:     o.EtcdKeepaliveTime,
		KeepaliveTimeout:  o.EtcdKeepaliveTimeout,

		DefragReclaimableBytes:   o.EtcdDefragReclaimableBytes,
		DefragReclaimablePercent: o.EtcdDefragReclaimablePercent,
	}
}
