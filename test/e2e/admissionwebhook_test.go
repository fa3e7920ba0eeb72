package e2e

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
)

// webhookServer is an admission webhook on 127.0.0.1 over TLS: each path
// answers with its handler and records the AdmissionReviews it received.
type webhookServer struct {
	srv    *httptest.Server
	caPEM  []byte
	mu     sync.Mutex // guards got
	got    map[string][]admissionv1.AdmissionRequest
	unstop chan struct{}
}

// reviewer answers one AdmissionRequest.
type reviewer func(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse

func startWebhookServer(t *testing.T, handlers map[string]reviewer) *webhookServer {
	w := &webhookServer{got: map[string][]admissionv1.AdmissionRequest{}, unstop: make(chan struct{})}
	mux := http.NewServeMux()
	for path, h := range handlers {
		mux.HandleFunc("POST "+path, func(rw http.ResponseWriter, r *http.Request) {
			var review admissionv1.AdmissionReview
			if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
				http.Error(rw, "bad review", http.StatusBadRequest)
				return
			}
			w.mu.Lock()
			w.got[path] = append(w.got[path], *review.Request)
			w.mu.Unlock()
			resp := h(r.Context(), review.Request)
			resp.UID = review.Request.UID
			review.Request, review.Response = nil, resp
			_ = json.NewEncoder(rw).Encode(&review)
		})
	}
	w.srv = httptest.NewTLSServer(mux)
	t.Cleanup(func() { close(w.unstop); w.srv.Close() })
	w.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: w.srv.Certificate().Raw})
	return w
}

// requests are the AdmissionRequests path received, and forgets them.
func (w *webhookServer) requests(path string) []admissionv1.AdmissionRequest {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.got[path]
	delete(w.got, path)
	return r
}

func (w *webhookServer) clientConfig(path string) admissionregistrationv1.WebhookClientConfig {
	return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(w.srv.URL + path), CABundle: w.caPEM}
}

// webhookRules match writes of databases (and their status, with
// resources).
func webhookRules(ops []admissionregistrationv1.OperationType, resources ...string) []admissionregistrationv1.RuleWithOperations {
	return []admissionregistrationv1.RuleWithOperations{{Operations: ops, Rule: admissionregistrationv1.Rule{
		APIGroups: []string{examplev1.GroupName}, APIVersions: []string{"v1"}, Resources: resources, Scope: ptr.To(admissionregistrationv1.NamespacedScope),
	}}}
}

var createUpdate = []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}

// validatingWebhook is a validating webhook of the example's databases.
func validatingWebhook(name string, cc admissionregistrationv1.WebhookClientConfig, fail admissionregistrationv1.FailurePolicyType, timeout int32, resources ...string) admissionregistrationv1.ValidatingWebhook {
	return admissionregistrationv1.ValidatingWebhook{
		Name: name, ClientConfig: cc, Rules: webhookRules(createUpdate, resources...),
		FailurePolicy: ptr.To(fail), MatchPolicy: ptr.To(admissionregistrationv1.Equivalent),
		NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
		SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), TimeoutSeconds: ptr.To(timeout),
		AdmissionReviewVersions: []string{"v1"},
	}
}

func allow(context.Context, *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Allowed: true}
}

