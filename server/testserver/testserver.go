// Package testserver runs a real apiloom server inside a Go test: embedded
// etcd in t.TempDir(), a free loopback port, and cleanup when the test ends.
// It is for apiloom's own tests and for users' controller tests alike; no
// binaries are downloaded.
//
//	srv := testserver.Start(t, apiserver.Install) // generated/apiserver.Install
//	client := versioned.NewForConfigOrDie(srv.Config)
package testserver

import (
	"log/slog"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/registry"
)

// TestServer is a running server.
type TestServer struct {
	// Config reaches the server as its loopback user (system:apiserver in
	// system:masters, by the server's token), over TLS verified against
	// the server's own CA.
	Config *rest.Config
	// Server is the running server.
	Server *apiserver.Server
	// DataDir holds the server's etcd data and its kubeconfig.
	DataDir string
	// Kubeconfig is the path of a kubeconfig for kubectl, as the admin
	// (a client certificate in system:masters).
	Kubeconfig string

	t testing.TB
}

// Option changes the server's options before it starts.
type Option func(*apiserver.Options)

// testMinFreeDiskBytes is etcd's WAL segment size (64 MB), the smallest
// --etcd-min-free-disk-bytes the server accepts.
const testMinFreeDiskBytes = 64 * 1000 * 1000

// WithoutWatchCache serves every read from etcd.
func WithoutWatchCache() Option { return func(o *apiserver.Options) { o.WatchCache = false } }

// WithEtcd uses the etcd cluster at endpoints instead of an embedded one;
// servers started with the same endpoints are replicas of one API.
func WithEtcd(endpoints ...string) Option {
	return func(o *apiserver.Options) { o.EtcdServers = endpoints }
}

// WithEtcdPrefix stores every object under prefix (--etcd-prefix, which
// must start with "/") instead of "/registry": servers sharing one etcd
// (or kine) under different prefixes see none of each other's objects,
// namespaces or Leases. Compaction is not per prefix: a server that
// compacts (WithCompactionInterval) compacts every prefix's history.
func WithEtcdPrefix(prefix string) Option {
	return func(o *apiserver.Options) { o.EtcdPrefix = prefix }
}

// WithHTTP2Server serves HTTP/2 with the named implementation,
// apiserver.HTTP2ServerApiloom (the default) or apiserver.HTTP2ServerGo
// (--http2-server).
func WithHTTP2Server(name string) Option {
	return func(o *apiserver.Options) { o.HTTP2Server = name }
}

// WithDataDir runs the server in dir instead of a fresh t.TempDir(): to
// put its etcd on a particular filesystem, or to start a second server on
// the data of one that has stopped.
func WithDataDir(dir string) Option {
	return func(o *apiserver.Options) { o.DataDir = dir }
}

// WithCompactionInterval compacts etcd history every d (off by default in
// tests, as history is then stable).
func WithCompactionInterval(d time.Duration) Option {
	return func(o *apiserver.Options) { o.CompactionInterval = d }
}

// WithElection turns leader election of the server's own controllers on
// or off (--leader-elect); off, this server runs them at once.
func WithElection(on bool) Option {
	return func(o *apiserver.Options) { o.Election.Enabled = on }
}

// WithControllers runs only the named controllers inside the server
// (--controllers; none when names is empty): for tests that count the
// server's watchers or goroutines, which the controllers' informers add to.
func WithControllers(names ...string) Option {
	return func(o *apiserver.Options) { o.Controllers = names }
}

// WithDisabledAdmissionPlugins runs none of the named plugins of dynamic
// admission (--disable-admission-plugins): e.g. all four, to measure a
// server without them.
func WithDisabledAdmissionPlugins(names ...string) Option {
	return func(o *apiserver.Options) { o.DisableAdmissionPlugins = names }
}

