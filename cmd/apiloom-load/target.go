package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// errNotLoopback refuses any server that is not on this machine: load is
// only ever sent to loopback addresses.
var errNotLoopback = errors.New("apiloom-load: target is not a loopback address")

// target is the server under load and the clients that reach it.
type target struct {
	// Immutable after newTarget.
	cfg       *rest.Config // loopback-only dialer, no client-side rate limit
	gvr       schema.GroupVersionResource
	namespace string
	// collection is the namespaced collection URL, without query.
	collection string
	// writer is the dynamic client for creates, updates and markers.
	writer dynamic.ResourceInterface
	// plain is an HTTP client over client-go's transport for lists and
	// metrics; it has its own connection.
	plain *http.Client
}

func newTarget(c *config) (*target, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	if err := checkLoopbackURL(cfg.Host); err != nil {
		return nil, err
	}
	cfg.QPS = -1 // no client-side throttling: the writer paces itself
	cfg.UserAgent = "apiloom-load"
	cfg.Dial = loopbackDial
	t := &target{
		cfg:       cfg,
		gvr:       schema.GroupVersionResource{Group: c.Group, Version: c.Version, Resource: c.Resource},
		namespace: c.Namespace,
	}
	prefix := "/apis/" + c.Group + "/" + c.Version
	if c.Group == "" {
		prefix = "/api/" + c.Version
	}
	t.collection = strings.TrimSuffix(cfg.Host, "/") + prefix + "/namespaces/" + url.PathEscape(c.Namespace) + "/" + c.Resource
	dyn, err := dynamic.NewForConfig(t.freshConfig())
	if err != nil {
		return nil, err
	}
	t.writer = dyn.Resource(t.gvr).Namespace(c.Namespace)
	if t.plain, err = t.newHTTPClient(); err != nil {
		return nil, err
	}
	return t, nil
}

// freshConfig copies the config with a dialer of its own. client-go caches
// transports by configuration, and a distinct dialer makes the key
// distinct, so each copy gets its own transport and HTTP/2 connection.
func (t *target) freshConfig() *rest.Config {
	c := rest.CopyConfig(t.cfg)
	c.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return loopbackDial(ctx, network, addr)
	}
	return c
}

// newHTTPClient returns a client with its own connection, speaking HTTP/2
// with client-go's TLS and credentials.
func (t *target) newHTTPClient() (*http.Client, error) {
	return rest.HTTPClientFor(t.freshConfig())
}

// newHTTP1Client returns a client that speaks only HTTP/1.1 (TLS
// NextProtos http/1.1, which also keeps client-go from configuring
// HTTP/2), so that each request in flight has a connection of its own:
// client-go's transport with HTTP/2 disabled.
func (t *target) newHTTP1Client() (*http.Client, error) {
	c := t.freshConfig()
	c.NextProtos = []string{"http/1.1"}
	return rest.HTTPClientFor(c)
}

// currentRV returns the resourceVersion of a consistent read of the
// collection: watching from it sees every later change and nothing older.
func (t *target) currentRV(ctx context.Context) (string, error) {
	l, err := t.writer.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return "", fmt.Errorf("list for the current resourceVersion: %w", err)
	}
	return l.GetResourceVersion(), nil
}

// checkLoopbackURL accepts a server URL only if its host is a loopback IP
// or "localhost" (whose addresses loopbackDial checks again).
func checkLoopbackURL(server string) error {
	u, err := url.Parse(server)
	if err != nil {
		return fmt.Errorf("server URL %q: %w", server, err)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%w: %q", errNotLoopback, server)
}

// loopbackDial dials only loopback addresses, so that no connection of a
// load run can leave the machine whatever the kubeconfig or a redirect
// says.
func loopbackDial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, err
	}
	for _, ip := range ips {
		if ip.IP.IsLoopback() {
			var d net.Dialer
			return d.DialContext(ctx, network, net.JoinHostPort(ip.IP.String(), port))
		}
	}
	return nil, fmt.Errorf("%w: %s", errNotLoopback, addr)
}