// TestAdmissionWebhooks: a mutating and a validating webhook on 127.0.0.1
// see the AdmissionReview they should (old object, user, dryRun,
// subresource); the mutating one's patch is applied and then validated;
// the validating one's refusal and warnings reach the client.
func TestAdmissionWebhooks(t *testing.T) {
	e, k := startPolicyServer(t)
	ctx := t.Context()
	hooks := startWebhookServer(t, map[string]reviewer{
		"/mutate": func(_ context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			var db examplev1.Database
			_ = json.Unmarshal(req.Object.Raw, &db)
			patch := `[{"op":"add","path":"/metadata/labels/checked","value":"yes"}]`
			if db.Labels["patch"] == "invalid" {
				patch = `[{"op":"replace","path":"/spec/replicas","value":-5}]`
			}
			return &admissionv1.AdmissionResponse{Allowed: true, Patch: []byte(patch), PatchType: ptr.To(admissionv1.PatchTypeJSONPatch)}
		},
		"/validate": func(_ context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			var db examplev1.Database
			_ = json.Unmarshal(req.Object.Raw, &db)
			if db.Spec.Engine == "mariadb" {
				return &admissionv1.AdmissionResponse{Result: &metav1.Status{Code: http.StatusForbidden, Message: "mariadb is not licensed"}}
			}
			return &admissionv1.AdmissionResponse{Allowed: true, Warnings: []string{"checked by the validating webhook"}}
		},
		"/status": allow,
	})
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "label"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "label.example.com", ClientConfig: hooks.clientConfig("/mutate"), Rules: webhookRules(createUpdate, "databases"),
			FailurePolicy: ptr.To(admissionregistrationv1.Fail), MatchPolicy: ptr.To(admissionregistrationv1.Equivalent),
			NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), TimeoutSeconds: ptr.To[int32](10),
			AdmissionReviewVersions: []string{"v1"}, ReinvocationPolicy: ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
		}},
	}
	if _, err := e.kc.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "engine"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			validatingWebhook("engine.example.com", hooks.clientConfig("/validate"), admissionregistrationv1.Fail, 10, "databases"),
			validatingWebhook("status.example.com", hooks.clientConfig("/status"), admissionregistrationv1.Fail, 10, "databases/status"),
		},
	}
	if _, err := e.kc.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mariadb := func() *examplev1.Database { db := newDatabase("probe"); db.Spec.Engine = "mariadb"; return db }
	e.waitFor("the validating webhook to refuse", mariadb, func(err error) bool { return apierrors.IsForbidden(err) })
	eventually(t, "the mutating webhook to label", func(ctx context.Context) (bool, error) {
		db, err := e.cs.ExampleV1().Databases("shop").Create(ctx, newDatabase("probe"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil && db.Labels["checked"] == "yes", err
	})
	hooks.requests("/mutate")
	hooks.requests("/validate")
	e.warnings.take()

	// A create: mutated, then validated, as the writer.
	db, err := e.cs.ExampleV1().Databases("shop").Create(ctx, newDatabase("orders"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if db.Labels["checked"] != "yes" {
		t.Fatalf("the mutating webhook's label: %v", db.Labels)
	}
	if w := e.warnings.take(); len(w) != 1 || w[0] != "checked by the validating webhook" {
		t.Fatalf("warnings: %q", w)
	}
	m, v := hooks.requests("/mutate"), hooks.requests("/validate")
	if len(m) != 1 || len(v) != 1 {
		t.Fatalf("calls: mutate %d, validate %d", len(m), len(v))
	}
	for _, req := range []admissionv1.AdmissionRequest{m[0], v[0]} {
		if req.Operation != admissionv1.Create || req.Kind.Kind != "Database" || req.Resource.Resource != "databases" ||
			req.SubResource != "" || req.Name != "orders" || req.Namespace != "shop" || len(req.OldObject.Raw) != 0 ||
			ptr.Deref(req.DryRun, true) || req.UserInfo.Username != "system:apiserver" || !strings.Contains(string(req.Options.Raw), `"CreateOptions"`) {
			t.Fatalf("create's review: %+v", req)
		}
	}
	// The validating webhook sees the object as stored: mutated, with
	// the fields the server sets.
	var validated examplev1.Database
	_ = json.Unmarshal(v[0].Object.Raw, &validated)
	if validated.Labels["checked"] != "yes" || validated.UID == "" {
		t.Fatalf("the validating webhook's object: %s", v[0].Object.Raw)
	}

	// An update in dry run: the old object and dryRun are sent.
	db.Spec.Replicas = 4
	if _, err := e.cs.ExampleV1().Databases("shop").Update(ctx, db, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	v = hooks.requests("/validate")
	if len(v) != 1 || v[0].Operation != admissionv1.Update || len(v[0].OldObject.Raw) == 0 || !ptr.Deref(v[0].DryRun, false) {
		t.Fatalf("update's review: %+v", v)
	}

	// A refusal, with the webhook's message.
	_, err = e.cs.ExampleV1().Databases("shop").Create(ctx, func() *examplev1.Database { d := mariadb(); d.Name = "legacy"; return d }(), metav1.CreateOptions{})
	want := `admission webhook "engine.example.com" denied the request: mariadb is not licensed`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("create of mariadb: %v, want %s", err, want)
	}
	out := k.runFail("-n", "shop", "patch", "database", "orders", "--type=merge", "-p", `{"spec":{"engine":"mariadb"}}`)
	if !strings.Contains(out, want) {
		t.Fatalf("kubectl patch: %s", out)
	}

	// A patch that makes the object invalid is refused by its validation.
	bad := newDatabase("bad")
	bad.Labels["patch"] = "invalid"
	if _, err := e.cs.ExampleV1().Databases("shop").Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.replicas") {
		t.Fatalf("create patched to -5 replicas: %v", err)
	}

	// The status webhook is called for status writes only.
	hooks.requests("/status")
	hooks.requests("/validate")
	cur, err := e.cs.ExampleV1().Databases("shop").Get(ctx, "orders", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Status.Phase = "Ready"
	if _, err := e.cs.ExampleV1().Databases("shop").UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if s := hooks.requests("/status"); len(s) != 1 || s[0].SubResource != "status" || s[0].Kind.Kind != "Database" {
		t.Fatalf("status writes' reviews: %+v", s)
	}
	if v := hooks.requests("/validate"); len(v) != 0 {
		t.Fatalf("the main resource's webhook saw a status write: %+v", v)
	}

	// kube-apiserver's webhook metrics.
	if n := metric(t, e.cfg, "apiserver_admission_webhook_admission_duration_seconds_count", `name="engine.example.com"`, `type="validating"`, `rejected="true"`); n < 2 {
		t.Fatalf("the refusing webhook's calls recorded: %v", n)
	}
	if n := metric(t, e.cfg, "apiserver_admission_webhook_rejection_count", `name="engine.example.com"`, `error_type="no_error"`, `rejection_code="403"`); n < 2 {
		t.Fatalf("the webhook's rejections recorded: %v", n)
	}
	if n := metric(t, e.cfg, "apiserver_admission_controller_admission_duration_seconds_count", `name="MutatingAdmissionWebhook"`, `type="admit"`); n == 0 {
		t.Fatalf("the mutating webhook plugin's calls are not recorded")
	}
}

// TestAdmissionWebhookFailures: with the webhook down, failurePolicy Fail
// refuses writes and Ignore lets them through; a webhook slower than its
// timeoutSeconds fails as the policy says.
func TestAdmissionWebhookFailures(t *testing.T) {
	e, _ := startPolicyServer(t)
	ctx := t.Context()
	release := make(chan struct{})
	defer close(release)
	hooks := startWebhookServer(t, map[string]reviewer{
		"/slow": func(ctx context.Context, _ *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			select { // past the server's deadline, which ends the call
			case <-ctx.Done():
			case <-release:
			}
			return &admissionv1.AdmissionResponse{Allowed: true}
		},
	})
	down := httptest.NewTLSServer(http.NotFoundHandler())
	downCfg := admissionregistrationv1.WebhookClientConfig{URL: ptr.To(down.URL + "/validate"),
		CABundle: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: down.Certificate().Raw})}
	down.Close()

	create := func(name string, hook admissionregistrationv1.ValidatingWebhook) {
		hook.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"case": name}}
		if _, err := e.kc.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: name}, Webhooks: []admissionregistrationv1.ValidatingWebhook{hook},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("down-fail", validatingWebhook("fail.example.com", downCfg, admissionregistrationv1.Fail, 10, "databases"))
	create("down-ignore", validatingWebhook("ignore.example.com", downCfg, admissionregistrationv1.Ignore, 10, "databases"))
	create("slow", validatingWebhook("slow.example.com", hooks.clientConfig("/slow"), admissionregistrationv1.Fail, 1, "databases"))
	labelled := func(c string) func() *examplev1.Database {
		return func() *examplev1.Database { db := newDatabase("probe-" + c); db.Labels["case"] = c; return db }
	}
	e.waitFor("the webhook down to refuse", labelled("down-fail"), func(err error) bool {
		return apierrors.IsInternalError(err) && strings.Contains(err.Error(), `failed calling webhook "fail.example.com"`)
	})
	if _, err := e.cs.ExampleV1().Databases("shop").Create(ctx, labelled("down-ignore")(), metav1.CreateOptions{}); err != nil {
		t.Fatalf("failurePolicy Ignore with the webhook down: %v", err)
	}
	e.waitFor("the slow webhook to time out", labelled("slow"), func(err error) bool {
		return apierrors.IsInternalError(err) && strings.Contains(err.Error(), `failed calling webhook "slow.example.com"`) &&
			strings.Contains(err.Error(), "context deadline exceeded")
	})
	if n := metric(t, e.cfg, "apiserver_admission_webhook_fail_open_count", `name="ignore.example.com"`); n == 0 {
		t.Fatal("the webhook that failed open is not counted")
	}
	if n := metric(t, e.cfg, "apiserver_admission_webhook_rejection_count", `name="fail.example.com"`, `error_type="calling_webhook_error"`); n == 0 {
		t.Fatal("the webhook that failed closed is not counted")
	}
	// A webhook cannot block writes of webhook configurations: the one
	// that refuses everything is deleted all the same.
	if err := e.kc.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, "down-fail", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestAdmissionWebhookReinvocation: a mutating webhook with
