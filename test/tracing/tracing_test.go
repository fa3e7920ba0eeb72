package tracing

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/apiloom/apiloom/generated/apiserver"
	"github.com/apiloom/apiloom/internal/etcdtest"
	apiloomserver "github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/testserver"
)

// spanWait bounds the wait for the batch that carries a request's spans.
const spanWait = 30 * time.Second

func init() {
	// Export batches every 50ms instead of every 5s (the SDK reads it
	// when the provider is made), so that a test waits for little.
	_ = os.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
}

// writeConfig writes a TracingConfiguration sending every span to endpoint.
func writeConfig(t *testing.T, endpoint string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tracing.yaml")
	cfg := fmt.Sprintf("apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: %s\nsamplingRatePerMillion: 1000000\n", endpoint)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// withTracingConfig runs the server with --tracing-config-file=path.
func withTracingConfig(path string) testserver.Option {
	return func(o *apiloomserver.Options) { o.TracingConfigFile = path }
}

// clientSpan is the span a traced client sends its requests in.
type clientSpan struct{ trace, span []byte }

func newClientSpan() clientSpan {
	s := clientSpan{trace: make([]byte, 16), span: make([]byte, 8)}
	_, _ = rand.Read(s.trace)
	_, _ = rand.Read(s.span)
	return s
}

// traceparent is the W3C header of s, sampled.
func (s clientSpan) traceparent() string { return fmt.Sprintf("00-%x-%x-01", s.trace, s.span) }

// propagating is a client transport that sends the current client span's
// traceparent with every request, as an instrumented client would.
type propagating struct {
	mu      sync.Mutex
	current clientSpan
}

func (p *propagating) set(s clientSpan) { p.mu.Lock(); p.current = s; p.mu.Unlock() }

func (p *propagating) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		p.mu.Lock()
		s := p.current
		p.mu.Unlock()
		if s.trace != nil {
			r = r.Clone(r.Context())
			r.Header.Set("traceparent", s.traceparent())
		}
		return rt.RoundTrip(r)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// tracedClient is a clientset for cfg whose requests carry p's span.
func tracedClient(t *testing.T, cfg *rest.Config, p *propagating) *kubernetes.Clientset {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = p.wrap
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

// TestRequestSpans: with a tracing configuration, a create's and a list's
// spans reach the collector in the client's trace, under the client's
// span, with the spans of admission, of etcd's calls and of the response
// for the create and of the watch cache for the list. Over the embedded
// etcd the etcd spans are apiloom's in-process ones, over an external etcd
// otelgrpc's, by the same names.
func TestRequestSpans(t *testing.T) {
	for _, tc := range []struct {
		name     string
		external bool
	}{{"embedded etcd", false}, {"external etcd", true}} {
		t.Run(tc.name, func(t *testing.T) {
			col := startCollector(t)
			opts := []testserver.Option{withTracingConfig(writeConfig(t, col.addr))}
			if tc.external {
				etcd := etcdtest.StartServer(t)
				opts = append(opts, testserver.WithEtcd("http://"+etcd.Clients[0].Addr().String()))
			}
			ts := testserver.Start(t, apiserver.Install, opts...)
			ts.CreateNamespaces(t, "traced")
			var p propagating
			kc := tracedClient(t, ts.Config, &p)
			ctx := t.Context()

			create := newClientSpan()
			p.set(create)
			if _, err := kc.CoreV1().ConfigMaps("traced").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			createSpans := []string{"Admission mutating", "Admission validating", "etcdserverpb.KV/Txn", "SerializeObject"}
			spans := inTrace(col.waitFor(t, spanWait, "create's spans", func(s []*tracepb.Span) bool {
				return hasAll(inTrace(s, create.trace), createSpans...)
			}), create.trace)
			t.Logf("the create's trace:\n%s", describe(spans))
			root := named(spans, "POST /api/v1/namespaces/{:namespace}/configmaps")
			if root == nil {
				t.Fatalf("no request span named as kube-apiserver's in the create's trace:\n%s", describe(spans))
			}
			if !bytes.Equal(root.GetParentSpanId(), create.span) {
				t.Errorf("the request span's parent is %x, not the client's span %x", root.GetParentSpanId(), create.span)
			}
			if root.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
				t.Errorf("the request span's kind is %v", root.GetKind())
			}
			for _, name := range createSpans {
				if s := named(spans, name); !descends(spans, s, root) {
					t.Errorf("%s is not under the request's span", name)
				}
			}
			// Each plugin's return is an event on its phase's span.
			for phase, plugin := range map[string]string{"Admission mutating": "NamespaceLifecycle", "Admission validating": "KindValidation"} {
				if !hasEvent(named(spans, phase), plugin) {
					t.Errorf("%s has no event %s", phase, plugin)
				}
			}
			txn := named(spans, "etcdserverpb.KV/Txn")
			if got := stringAttr(txn, "rpc.system.name"); tc.external && got != "grpc" {
				t.Errorf("over an external etcd, the Txn span's rpc.system.name is %q, want grpc (otelgrpc's)", got)
			}
			if got := boolAttr(txn, "etcd.in_process"); got != !tc.external {
				t.Errorf("the Txn span's etcd.in_process is %v", got)
			}

			list := newClientSpan()
			p.set(list)
			if _, err := kc.CoreV1().ConfigMaps("traced").List(ctx, metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
			spans = inTrace(col.waitFor(t, spanWait, "list's spans", func(s []*tracepb.Span) bool {
				return hasAll(inTrace(s, list.trace), "cacher.GetList", "SerializeObject", "GET /api/v1/namespaces/{:namespace}/configmaps")
			}), list.trace)
			root = named(spans, "GET /api/v1/namespaces/{:namespace}/configmaps")
			if !bytes.Equal(root.GetParentSpanId(), list.span) {
				t.Errorf("the list's request span's parent is %x, not the client's span %x", root.GetParentSpanId(), list.span)
			}
			cacher := named(spans, "cacher.GetList")
			if !descends(spans, cacher, root) {
				t.Error("cacher.GetList is not under the list's request span")
			}
			if hasEvent(cacher, "delegated to storage") {
				t.Error("the list was not served from the watch cache")
			}
			if got := stringAttr(cacher, "namespace"); got != "traced" {
				t.Errorf("cacher.GetList's namespace is %q", got)
			}

			// A traced watch still streams (the request filter wraps the
			// response writer the watch hands its stream over through).
			p.set(newClientSpan())
			w, err := kc.CoreV1().ConfigMaps("traced").Watch(ctx, metav1.ListOptions{ResourceVersion: "0"})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			if _, err := kc.CoreV1().ConfigMaps("traced").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "d"}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			timeout := time.After(spanWait)
			for seen := false; !seen; {
				select {
				case e := <-w.ResultChan():
					cm, ok := e.Object.(*corev1.ConfigMap)
					seen = ok && cm.Name == "d"
				case <-timeout:
					t.Fatal("the traced watch did not deliver the create")
				}
			}
		})
	}
}

// TestUnprivilegedClientStartsItsOwnTrace: as in kube-apiserver, only a
// client in system:masters or system:monitoring continues its trace; any
// other's request starts a trace of its own, linked to the client's span
// (an outsider neither forces sampling nor joins its spans to the
// server's).
func TestUnprivilegedClientStartsItsOwnTrace(t *testing.T) {
	col := startCollector(t)
	ts := testserver.Start(t, apiserver.Install, withTracingConfig(writeConfig(t, col.addr)))
	var p propagating
	kc := tracedClient(t, ts.UserConfig("alice"), &p)
	client := newClientSpan()
	p.set(client)
	_, _ = kc.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{}) // 403: the request is traced all the same
	spans := col.waitFor(t, spanWait, "span linked to the client's", func(s []*tracepb.Span) bool { return linked(s, client) != nil })
	s := linked(spans, client)
	if bytes.Equal(s.GetTraceId(), client.trace) || len(s.GetParentSpanId()) != 0 {
		t.Errorf("alice's request span %q is in the client's trace or has a parent (%x)", s.GetName(), s.GetParentSpanId())
	}
	if n := len(inTrace(spans, client.trace)); n != 0 {
		t.Errorf("%d spans joined alice's trace", n)
	}
}

