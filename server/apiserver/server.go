package apiserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/apiloom/apiloom/server/endpoints/patch"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/endpoints/responsewriters"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	apimachineryversion "k8s.io/apimachinery/pkg/version"

	"github.com/apiloom/apiloom/server/discovery"
	"github.com/apiloom/apiloom/server/endpoints"
	"github.com/apiloom/apiloom/server/etcdclient"
	"github.com/apiloom/apiloom/server/registry"
	"github.com/apiloom/apiloom/server/reviews"
	"github.com/apiloom/apiloom/server/storage"
)

// Server is one apiloom server: etcd, every registered resource, and the
// HTTPS listener. Create it with New, run it with Run.
type Server struct {
	opts     Options
	registry *registry.Registry
	log      *slog.Logger

	ready     chan struct{} // closed once Run serves
	addr      string        // host:port served on; set before ready closes
	token     string
	caPEM     []byte
	readyOnce sync.Once

	// loopbackURL is how the server's own controllers reach it; set
	// before ready closes.
	loopbackURL string

	// etcdEndpoint is the embedded etcd's client URL; set before ready
	// closes, "" with an external etcd.
	etcdEndpoint string
}

// New validates opts and prepares a server for the resources in reg.
// Nothing is started until Run.
func New(opts Options, reg *registry.Registry, log *slog.Logger) (*Server, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.Aggregated() {
		// The host cluster serves the built-in kinds and decides who may
		// do what, and its kube-controller-manager collects garbage and
		// empties deleted namespaces through the aggregator.
		opts.BuiltinAPIs, opts.AuthorizationModes, opts.Controllers = nil, nil, nil
	}
	reg, err := selectBuiltins(reg, opts.BuiltinAPIs)
	if err != nil {
		return nil, err
	}
	if opts.authorizesWithRBAC() && !servesRBACKinds(reg) {
		return nil, errRBACNotServed
	}
	if len(reg.Entries()) == 0 {
		return nil, errors.New("apiserver: registry has no resources; run make generate")
	}
	if log == nil {
		log = slog.Default()
	}
	return &Server{opts: opts, registry: reg, log: log, ready: make(chan struct{})}, nil
}

// Ready is closed once the server accepts requests.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Address is the host:port the server listens on; valid after Ready.
func (s *Server) Address() string { return s.addr }

// Token is the loopback bearer token (user system:apiserver in
// system:masters); valid after Ready.
func (s *Server) Token() string { return s.token }

// CAPEM is the CA that signed the serving certificate (nil for an
// operator-provided certificate); valid after Ready.
func (s *Server) CAPEM() []byte { return s.caPEM }

// EtcdEndpoint is the embedded etcd's client URL (unix:///path, reachable
// only by this user), or "" with an external etcd; valid after Ready.
func (s *Server) EtcdEndpoint() string { return s.etcdEndpoint }

// KubeconfigPath is where Run writes the admin kubeconfig.
func (s *Server) KubeconfigPath() string { return s.opts.path("kubeconfig") }