// Start starts a server for the resources install registers and returns
// once it serves. The server stops, and waits for its goroutines, when t ends.
func Start(t testing.TB, install func(*registry.Registry), opts ...Option) *TestServer {
	t.Helper()
	reg := &registry.Registry{}
	install(reg)

	o := apiserver.DefaultOptions()
	o.DataDir = t.TempDir()
	o.SecurePort = 0
	o.CompactionInterval = 0
	o.ShutdownTimeout = 10 * time.Second
	// A test writes megabytes, not the ~160 MiB in flight that the default
	// margin is sized for; the smallest threshold the server accepts (one
	// etcd WAL segment) keeps a test machine with little disk left from
	// failing every test. The guard's own tests set theirs.
	o.EtcdMinFreeDiskBytes = testMinFreeDiskBytes
	// The controllers that put a default ServiceAccount and a
	// kube-root-ca.crt ConfigMap in every namespace are off unless a test
	// asks for them (WithControllers): most tests count the objects of a
	// namespace and were written before they existed.
	o.Controllers = []string{"*", "-serviceaccount", "-root-ca-cert-publisher"}
	for _, opt := range opts {
		opt(&o)
	}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := apiserver.New(o, reg, log)
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	// t.Context is cancelled just before cleanups run, which starts the
	// server's graceful shutdown; the cleanup below waits for it.
	done := make(chan error, 1)
	go func() { done <- srv.Run(t.Context()) }()
	t.Cleanup(func() {
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("testserver: run: %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Errorf("testserver: did not stop within 60s")
		}
	})
	select {
	case <-srv.Ready():
	case err := <-done:
		t.Fatalf("testserver: server ended before serving: %v", err)
	case <-time.After(90 * time.Second):
		t.Fatal("testserver: not serving after 90s")
	}
	return &TestServer{
		Config: &rest.Config{
			Host:            "https://" + srv.Address(),
			BearerToken:     srv.Token(),
			TLSClientConfig: rest.TLSClientConfig{CAData: srv.CAPEM()},
			QPS:             -1, // tests measure the server, not client-side throttling
		},
		Server:     srv,
		DataDir:    o.DataDir,
		Kubeconfig: srv.KubeconfigPath(),
		t:          t,
	}
}

// testWriter sends server logs to the test's log, so they show only for
// failing tests.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// WithAuthorizationModes sets --authorization-mode (RBAC by default;
// AlwaysAllow for a server that serves no RBAC kinds).
func WithAuthorizationModes(modes ...string) Option {
	return func(o *apiserver.Options) { o.AuthorizationModes = modes }
}

// WithBuiltinAPIs serves only the built-in kinds names chooses (the
// --builtin-apis flag: resource names, "*" for all, none for none).
func WithBuiltinAPIs(names ...string) Option {
	return func(o *apiserver.Options) { o.BuiltinAPIs = names }
}

// WithTokenAuthFile accepts the bearer tokens of path, a CSV in
// kube-apiserver's format: token,user,uid[,"group1,group2"]
// (--token-auth-file).
func WithTokenAuthFile(path string) Option {
	return func(o *apiserver.Options) { o.TokenAuthFile = path }
}

// WithAnonymousAuth serves requests without credentials as
// system:anonymous (--anonymous-auth).
func WithAnonymousAuth(on bool) Option {
	return func(o *apiserver.Options) { o.AnonymousAuth = on }
}

// UserConfig reaches the server as userName in groups (and
// system:authenticated), by a client certificate signed by the server's
// CA, as `apiloom kubeconfig` makes them: to act as any user in a test.
func (ts *TestServer) UserConfig(userName string, groups ...string) *rest.Config {
	ts.t.Helper()
	cert, err := apiserver.IssueClientCert(ts.DataDir, userName, groups, 24*time.Hour)
	if err != nil {
		ts.t.Fatalf("testserver: client certificate for %s: %v", userName, err)
	}
	return &rest.Config{
		Host: ts.Config.Host,
		TLSClientConfig: rest.TLSClientConfig{
			CAData: ts.Config.CAData, CertData: cert.CertPEM, KeyData: cert.KeyPEM,
		},
		QPS: -1,
	}
}
