package admissionconf

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"sync"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// hookServer is the admission webhook both servers call: a TLS server on
// 127.0.0.1 (one per target, so that each target's calls are recorded
// apart) whose path says what it answers, /<scenario>/<behaviour>:
//
//   - allow: allows, with a warning naming the operation and object;
//   - deny: denies objects named deny-* or probe-* (403, a message naming
//     them), allows the rest as allow does;
//   - patch: allows with a JSON patch that sets the label
//     webhook-mutated=yes (a DELETE, which has no object, without);
//   - slow: answers only when the caller gives up (its request's context
//     ends) or the test ends.
//
// Every request is recorded under its path.
type hookServer struct {
	srv   *httptest.Server
	caPEM []byte
	stop  chan struct{} // closed at cleanup: a slow answer returns

	mu   sync.Mutex
	seen map[string][]json.RawMessage // path → AdmissionReview requests
}

func startHookServer(t *testing.T) *hookServer {
	h := &hookServer{stop: make(chan struct{}), seen: map[string][]json.RawMessage{}}
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(h.serve))
	h.srv.EnableHTTP2 = true
	h.srv.StartTLS()
	h.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h.srv.Certificate().Raw})
	// Close waits for the handlers; a slow one returns once stop is closed.
	t.Cleanup(func() {
		close(h.stop)
		h.srv.Close()
	})
	return h
}

// url is the webhook URL of a scenario's behaviour.
func (h *hookServer) url(scenario, behaviour string) string {
	return h.srv.URL + "/" + scenario + "/" + behaviour
}

// requests are the AdmissionReview requests recorded under the path of a
// scenario's behaviour, in the order received.
func (h *hookServer) requests(scenario, behaviour string) []json.RawMessage {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]json.RawMessage(nil), h.seen["/"+scenario+"/"+behaviour]...)
}

func (h *hookServer) serve(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
		return
	}
	req := review.Request
	raw, _ := json.Marshal(req)
	h.mu.Lock()
	h.seen[r.URL.Path] = append(h.seen[r.URL.Path], raw)
	h.mu.Unlock()

	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	allowed := fmt.Sprintf("admconf webhook allowed %s of %s", req.Operation, req.Name)
	switch path.Base(r.URL.Path) {
	case "allow":
		resp.Warnings = []string{allowed}
	case "deny":
		if strings.HasPrefix(req.Name, "deny-") || strings.HasPrefix(req.Name, "probe-") {
			resp.Allowed = false
			resp.Result = &metav1.Status{
				Code:    http.StatusForbidden,
				Message: fmt.Sprintf("admconf webhook denies %s of %s", req.Operation, req.Name),
			}
		} else {
			resp.Warnings = []string{allowed}
		}
	case "patch":
		if len(req.Object.Raw) == 0 { // a DELETE's
			break
		}
		pt := admissionv1.PatchTypeJSONPatch
		resp.PatchType = &pt
		resp.Patch = []byte(`[{"op":"add","path":"/metadata/labels/webhook-mutated","value":"yes"}]`)
	case "slow":
		select {
		case <-r.Context().Done():
		case <-h.stop:
		}
		return
	default:
		http.Error(w, "no such behaviour", http.StatusNotFound)
		return
	}
	review.Request = nil
	review.Response = resp
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

// closedURL is a webhook URL nobody listens at: a loopback port that was
// listened on a moment ago and closed.
func closedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return "https://" + addr + "/down"
}