// reinvocationPolicy IfNeeded is called again when a later one changed
// the object; with Never it is not.
func TestAdmissionWebhookReinvocation(t *testing.T) {
	e, _ := startPolicyServer(t)
	ctx := t.Context()
	label := func(key string) reviewer {
		return func(_ context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			var db examplev1.Database
			_ = json.Unmarshal(req.Object.Raw, &db)
			if db.Labels[key] == "yes" {
				return &admissionv1.AdmissionResponse{Allowed: true}
			}
			patch := `[{"op":"add","path":"/metadata/labels/` + key + `","value":"yes"}]`
			return &admissionv1.AdmissionResponse{Allowed: true, Patch: []byte(patch), PatchType: ptr.To(admissionv1.PatchTypeJSONPatch)}
		}
	}
	hooks := startWebhookServer(t, map[string]reviewer{"/first": label("first"), "/second": label("second")})
	mutating := func(config, path string, policy admissionregistrationv1.ReinvocationPolicyType) {
		_, err := e.kc.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: config},
			Webhooks: []admissionregistrationv1.MutatingWebhook{{
				Name: config + ".example.com", ClientConfig: hooks.clientConfig(path), Rules: webhookRules(createUpdate, "databases"),
				FailurePolicy: ptr.To(admissionregistrationv1.Fail), MatchPolicy: ptr.To(admissionregistrationv1.Equivalent),
				NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
				SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), TimeoutSeconds: ptr.To[int32](10),
				AdmissionReviewVersions: []string{"v1"}, ReinvocationPolicy: ptr.To(policy),
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Webhooks are called in the order of their configurations' names.
	mutating("a-first", "/first", admissionregistrationv1.IfNeededReinvocationPolicy)
	mutating("b-second", "/second", admissionregistrationv1.NeverReinvocationPolicy)
	eventually(t, "both webhooks to label", func(ctx context.Context) (bool, error) {
		db, err := e.cs.ExampleV1().Databases("shop").Create(ctx, newDatabase("probe"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil && db.Labels["first"] == "yes" && db.Labels["second"] == "yes", err
	})
	hooks.requests("/first")
	hooks.requests("/second")
	if _, err := e.cs.ExampleV1().Databases("shop").Create(ctx, newDatabase("orders"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first, second := hooks.requests("/first"), hooks.requests("/second")
	if len(first) != 2 || len(second) != 1 {
		t.Fatalf("calls: first (IfNeeded) %d, want 2; second (Never) %d, want 1", len(first), len(second))
	}
	var again examplev1.Database
	_ = json.Unmarshal(first[1].Object.Raw, &again)
	if again.Labels["second"] != "yes" {
		t.Fatalf("the reinvoked webhook did not see the later change: %v", again.Labels)
	}
}
