package apiserver

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/sets"
	k8sadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apiloom/apiloom/server/admission/nslifecycle"
	"github.com/apiloom/apiloom/server/authn"
)

// delegation is what aggregated mode takes from the host cluster: who a
// request is, what it may do, and its Namespaces.
type delegation struct {
	authn authenticator.Request
	authz authorizer.Authorizer
	// clientCAs are the CAs a client certificate may be signed by (the
	// host's client CA and the front proxy's request-header CA), read
	// live; the TLS handshake announces them, without which Go clients,
	// the aggregator among them, send no certificate.
	clientCAs dynamiccertificates.CAContentProvider
	// namespaces is upstream's NamespaceLifecycle over informers.
	namespaces *lifecycle.Lifecycle
	informers  informers.SharedInformerFactory
	// config reaches the host (--kubeconfig), whose policies and webhooks
	// apply to this server's writes too.
	config *rest.Config
}

// newDelegation builds the host-backed authentication (the loopback token
// first, then k8s.io/apiserver's delegating authenticator), authorization
// and namespace lifecycle from o's delegating options. It reads the host's
// extension-apiserver-authentication ConfigMap once (failing unless
// --authentication-tolerate-lookup-failure); run keeps it current.
func newDelegation(o *Options, loopbackToken string, metrics prometheus.Registerer) (*delegation, error) {
	reviews := newHostReviewCounter(metrics)
	authnOpts := *o.Delegation.Authentication
	authzOpts := *o.Delegation.Authorization
	if authnOpts.RemoteKubeConfigFile == "" {
		authnOpts.RemoteKubeConfigFile = authzOpts.RemoteKubeConfigFile
	}
	if authzOpts.RemoteKubeConfigFile == "" {
		authzOpts.RemoteKubeConfigFile = authnOpts.RemoteKubeConfigFile
	}
	authnOpts.ClientCert.ClientCA = o.ClientCAFile
	authnOpts.CustomRoundTripperFn = reviews.wrap
	authzOpts.CustomRoundTripperFn = reviews.wrap

	var authnInfo genericserver.AuthenticationInfo
	var serving genericserver.SecureServingInfo
	if err := authnOpts.ApplyTo(&authnInfo, &serving, nil); err != nil {
		return nil, fmt.Errorf("aggregated mode: authentication: %w", err)
	}
	var authzInfo genericserver.AuthorizationInfo
	if err := authzOpts.ApplyTo(&authzInfo); err != nil {
		return nil, fmt.Errorf("aggregated mode: authorization: %w", err)
	}
	loopback, err := authn.New(authn.Config{LoopbackToken: loopbackToken})
	if err != nil {
		return nil, err
	}
	var delegated = authnInfo.Authenticator
	if !o.AnonymousAuth {
		delegated = withoutAnonymous(delegated)
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", o.Delegation.hostKubeconfig())
	if err != nil {
		return nil, fmt.Errorf("aggregated mode: --kubeconfig: %w", err)
	}
	// The live lookups of namespaces the informer has not seen are on
	// the write path: not behind client-go's default 5 per second.
	cfg.QPS, cfg.Burst = 50, 100
	host, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	namespaces, err := lifecycle.NewLifecycle(sets.New(nslifecycle.Immortal...))
	if err != nil {
		return nil, err
	}
	factory := informers.NewSharedInformerFactory(host, 0)
	namespaces.SetExternalKubeInformerFactory(factory)
	namespaces.SetExternalKubeClientSet(host)
	if err := namespaces.ValidateInitialization(); err != nil {
		return nil, err
	}
	return &delegation{
		authn:      union.New(loopback, delegated),
		authz:      authzInfo.Authorizer,
		clientCAs:  serving.ClientCA,
		namespaces: namespaces,
		informers:  factory,
		config:     cfg,
	}, nil
}

// namespaceLifecycle is the admission plugin the registry's chain runs in
// place of its own.
func (d *delegation) namespaceLifecycle() k8sadmission.MutationInterface { return d.namespaces }

// run keeps the client CAs and the host's namespaces current until ctx
// ends; wg waits for what it starts.
func (d *delegation) run(ctx context.Context, wg *sync.WaitGroup) {
	if r, ok := d.clientCAs.(dynamiccertificates.ControllerRunner); ok {
		// Run starts a goroutine per CA source, each ending with ctx.
		wg.Add(1)
		go func() { defer wg.Done(); r.Run(ctx, 1); <-ctx.Done() }()
	}
	d.informers.Start(ctx.Done())
	wg.Add(1)
	go func() { defer wg.Done(); <-ctx.Done(); d.informers.Shutdown() }()
}

// tlsConfig announces the client CAs current at each handshake.
func (d *delegation) tlsConfig(base *tls.Config) *tls.Config {
	if d.clientCAs == nil {
		return base
	}
	var mu sync.Mutex
	var lastPEM []byte
	var last *tls.Config
	base.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		bundle := d.clientCAs.CurrentCABundleContent()
		mu.Lock()
		defer mu.Unlock()
		if last == nil || !bytes.Equal(bundle, lastPEM) {
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(bundle)
			c := base.Clone()
			c.GetConfigForClient = nil
			c.ClientCAs = pool
			last, lastPEM = c, bundle
		}
		return last, nil
	}
	return base
}

// withoutAnonymous refuses what a's anonymous authenticator would admit:
// upstream's delegating authenticator always ends with one, and
// --anonymous-auth=false (apiloom's default) means a request without
// credentials, or with a forged X-Remote-User and no front-proxy
// certificate, is 401.
func withoutAnonymous(a authenticator.Request) authenticator.Request {
	return authenticator.RequestFunc(func(r *http.Request) (*authenticator.Response, bool, error) {
		resp, ok, err := a.AuthenticateRequest(r)
		if ok && resp.User.GetName() == user.Anonymous {
			return nil, false, nil
		}
		return resp, ok, err
	})
}

// hostReviewCounter counts the requests the server sends the host to
// review a token or a permission: how well upstream's caches (the TokenReview
// and SubjectAccessReview TTLs) spare the host.
type hostReviewCounter struct {
	requests *prometheus.CounterVec
}

func newHostReviewCounter(reg prometheus.Registerer) *hostReviewCounter {
	c := &hostReviewCounter{requests: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiloom_delegated_reviews_total",
		Help: "Requests sent to the host cluster in aggregated mode to review a token (tokenreviews) or a permission (subjectaccessreviews).",
	}, []string{"resource"})}
	if reg != nil {
		reg.MustRegister(c.requests)
	}
	return c
}

func (c *hostReviewCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		resource := "other"
		switch {
		case strings.HasSuffix(r.URL.Path, "/tokenreviews"):
			resource = "tokenreviews"
		case strings.HasSuffix(r.URL.Path, "/subjectaccessreviews"):
			resource = "subjectaccessreviews"
		}
		c.requests.WithLabelValues(resource).Inc()
		return rt.RoundTrip(r)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
