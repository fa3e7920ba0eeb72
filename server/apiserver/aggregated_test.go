package apiserver

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/spf13/pflag"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/filters"
)

// The flags of aggregated mode are upstream's, with upstream's defaults,
// and either kubeconfig turns the mode on.
func TestDelegationFlags(t *testing.T) {
	o := DefaultOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	for flag, def := range map[string]string{
		"authentication-kubeconfig": "", "authorization-kubeconfig": "", "kubeconfig": "",
		"authentication-token-webhook-cache-ttl": "10s",
		// kube-apiserver's webhook authorizer's defaults (options_authorization.go);
		// the delegating authorizer keeps its own unless they are given.
		"authorization-webhook-cache-authorized-ttl": "5m0s", "authorization-webhook-cache-unauthorized-ttl": "30s",
		"authentication-skip-lookup":             "false",
		"authentication-tolerate-lookup-failure": "false", "authorization-always-allow-paths": "[/healthz,/readyz,/livez]",
		"requestheader-username-headers": "[x-remote-user]", "requestheader-group-headers": "[x-remote-group]",
		"requestheader-extra-headers-prefix": "[x-remote-extra-]", "requestheader-client-ca-file": "",
		"requestheader-allowed-names": "[]", "client-ca-file": "",
	} {
		f := fs.Lookup(flag)
		if f == nil {
			t.Errorf("--%s is missing", flag)
			continue
		}
		if f.DefValue != def {
			t.Errorf("--%s defaults to %q, want upstream's %q", flag, f.DefValue, def)
		}
	}
	if o.Aggregated() {
		t.Fatal("aggregated without a delegating kubeconfig")
	}
	if d := o.Delegation.Authorization; d.AllowCacheTTL != 10*time.Second || d.DenyCacheTTL != 10*time.Second {
		t.Errorf("delegating cache TTLs %v/%v, want upstream's 10s/10s", d.AllowCacheTTL, d.DenyCacheTTL)
	}
	if got := o.http2MaxStreams(); got != 100 {
		t.Errorf("standalone HTTP/2 stream limit %d, want kube-apiserver's 100", got)
	}
	if err := fs.Parse([]string{"--authorization-kubeconfig=host.kubeconfig"}); err != nil {
		t.Fatal(err)
	}
	if !o.Aggregated() || o.Delegation.hostKubeconfig() != "host.kubeconfig" {
		t.Fatalf("--authorization-kubeconfig alone: aggregated %v, host kubeconfig %q", o.Aggregated(), o.Delegation.hostKubeconfig())
	}
	if got := o.http2MaxStreams(); got != AggregatedHTTP2MaxStreams {
		t.Errorf("aggregated HTTP/2 stream limit %d, want %d", got, AggregatedHTTP2MaxStreams)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--token-auth-file=tokens.csv", "--requestheader-username-headers= "}); err != nil {
		t.Fatal(err)
	}
	err := o.Validate()
	if err == nil || !strings.Contains(err.Error(), "--token-auth-file") || !strings.Contains(err.Error(), "requestheader-username-headers") {
		t.Errorf("Validate: %v, want the token file refused and upstream's request-header check", err)
	}
}

func TestWithoutAnonymous(t *testing.T) {
	as := func(name string) authenticator.Request {
		return authenticator.RequestFunc(func(*http.Request) (*authenticator.Response, bool, error) {
			return &authenticator.Response{User: &user.DefaultInfo{Name: name}}, true, nil
		})
	}
	r := httptest.NewRequest("GET", "/", nil)
	if _, ok, _ := withoutAnonymous(as(user.Anonymous)).AuthenticateRequest(r); ok {
		t.Error("system:anonymous admitted")
	}
	if resp, ok, _ := withoutAnonymous(as("alice")).AuthenticateRequest(r); !ok || resp.User.GetName() != "alice" {
		t.Error("alice refused")
	}
}

func TestHostReviewCounter(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := newHostReviewCounter(reg)
	rt := c.wrap(roundTripperFunc(func(*http.Request) (*http.Response, error) { return &http.Response{StatusCode: 201}, nil }))
	for _, path := range []string{"/apis/authentication.k8s.io/v1/tokenreviews", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
		"/apis/authorization.k8s.io/v1/subjectaccessreviews", "/api/v1/namespaces/kube-system/configmaps"} {
		if _, err := rt.RoundTrip(httptest.NewRequest("POST", "https://host"+path, nil)); err != nil {
			t.Fatal(err)
		}
	}
	for resource, want := range map[string]float64{"tokenreviews": 1, "subjectaccessreviews": 2, "other": 1} {
		if got := testutil.ToFloat64(c.requests.WithLabelValues(resource)); got != want {
			t.Errorf("%s: %v, want %v", resource, got, want)
		}
	}
}

// A record logged with a request's context carries the Audit-ID the
// request came with (the aggregator's), which the response echoes; a
// request without one gets none.
func TestAuditIDsInLogs(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(WithAuditIDs(slog.NewTextHandler(&out, nil))).With("component", "test")
	h := withAuditID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.InfoContext(r.Context(), "handled")
	}))
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Audit-ID", "from-the-aggregator")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if !strings.Contains(out.String(), "auditID=from-the-aggregator") || !strings.Contains(out.String(), "component=test") {
		t.Errorf("log %q lacks the request's Audit-ID or the logger's attributes", out.String())
	}
	if got := w.Header().Get("Audit-Id"); got != "from-the-aggregator" {
		t.Errorf("response Audit-Id %q", got)
	}
	out.Reset()
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	log.InfoContext(context.Background(), "no request")
	if strings.Contains(out.String(), "auditID") || w.Header().Get("Audit-Id") != "" {
		t.Errorf("a request without an Audit-ID has one: %q, %q", out.String(), w.Header().Get("Audit-Id"))
	}
}

// BenchmarkAuditID is what a request pays for its Audit-ID: nothing
// without one, and what upstream's filter costs every request, which
// makes one up.
func BenchmarkAuditID(b *testing.B) {
	ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, c := range []struct {
		name   string
		h      http.Handler
		header string
	}{{"none", withAuditID(ok), ""}, {"given", withAuditID(ok), "from-the-aggregator"}, {"upstream-made-up", filters.WithAuditInit(ok), ""}} {
		b.Run(c.name, func(b *testing.B) {
			r := httptest.NewRequest("GET", "/apis", nil)
			if c.header != "" {
				r.Header.Set("Audit-ID", c.header)
			}
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				c.h.ServeHTTP(w, r)
			}
		})
	}
}
