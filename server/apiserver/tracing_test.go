package apiserver

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/apiloom/apiloom/server/registry"
)

// TestTracingOffInstallsNothing: without --tracing-config-file there is no
// provider (so nothing is ever exported, nor dialled), the request chain
// has no tracing filter, and the etcd client is not traced.
func TestTracingOffInstallsNothing(t *testing.T) {
	s := &Server{opts: DefaultOptions()}
	tp, stop, err := s.startTracing(t.Context())
	if err != nil || tp != nil {
		t.Fatalf("without a configuration: provider %v, err %v", tp, err)
	}
	stop()
	next := &countingHandler{}
	if h := withTracing(nil, next); h != http.Handler(next) {
		t.Fatalf("without a provider the chain has a tracing filter: %T", h)
	}
	if cfg := withEtcdTracing(s.opts.etcdConfig(), nil); cfg.TracerProvider != nil {
		t.Fatal("without a provider the etcd client is traced")
	}
}

type countingHandler struct{ n int }

func (c *countingHandler) ServeHTTP(http.ResponseWriter, *http.Request) { c.n++ }

// TestTracingConfigFileIsValidated: a configuration the server could not
// use stops it before it starts anything, and the error says why.
func TestTracingConfigFileIsValidated(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const header = "apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\n"
	for _, tc := range []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "absent.yaml"), "absent.yaml"},
		{"rate too high", write("rate.yaml", header+"samplingRatePerMillion: 2000000\n"), "less than or equal to one million"},
		{"negative rate", write("negative.yaml", header+"samplingRatePerMillion: -1\n"), "sampling rate must be positive"},
		{"endpoint scheme", write("scheme.yaml", header+"endpoint: http://collector:4317\n"), "unsupported scheme"},
		{"unknown field", write("field.yaml", header+"endpiont: collector:4317\n"), "endpiont"},
		{"wrong kind", write("kind.yaml", "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n"), "decode"},
		{"not yaml", write("garbage.yaml", "{{{"), "decode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse([]string{"--tracing-config-file=" + tc.path}); err != nil {
				t.Fatal(err)
			}
			_, err := New(o, &registry.Registry{}, nil)
			if err == nil || !strings.Contains(err.Error(), "--tracing-config-file") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v; want an error about --tracing-config-file saying %q", err, tc.want)
			}
		})
	}
	o := DefaultOptions()
	o.TracingConfigFile = write("good.yaml", header+"endpoint: 127.0.0.1:4317\nsamplingRatePerMillion: 100\n")
	if err := o.Validate(); err != nil {
		t.Fatalf("a valid configuration: %v", err)
	}
}
