// Package authzconfigtest is a webhook authorizer for tests: an HTTPS
// server answering SubjectAccessReviews (authorization.k8s.io v1 and
// v1beta1) as a test decides, and the kubeconfig that reaches it.
package authzconfigtest

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
)

// Decide answers one review: allowed, denied (both false: no opinion),
// and the reason given.
type Decide func(spec authorizationv1.SubjectAccessReviewSpec) (allowed, denied bool, reason string)

// Webhook is a running test webhook authorizer.
type Webhook struct {
	srv   *httptest.Server
	calls atomic.Int64
	// Kubeconfig is the path of a kubeconfig that reaches the webhook
	// and trusts its certificate.
	Kubeconfig string
}

// Start serves decide over HTTPS until the test ends.
func Start(t testing.TB, decide Decide) *Webhook {
	t.Helper()
	return StartVersioned(t, func(_ string, s authorizationv1.SubjectAccessReviewSpec) (bool, bool, string) { return decide(s) })
}

// StartVersioned is Start for a decide that is told the apiVersion of
// each review (authorization.k8s.io/v1 or v1beta1).
func StartVersioned(t testing.TB, decide func(apiVersion string, spec authorizationv1.SubjectAccessReviewSpec) (allowed, denied bool, reason string)) *Webhook {
	t.Helper()
	w := &Webhook{}
	w.srv = httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.calls.Add(1)
		// v1 and v1beta1 reviews share their JSON but for the user's
		// groups ("group" in v1beta1), which v1beta1 callers' tests do
		// not decide on.
		var review struct {
			APIVersion string                                  `json:"apiVersion"`
			Spec       authorizationv1.SubjectAccessReviewSpec `json:"spec"`
		}
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		allowed, denied, reason := decide(review.APIVersion, review.Spec)
		raw := map[string]any{
			"apiVersion": review.APIVersion, "kind": "SubjectAccessReview",
			"status": map[string]any{"allowed": allowed, "denied": denied, "reason": reason},
		}
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(raw)
	}))
	t.Cleanup(w.srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: w.srv.Certificate().Raw})
	caFile := filepath.Join(t.TempDir(), "webhook-ca.crt")
	if err := os.WriteFile(caFile, ca, 0o600); err != nil {
		t.Fatal(err)
	}
	w.Kubeconfig = filepath.Join(t.TempDir(), "webhook.kubeconfig")
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: webhook
  cluster: {server: %q, certificate-authority: %q}
users:
- name: apiserver
  user: {}
contexts:
- name: webhook
  context: {cluster: webhook, user: apiserver}
current-context: webhook
`, w.srv.URL, caFile)
	if err := os.WriteFile(w.Kubeconfig, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return w
}

// Calls is how many reviews the webhook has answered.
func (w *Webhook) Calls() int64 { return w.calls.Load() }

// Stop closes the server: the webhook is down from then on.
func (w *Webhook) Stop() { w.srv.Close() }