// Run starts etcd (or connects to it), serves until ctx is cancelled, then
// shuts down gracefully: stop the controllers (which release their Lease
// through the server, still serving), stop accepting, end watches, drain
// requests, stop storage, and stop the embedded etcd last.
func (s *Server) Run(ctx context.Context) error {
	if err := os.MkdirAll(s.opts.DataDir, 0o700); err != nil {
		return err
	}
	tracerProvider, stopTracing, err := s.startTracing(ctx)
	if err != nil {
		return err
	}
	defer stopTracing() // last: the spans of everything below are flushed
	cert, err := loadOrCreateServingCert(&s.opts)
	if err != nil {
		return err
	}
	for _, note := range cert.notes {
		s.log.Warn("serving certificate: " + note)
	}
	token, err := loadOrCreateToken(&s.opts)
	if err != nil {
		return err
	}
	metrics := prometheus.NewRegistry()
	metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	var authSetup *authentication
	var host *delegation
	if s.opts.Aggregated() {
		if host, err = newDelegation(&s.opts, token, metrics); err != nil {
			return err
		}
		authSetup = &authentication{auth: host.authn}
	} else {
		if authSetup, err = newAuthentication(&s.opts, token); err != nil {
			return err
		}
		for _, note := range authSetup.notes {
			s.log.Warn("client certificates: " + note)
		}
	}
	stopTokenAuthn := authSetup.tokens.run(ctx, s.log)
	defer stopTokenAuthn()

	etcd, err := etcdclient.Connect(ctx, withEtcdTracing(s.opts.etcdConfig(), tracerProvider), s.log, metrics)
	if err != nil {
		return err
	}
	defer etcd.Close() // last: after storage and handlers are gone

	// requestsCtx is cancelled at shutdown so that long-running watches end
	// cleanly instead of holding http.Server.Shutdown until its timeout.
	requestsCtx, endRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer endRequests()

	encryption, err := s.startEncryption(ctx, etcd.Client, etcd.Embedded())
	if err != nil {
		return err
	}
	defer encryption.stop() // after storage has closed

	patch.SetJSONPatchMaxCopyBytes(s.opts.JSONPatchMaxCopyBytes)
	backend := registry.Backend{Client: etcd.Client, Prefix: s.opts.EtcdPrefix, WatchCache: s.opts.WatchCache, Metrics: metrics, Log: s.log,
		MaxRequestBytes: s.opts.EtcdMaxRequestBytes,
		TTL:             s.opts.ttls(), LeaseReuse: time.Duration(s.opts.LeaseReuseDurationSeconds) * time.Second,
		Encryption:  encryption.storageOption,
		HookTimeout: s.opts.HookTimeout, MaxSubresourceStreams: s.opts.MaxSubresourceStreams, VerifyCreates: verifyCreates(ctx, &s.opts, etcd.Embedded(), etcd.Client, s.log),
		Limits: &request.Limits{MaxRequestBodyBytes: s.opts.MaxRequestBodyBytes, WatchWriteTimeout: s.opts.WatchWriteTimeout,
			StrategicMergePatchMaxListElements: s.opts.StrategicMergePatchMaxListElements,
			ResponseCompression:                s.opts.APIResponseCompression,
			CBOR:                               s.opts.CBORServingAndStorage,
			DeleteCollectionWorkers:            s.opts.DeleteCollectionWorkers}}
	// Both are set once the authorizers exist, before any request.
	escalation := &escalationResolver{}
	backend.RBAC, backend.Authorizer = escalation, escalation
	if host != nil {
		backend.Namespaces = host.namespaceLifecycle()
	}
	dynamicAdmission, err := s.dynamicAdmission()
	if err != nil {
		return err
	}
	backend.Dynamic = dynamicAdmission.Chain()
	served, err := s.registry.Build(requestsCtx, backend)
	if err != nil {
		return err
	}
	defer served.Close()
	authSetup.serviceAccounts.attach(served)

	// Listening first tells discovery the address /api names; connections
	// wait in the backlog until the server is assembled.
	ln, err := net.Listen("tcp", net.JoinHostPort(s.opts.BindAddress, strconv.Itoa(s.opts.SecurePort)))
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	serving := false
	defer func() {
		if !serving {
			_ = ln.Close()
		}
	}()
	infos := s.registry.Infos()
	if host == nil {
		infos = append(infos, reviews.Infos()...)
	}
	infos = authSetup.serviceAccounts.withSubresources(infos)
	disc, err := discovery.New(infos, s.registry.OpenAPIDefinitions(), serverVersion(),
		discovery.WithServerAddress(advertisedAddress(s.opts.BindAddress, ln)))
	if err != nil {
		return err
	}

	var background sync.WaitGroup
	defer background.Wait()
	if etcd.Embedded() {
		background.Add(1)
		go func() { defer background.Done(); etcd.RunQuotaRecovery(requestsCtx) }()
	}
	if s.opts.CompactionInterval > 0 {
		c := storage.NewCompactor(etcd.Client, s.opts.CompactionInterval, s.log)
		background.Add(1)
		go func() { defer background.Done(); c.Run(requestsCtx) }()
	}
	s.startSnapshots(requestsCtx, etcd, &background)

	rbacAuthz, err := s.startRBAC(requestsCtx, served, &background)
	if err != nil {
		return err
	}
	var authz authorizers
	if host != nil {
		authz = authorizers{Authorizer: host.authz}
		host.run(requestsCtx, &background)
	} else if authz, err = s.startAuthorizers(requestsCtx, rbacAuthz, &background); err != nil {
		return err
	}
	escalation.set(authz, rbacAuthz)

	mux := http.NewServeMux()
	disc.Install(mux)
	if host == nil {
		// The host serves the reviews in aggregated mode.
		if err := installReviews(mux, authz, authSetup.auth, s.opts.apiAudiences(), s.opts.MaxRequestBodyBytes); err != nil {
			return err
		}
	}
	resources := endpoints.NewHandler(served.Resources...)
	mux.Handle("/apis/", resources)
	mux.Handle("/api/", resources) // the core group, /api/v1/...
	authSetup.serviceAccounts.install(mux)
	mux.Handle("GET /metrics", promhttp.HandlerFor(metricsGatherer(metrics), promhttp.HandlerOpts{}))
	if s.opts.Profiling {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	}
	health := healthHandler(etcd.Client, served, rbacAuthz, encryption.checks)
	for _, p := range healthPaths {
		mux.Handle("GET "+p, health)
	}
	for _, c := range encryption.checks {
		mux.Handle("GET /healthz/"+c.Name(), healthCheckHandler(c))
		mux.Handle("GET /readyz/"+c.Name(), healthCheckHandler(c))
	}
	// As in kube-apiserver's chain, the timeout comes before the in-flight
	// limit; both are inside the request metrics, which thus count their
	// 504s and 429s.
	limits := inFlight{
		readOnly: s.opts.MaxRequestsInFlight, mutating: s.opts.MaxMutatingRequestsInFlight,
		maxWait: maxQueueWait(s.opts.RequestTimeout),
	}
	if rs, ok := resources.(readSizer); ok {
		limits.readSize = rs.ReadSize
	}
	apf, err := s.newFlowControl(ln, token, cert.caPEM, resources)
	if err != nil {
		return err
	}
	apf.install(mux)
	// kube-apiserver's order: the request info, then who is asking, as
	// whom (impersonation), the in-flight limit, and whether they may.
	cbor := s.opts.CBORServingAndStorage
	limited := withImpersonation(authz, cbor, withConcurrencyLimit(apf, limits, metrics, withAuthorization(authz, cbor, mux)))
	aud, err := newAuditing(&s.opts.Audit)
	if err != nil {
		return err
	}
	// Audit, then the request's span, start once its user is known, as in
	// kube-apiserver's chain (where the span encloses the audit filter).
	handler := withRequestInfo(withAuthentication(authSetup.auth, authSetup.apiAudiences, aud, withTracing(tracerProvider, withRequestMetrics(metrics, withRequestTimeout(s.opts.RequestTimeout, limited)))))
	// Errors written before a resource handler (401, 429, 504, unknown
	// paths) are in CBOR too when the client asks for it and it is served.
	lr, _ := resources.(streamChecker)
	handler = withLongRunning(lr, handler)
	handler = responsewriters.WithCBOR(handler, cbor)
	// Outermost, as kube-apiserver's WithAuditInit: the Audit-ID a request
	// comes with (the aggregator's) is in its context for the logs and
	// echoed in the response; with audit on, every request has one.
	handler = aud.withAuditInit(handler)

	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    1 << 20,
		BaseContext:       func(net.Listener) context.Context { return requestsCtx },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		TLSConfig:         servingTLSConfig(cert.cert, authSetup.clientCAs),
	}
	if host != nil {
		srv.TLSConfig = host.tlsConfig(srv.TLSConfig)
	}
	// HTTP/2 is served by our own connection, which carries a watch
	// without a goroutine or buffer of its own (server/internal/h2), unless
	// --http2-server=go; either allows --http2-max-streams-per-connection
	// streams a connection (100, kube-apiserver's default).
	if err := configureHTTP2(srv, &s.opts, s.log); err != nil {
		return err
	}

	s.addr, s.token, s.caPEM = ln.Addr().String(), token, cert.caPEM
	s.etcdEndpoint = etcd.Endpoint()
	s.loopbackURL = "https://" + kubeconfigHost(s.opts.BindAddress, ln)
	if err := s.writeKubeconfig(cert.caPEM, authSetup.admin); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	// The policies and webhooks read their configuration through the
	// loopback, so their informers start once the server serves; until
	// they have synced, writes wait for them.
	admissionEnv, err := s.dynamicAdmissionEnv(host, authz)
	if err != nil {
		return fmt.Errorf("admission: %w", err)
	}
	startDynamicAdmission, err := dynamicAdmission.Initialize(requestsCtx, admissionEnv)
	if err != nil {
		return fmt.Errorf("admission: %w", err)
	}

	// The audit backends stop after the requests have drained (this
	// defer runs after srv.Shutdown), flushing their buffers.
	if err := aud.start(); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	defer aud.shutdown(s.opts.ShutdownTimeout, s.log)
	serving = true
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.ServeTLS(ln, "", "") }()
	startDynamicAdmission(&background)
	apf.start(requestsCtx, &background)
	s.log.Info("apiloom serving", "address", "https://"+s.addr, "kubeconfig", s.KubeconfigPath(),
		"resources", len(served.Resources), "embeddedEtcd", etcd.Embedded(), "watchCache", s.opts.WatchCache, "http2Server", s.opts.HTTP2Server)
	if err := s.ensureSystemNamespaces(requestsCtx, &background); err != nil {
		endRequests()
		_ = srv.Close()
		<-serveErr
		return err
	}
	if err := s.ensureRBACPolicy(requestsCtx, &background); err != nil {
		endRequests()
		_ = srv.Close()
		<-serveErr
		return err
	}
	if rbacAuthz != nil {
		// Ready, as /readyz, once RBAC has read every Role and binding;
		// a shutdown meanwhile is not a failure.
		if err := rbacAuthz.WaitForSync(ctx); err != nil && ctx.Err() == nil {
			endRequests()
			_ = srv.Close()
			<-serveErr
			return err
		}
	}
	s.readyOnce.Do(func() { close(s.ready) })
	// The controllers reach the server through its listener, so they stop
	// (and give up their Lease) before it closes, not with the requests.
	controllersCtx, stopControllers := context.WithCancel(requestsCtx)
	defer stopControllers()
	controllersDone := make(chan struct{})
	background.Add(1)
	go func() {
		defer background.Done()
		defer close(controllersDone)
		s.runControllers(controllersCtx)
	}()

	select {
	case err := <-serveErr:
		endRequests()
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.log.Info("shutting down")
	// The controllers normally stop within milliseconds; should one hang,
	// the requests still get their whole --shutdown-timeout after it.
	stopControllers()
	controllersTimeout := time.NewTimer(s.opts.ShutdownTimeout)
	select {
	case <-controllersDone:
	case <-controllersTimeout.C:
		s.log.Warn("controllers still stopping after the shutdown timeout; shutting down without them")
	}
	controllersTimeout.Stop()
	endRequests()
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		s.log.Warn("requests still running at shutdown timeout", "err", err)
		_ = srv.Close()
	}
	<-serveErr
	return nil
}

// kubeconfigHost is the address clients should dial: the bound address, or
// loopback when bound to every interface.
func kubeconfigHost(bind string, ln net.Listener) string {
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	if ip := net.ParseIP(bind); ip == nil || ip.IsUnspecified() {
		bind = "127.0.0.1"
	}
	return net.JoinHostPort(bind, port)
}

// advertisedAddress is the address /api tells clients the server has, as
// kube-apiserver's serverAddressByClientCIDRs does: the bound address, or
// the host's default interface's when bound to every interface, and the
// port.
func advertisedAddress(bind string, ln net.Listener) string {
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ip, err := utilnet.ResolveBindAddress(net.ParseIP(bind))
	if err != nil || ip == nil {
		return kubeconfigHost(bind, ln)
	}
	return net.JoinHostPort(ip.String(), port)
}

func serverVersion() apimachineryversion.Info {
	return apimachineryversion.Info{
		Major: "1", Minor: "37", GitVersion: "v1.37.0-apiloom", Compiler: runtime.Compiler,
		GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}
}
