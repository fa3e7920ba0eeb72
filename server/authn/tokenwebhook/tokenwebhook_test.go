package tokenwebhook

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// review is the part of a TokenReview (v1 or v1beta1, the same JSON) the
// test service reads and writes.
type review struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Spec       struct {
		Token string `json:"token"`
	} `json:"spec"`
	Status struct {
		Authenticated bool `json:"authenticated"`
		User          struct {
			Username string   `json:"username"`
			Groups   []string `json:"groups"`
		} `json:"user"`
	} `json:"status"`
}

// TestWebhook: the default version is upstream's v1beta1; "t1" is wanda,
// anything else refused; answers are cached both ways for the TTL, and a
// failing service is asked again (errors are not cached).
func TestWebhook(t *testing.T) {
	var calls, failing atomic.Int64
	var version atomic.Value
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if failing.Load() != 0 {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		var rev review
		if err := json.NewDecoder(r.Body).Decode(&rev); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		version.Store(rev.APIVersion)
		if rev.Spec.Token == "t1" {
			rev.Status.Authenticated = true
			rev.Status.User.Username, rev.Status.User.Groups = "wanda", []string{"hook"}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&rev)
	}))
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	kubeconfig := filepath.Join(t.TempDir(), "hook.kubeconfig")
	if err := os.WriteFile(kubeconfig, fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters:
- name: hook
  cluster: {server: %q, certificate-authority-data: %s}
users:
- name: apiserver
  user: {}
contexts:
- name: hook
  context: {cluster: hook, user: apiserver}
current-context: hook
`, srv.URL, base64.StdEncoding.EncodeToString(ca)), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := New(Config{ConfigFile: kubeconfig, CacheTTL: time.Hour, Backoff: &wait.Backoff{Duration: time.Millisecond, Steps: 1}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 3 {
		resp, ok, err := a.AuthenticateToken(ctx, "t1")
		if err != nil || !ok || resp.User.GetName() != "wanda" || resp.User.GetGroups()[0] != "hook" {
			t.Fatalf("t1: %+v %v %v", resp, ok, err)
		}
		if _, ok, _ := a.AuthenticateToken(ctx, "t2"); ok {
			t.Fatal("t2 accepted")
		}
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("the service was asked %d times, want 2 (one per token, cached)", n)
	}
	if v := version.Load(); v != "authentication.k8s.io/v1beta1" {
		t.Errorf("sent %v, want upstream's default v1beta1", v)
	}
	failing.Store(1)
	for range 2 {
		if _, ok, err := a.AuthenticateToken(ctx, "t3"); ok || err == nil {
			t.Fatalf("a failing service: ok %v err %v", ok, err)
		}
	}
	if n := calls.Load(); n < 4 {
		t.Errorf("the failing service was asked %d times in all, want each of the 2 tries to ask it (errors not cached)", n)
	}
	if _, err := New(Config{ConfigFile: filepath.Join(t.TempDir(), "none")}); err == nil {
		t.Error("a missing kubeconfig was accepted")
	}
}
