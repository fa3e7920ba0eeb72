package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/testserver"
)

// gzipSeen records, for each response client-go received, whether it came
// gzipped: Go's transport decompresses a gzip body it asked for itself and
// says so in Response.Uncompressed, above which client-go sees plain JSON.
type gzipSeen struct {
	mu   sync.Mutex // guards seen
	seen []bool
}

func (g *gzipSeen) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil {
				g.mu.Lock()
				g.seen = append(g.seen, resp.Uncompressed || resp.Header.Get("Content-Encoding") == "gzip")
				g.mu.Unlock()
			}
			return resp, err
		})
	})
	return cfg
}

func (g *gzipSeen) last() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seen[len(g.seen)-1]
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestResponseCompression: a list over 128 KiB reaches client-go gzipped
// (it accepts gzip unless DisableCompression) and decodes; a small one, a
// client that disables compression, and a server started with
// --feature-gates APIResponseCompression=false get plain JSON; kubectl reads
// the gzipped list. With APILOOM_PEER_KUBECONFIG set, the same requests to
// kube-apiserver must come back compressed or not alike.
func TestResponseCompression(t *testing.T) {
	on, _ := startServer(t)
	off, _ := startServer(t, testserver.Option(func(o *apiserver.Options) { o.APIResponseCompression = false }))
	targets := []struct {
		name string
		cfg  *rest.Config
		off  bool // compression turned off
	}{{"apiloom", on.Config, false}, {"apiloom off", off.Config, true}}
	if path := os.Getenv(peerEnv); path != "" {
		peerCfg, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, struct {
			name string
			cfg  *rest.Config
			off  bool
		}{"kube-apiserver", peerCfg, false})
	}
	ns := "gzip-" + rand.String(6)
	data := map[string]string{"pad": strings.Repeat("x", 8<<10)}
	for _, target := range targets {
		kc := kubernetes.NewForConfigOrDie(target.cfg)
		if _, err := kc.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = kc.CoreV1().Namespaces().Delete(context.WithoutCancel(t.Context()), ns, metav1.DeleteOptions{})
		})
		for i := range 24 { // about 200 KiB of ConfigMaps
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i)}, Data: data}
			if _, err := kc.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}

	for _, target := range targets {
		for _, tc := range []struct {
			name       string
			noGzip     bool
			limit      int64
			compressed bool
		}{
			{"large list", false, 0, !target.off},
			{"small list", false, 3, false},
			{"client disables compression", true, 0, false},
		} {
			t.Run(target.name+"/"+tc.name, func(t *testing.T) {
				var seen gzipSeen
				cfg := seen.wrap(target.cfg)
				cfg.DisableCompression = tc.noGzip
				kc := kubernetes.NewForConfigOrDie(cfg)
				list, err := kc.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{Limit: tc.limit})
				if err != nil {
					t.Fatal(err)
				}
				want := 24
				if tc.limit > 0 {
					want = int(tc.limit)
				}
				if len(list.Items) != want || list.Items[want-1].Data["pad"] != data["pad"] {
					t.Fatalf("%d items, want %d", len(list.Items), want)
				}
				if got := seen.last(); got != tc.compressed {
					t.Fatalf("gzipped %t, want %t", got, tc.compressed)
				}
			})
		}
	}

	t.Run("kubectl", func(t *testing.T) {
		out := kubectlFor(t, on).run("get", "configmaps", "-n", ns, "-o", "name")
		if n := strings.Count(out, "configmap/cm-"); n != 24 {
			t.Fatalf("kubectl listed %d ConfigMaps: %q", n, out)
		}
	})
}