// linked is the span linked to c's, or nil.
func linked(spans []*tracepb.Span, c clientSpan) *tracepb.Span {
	for _, s := range spans {
		for _, l := range s.GetLinks() {
			if bytes.Equal(l.GetTraceId(), c.trace) && bytes.Equal(l.GetSpanId(), c.span) {
				return s
			}
		}
	}
	return nil
}

// hasAll reports whether spans has one span of each name.
func hasAll(spans []*tracepb.Span, names ...string) bool {
	for _, n := range names {
		if named(spans, n) == nil {
			return false
		}
	}
	return true
}

// descends reports whether s is root or under it.
func descends(spans []*tracepb.Span, s, root *tracepb.Span) bool {
	for hops := 0; s != nil && hops < 64; hops++ {
		if bytes.Equal(s.GetSpanId(), root.GetSpanId()) {
			return true
		}
		var parent *tracepb.Span
		for _, p := range spans {
			if bytes.Equal(p.GetSpanId(), s.GetParentSpanId()) {
				parent = p
				break
			}
		}
		s = parent
	}
	return false
}

func stringAttr(s *tracepb.Span, key string) string {
	for _, a := range s.GetAttributes() {
		if a.GetKey() == key {
			return a.GetValue().GetStringValue()
		}
	}
	return ""
}

func boolAttr(s *tracepb.Span, key string) bool {
	for _, a := range s.GetAttributes() {
		if a.GetKey() == key {
			return a.GetValue().GetBoolValue()
		}
	}
	return false
}

// hasEvent reports whether s has an event called name.
func hasEvent(s *tracepb.Span, name string) bool {
	for _, e := range s.GetEvents() {
		if e.GetName() == name {
			return true
		}
	}
	return false
}
