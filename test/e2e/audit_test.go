package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/testserver"
)

// auditPolicy audits ConfigMaps and SelfSubjectAccessReviews at
// RequestResponse, Secrets at Request,
// Leases at Metadata, Events not at all, and everything else at Metadata.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: RequestResponse
  resources: [{group: "", resources: ["configmaps"]}, {group: "authorization.k8s.io", resources: ["selfsubjectaccessreviews"]}]
- level: Request
  resources: [{group: "", resources: ["secrets"]}]
- level: None
  resources: [{group: "", resources: ["events"]}]
- level: Metadata
`

// withAuditFlags configures audit as the command line would: the server's
// own flags (Options.AddFlags), parsed from args, with policy written to
// a file for --audit-policy-file.
func withAuditFlags(t *testing.T, policy string, args ...string) testserver.Option {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit-policy.yaml")
	if err := os.WriteFile(path, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	args = append(args, "--audit-policy-file="+path)
	return func(o *apiserver.Options) {
		fs := pflag.NewFlagSet("apiloom", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatalf("audit flags %q: %v", args, err)
		}
	}
}

// auditLog is the audit log file a server writes (--audit-log-path,
// --audit-log-format=json).
type auditLog struct {
	t    *testing.T
	path string
}

func newAuditLog(t *testing.T) (*auditLog, testserver.Option) {
	l := &auditLog{t: t, path: filepath.Join(t.TempDir(), "audit.log")}
	return l, withAuditFlags(t, auditPolicy, "--audit-log-path="+l.path, "--audit-log-format=json")
}

// events reads every event written so far.
func (l *auditLog) events() []auditv1.Event {
	l.t.Helper()
	data, err := os.ReadFile(l.path)
	if err != nil {
		l.t.Fatal(err)
	}
	var out []auditv1.Event
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev auditv1.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			l.t.Fatalf("audit log line %q: %v", sc.Text(), err)
		}
		out = append(out, ev)
	}
	return out
}

// wait returns the event of the request that match selects at stage,
// waiting for it: the ResponseComplete event is written once the
// response is, not necessarily before the client reads it.
func (l *auditLog) wait(what string, stage auditv1.Stage, match func(auditv1.Event) bool) auditv1.Event {
	l.t.Helper()
	var found auditv1.Event
	eventually(l.t, "audit event: "+what, func(context.Context) (bool, error) {
		for _, ev := range l.events() {
			if ev.Stage == stage && match(ev) {
				found = ev
				return true, nil
			}
		}
		return false, nil
	})
	return found
}

// verbOn matches the events of verb on resource in namespace, named name
// ("" for any).
func verbOn(verb, resource, namespace, name string) func(auditv1.Event) bool {
	return func(ev auditv1.Event) bool {
		r := ev.ObjectRef
		return ev.Verb == verb && r != nil && r.Resource == resource && r.Namespace == namespace && (name == "" || r.Name == name)
	}
}

// checkLevel fails unless ev carries what level promises: the request and
// response objects from Request and RequestResponse on.
func checkLevel(t *testing.T, ev auditv1.Event, level auditv1.Level, wantRequest, wantResponse bool) {
	t.Helper()
	if ev.Level != level {
		t.Errorf("%s %s: level %s, want %s", ev.Verb, ev.RequestURI, ev.Level, level)
	}
	if got := ev.RequestObject != nil; got != wantRequest {
		t.Errorf("%s %s: request object %v, want %v", ev.Verb, ev.RequestURI, got, wantRequest)
	}
	if got := ev.ResponseObject != nil; got != wantResponse {
		t.Errorf("%s %s: response object %v, want %v", ev.Verb, ev.RequestURI, got, wantResponse)
	}
	if ev.User.Username == "" || len(ev.SourceIPs) == 0 || ev.UserAgent == "" || ev.AuditID == "" || ev.ResponseStatus == nil {
		t.Errorf("%s %s: user %q, sourceIPs %v, userAgent %q, auditID %q, status %v", ev.Verb, ev.RequestURI, ev.User.Username, ev.SourceIPs, ev.UserAgent, ev.AuditID, ev.ResponseStatus)
	}
}

// TestAuditVerbs: every verb on ConfigMaps is audited at RequestResponse
// with the objects a verb has; Secrets at Request have no response
// object, Leases at Metadata neither object, Events none at all; a watch
// has its three stages.
func TestAuditVerbs(t *testing.T) {
	log, opt := newAuditLog(t)
	ts, _ := startServer(t, opt)
	ts.CreateNamespaces(t, "audit")
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()
	cms := kc.CoreV1().ConfigMaps("audit")

	w, err := cms.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	<-w.ResultChan()
	if _, err := cms.Get(ctx, "a", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "w"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Patch(ctx, "a", types.MergePatchType, []byte(`{"data":{"p":"1"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	w.Stop()

	create := log.wait("create", auditv1.StageResponseComplete, verbOn("create", "configmaps", "audit", "a"))
	checkLevel(t, create, auditv1.LevelRequestResponse, true, true)
	if create.ResponseStatus.Code != 201 || create.ObjectRef.APIVersion != "v1" || create.ObjectRef.APIGroup != "" {
		t.Errorf("create: status %v, objectRef %+v", create.ResponseStatus, create.ObjectRef)
	}
	if !strings.Contains(string(create.RequestObject.Raw), `"k":"v"`) || !strings.Contains(string(create.ResponseObject.Raw), `"resourceVersion"`) {
		t.Errorf("create: request %s, response %s", create.RequestObject.Raw, create.ResponseObject.Raw)
	}
	get := log.wait("get", auditv1.StageResponseComplete, verbOn("get", "configmaps", "audit", "a"))
	checkLevel(t, get, auditv1.LevelRequestResponse, false, true)
	list := log.wait("list", auditv1.StageResponseComplete, verbOn("list", "configmaps", "audit", ""))
	checkLevel(t, list, auditv1.LevelRequestResponse, false, true)
	if !strings.Contains(string(list.ResponseObject.Raw), `"ConfigMapList"`) {
		t.Errorf("list response %s", list.ResponseObject.Raw)
	}
	update := log.wait("update", auditv1.StageResponseComplete, verbOn("update", "configmaps", "audit", "a"))
	checkLevel(t, update, auditv1.LevelRequestResponse, true, true)
	patch := log.wait("patch", auditv1.StageResponseComplete, verbOn("patch", "configmaps", "audit", "a"))
	checkLevel(t, patch, auditv1.LevelRequestResponse, true, true)
	if string(patch.RequestObject.Raw) != `{"data":{"p":"1"}}` {
		t.Errorf("patch request object %s, want the patch", patch.RequestObject.Raw)
	}
	del := log.wait("delete", auditv1.StageResponseComplete, verbOn("delete", "configmaps", "audit", "a"))
	checkLevel(t, del, auditv1.LevelRequestResponse, true, true)
	if !strings.Contains(string(del.RequestObject.Raw), `"DeleteOptions"`) {
		t.Errorf("delete request object %s", del.RequestObject.Raw)
	}
	dc := log.wait("deletecollection", auditv1.StageResponseComplete, verbOn("deletecollection", "configmaps", "audit", ""))
	checkLevel(t, dc, auditv1.LevelRequestResponse, true, true)

	// The watch: RequestReceived, ResponseStarted when it starts,
	// ResponseComplete when it ends.
	started := log.wait("watch started", auditv1.StageResponseStarted, verbOn("watch", "configmaps", "audit", ""))
	done := log.wait("watch complete", auditv1.StageResponseComplete, func(ev auditv1.Event) bool { return ev.AuditID == started.AuditID })
	if started.ResponseStatus == nil || started.ResponseStatus.Code != 200 || done.ResponseObject != nil {
		t.Errorf("watch: started %v, complete %+v", started.ResponseStatus, done)
	}
	// Complete when the watch ended, after the requests it saw, not when
	// its handler returned (--http2-server=apiloom carries its body after).
	if !dc.StageTimestamp.After(started.StageTimestamp.Time) || done.StageTimestamp.Before(&dc.StageTimestamp) {
		t.Errorf("watch started %v, completed %v; the deletecollection before its end completed %v", started.StageTimestamp, done.StageTimestamp, dc.StageTimestamp)
	}
	log.wait("watch received", auditv1.StageRequestReceived, func(ev auditv1.Event) bool { return ev.AuditID == started.AuditID })

	// A review, served by server/reviews, has both objects too.
	if _, err := kc.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "configmaps"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	review := log.wait("review", auditv1.StageResponseComplete, verbOn("create", "selfsubjectaccessreviews", "", ""))
	checkLevel(t, review, auditv1.LevelRequestResponse, true, true)
	if !strings.Contains(string(review.ResponseObject.Raw), `"allowed":true`) {
		t.Errorf("review response %s", review.ResponseObject.Raw)
	}

	// Request level: the request object only.
	if _, err := kc.CoreV1().Secrets("audit").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	checkLevel(t, log.wait("secret create", auditv1.StageResponseComplete, verbOn("create", "secrets", "audit", "s")), auditv1.LevelRequest, true, false)
	// Metadata: neither.
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l"}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("me")}}
	if _, err := kc.CoordinationV1().Leases("audit").Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	le := log.wait("lease create", auditv1.StageResponseComplete, verbOn("create", "leases", "audit", "l"))
	checkLevel(t, le, auditv1.LevelMetadata, false, false)
	if le.ObjectRef.APIGroup != "coordination.k8s.io" || le.ObjectRef.APIVersion != "v1" {
		t.Errorf("lease objectRef %+v", le.ObjectRef)
	}
	// None: no event at all (the Secret after it is, so the log is
	// caught up).
	if _, err := kc.CoreV1().Events("audit").Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e"},
		InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: "audit", Name: "a"}, Reason: "R", Message: "m", Type: "Normal"}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kc.CoreV1().Secrets("audit").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	log.wait("the secret after", auditv1.StageResponseComplete, verbOn("create", "secrets", "audit", "after"))
	for _, ev := range log.events() {
		if ev.ObjectRef != nil && ev.ObjectRef.Resource == "events" {
			t.Errorf("an event of level None: %s %s", ev.Verb, ev.RequestURI)
		}
	}
}

// TestAuditDenied: a 401 (bad token) and a 403 (a user RBAC allows
// nothing) are audited with their codes; impersonation shows the
// impersonated user; the Audit-ID is echoed and taken from the request.
func TestAuditDenied(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokens, []byte("alice-token-123,alice,alice-uid\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log, opt := newAuditLog(t)
	ts, _ := startServer(t, opt, testserver.WithTokenAuthFile(tokens))
	ts.CreateNamespaces(t, "audit")
	ctx := t.Context()

	alice := &rest.Config{Host: ts.Config.Host, BearerToken: "alice-token-123", TLSClientConfig: ts.Config.TLSClientConfig}
	if _, err := kubernetes.NewForConfigOrDie(alice).CoreV1().ConfigMaps("audit").Get(ctx, "x", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("alice: %v, want Forbidden", err)
	}
	forbidden := log.wait("403", auditv1.StageResponseComplete, func(ev auditv1.Event) bool { return ev.User.Username == "alice" })
	if forbidden.ResponseStatus.Code != 403 || forbidden.Verb != "get" || forbidden.ObjectRef.Name != "x" || forbidden.ResponseStatus.Reason != metav1.StatusReasonForbidden {
		t.Errorf("403 event: %+v", forbidden)
	}

	bad := &rest.Config{Host: ts.Config.Host, BearerToken: "wrong-token", TLSClientConfig: ts.Config.TLSClientConfig}
	if _, err := kubernetes.NewForConfigOrDie(bad).CoreV1().ConfigMaps("audit").List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Fatalf("bad token: %v, want Unauthorized", err)
	}
	unauth := log.wait("401", auditv1.StageResponseStarted, func(ev auditv1.Event) bool {
		return ev.ResponseStatus != nil && ev.ResponseStatus.Code == 401
	})
	if unauth.Verb != "list" || unauth.ObjectRef == nil || unauth.ObjectRef.Resource != "configmaps" {
		t.Errorf("401 event: %+v", unauth)
	}

	imp := rest.CopyConfig(ts.Config)
	imp.Impersonate = rest.ImpersonationConfig{UserName: "bob", Groups: []string{"system:masters"}}
	if _, err := kubernetes.NewForConfigOrDie(imp).CoreV1().ConfigMaps("audit").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "by-bob"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	asBob := log.wait("impersonated", auditv1.StageResponseComplete, verbOn("create", "configmaps", "audit", "by-bob"))
	if asBob.ImpersonatedUser == nil || asBob.ImpersonatedUser.Username != "bob" || asBob.User.Username == "bob" {
		t.Errorf("impersonation: user %+v, impersonated %+v", asBob.User, asBob.ImpersonatedUser)
	}

	// The Audit-ID a request brings is its event's and is echoed; one
	// without gets a new one.
	hc, err := rest.HTTPClientFor(ts.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, given := range []string{"my-audit-id", ""} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.Config.Host+"/api/v1/namespaces/audit/configmaps/by-bob", nil)
		if err != nil {
			t.Fatal(err)
		}
		if given != "" {
			req.Header.Set("Audit-ID", given)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		id := resp.Header.Get("Audit-Id")
		if id == "" || (given != "" && id != given) || resp.StatusCode != http.StatusOK {
			t.Fatalf("Audit-ID %q sent, %q echoed (%s)", given, id, resp.Status)
		}
		log.wait("Audit-ID "+id, auditv1.StageResponseComplete, func(ev auditv1.Event) bool { return string(ev.AuditID) == id && ev.Verb == "get" })
	}
}

// TestAuditAdmissionAnnotations: a ValidatingAdmissionPolicy bound with
// the Audit action puts its failure and its auditAnnotations into the
// write's audit event.
func TestAuditAdmissionAnnotations(t *testing.T) {
	log, opt := newAuditLog(t)
	ts, _ := startServer(t, opt)
	ts.CreateNamespaces(t, "audit")
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()
	rules := &admissionregistrationv1.MatchResources{
		NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
		ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
		}}},
	}
	if _, err := kc.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "labelled"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail), MatchConstraints: rules,
			Validations:      []admissionregistrationv1.Validation{{Expression: "has(object.metadata.labels)", Message: "needs labels"}},
			AuditAnnotations: []admissionregistrationv1.AuditAnnotation{{Key: "name", ValueExpression: "string(object.metadata.name)"}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kc.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "labelled"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "labelled",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The policy applies once the server's informers have it: probe with
	// dry-run creates until one's event carries the annotation.
	var annotated auditv1.Event
	n := 0
	eventually(t, "the policy's audit annotation", func(ctx context.Context) (bool, error) {
		n++
		name := fmt.Sprintf("probe-%d", n)
		if _, err := kc.CoreV1().ConfigMaps("audit").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}},
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			return false, err
		}
		ev := log.wait(name, auditv1.StageResponseComplete, verbOn("create", "configmaps", "audit", name))
		annotated = ev
		_, ok := ev.Annotations["validation.policy.admission.k8s.io/validation_failure"]
		return ok, nil
	})
	if !strings.Contains(annotated.Annotations["validation.policy.admission.k8s.io/validation_failure"], "needs labels") ||
		!strings.HasPrefix(annotated.Annotations["labelled/name"], "probe-") {
		t.Errorf("annotations %v", annotated.Annotations)
	}
}

// webhookSink is an audit webhook backend: it records the events of the
// batches it receives, or, hanging, answers none until the test ends.
type webhookSink struct {
	mu     sync.Mutex
	events []auditv1.Event
	hang   chan struct{} // nil: answer at once
}

func (s *webhookSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.hang != nil {
		select {
		case <-s.hang:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	var list auditv1.EventList
	if err := json.NewDecoder(r.Body).Decode(&list); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.events = append(s.events, list.Items...)
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (s *webhookSink) has(match func(auditv1.Event) bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.events, match)
}

// webhookConfig writes the kubeconfig --audit-webhook-config-file reads,
// pointing at url.
func webhookConfig(t *testing.T, url string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit-webhook.kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: sink
  cluster: {server: %q}
contexts:
- name: sink
  context: {cluster: sink, user: ""}
current-context: sink
users: []
`, url)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAuditWebhook: the webhook backend receives the events in batches.
func TestAuditWebhook(t *testing.T) {
	sink := &webhookSink{}
	srv := httptest.NewServer(sink)
	t.Cleanup(srv.Close)
	ts, _ := startServer(t, withAuditFlags(t, auditPolicy, "--audit-webhook-config-file="+webhookConfig(t, srv.URL), "--audit-webhook-batch-max-wait=50ms"))
	ts.CreateNamespaces(t, "audit")
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	if _, err := kc.CoreV1().ConfigMaps("audit").Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "sent"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the webhook's event", func(context.Context) (bool, error) {
		return sink.has(func(ev auditv1.Event) bool {
			return verbOn("create", "configmaps", "audit", "sent")(ev) && ev.Stage == auditv1.StageResponseComplete && ev.RequestObject != nil && ev.ResponseObject != nil
		}), nil
	})
}

// TestAuditWebhookDown: with a webhook backend that hangs or whose port
// is closed, in batch mode (the default), every write succeeds and is
// stored, at a rate logged against audit off; events that do not fit the
// buffer are dropped and counted in apiserver_audit_error_total.
func TestAuditWebhookDown(t *testing.T) {
	const writes = 200
	// rate creates the writes, checks they are all stored and returns
	// creates/s; hang, when not nil, is closed before the server stops,
	// so that its shutdown does not wait on a hanging batch.
	rate := func(hang chan struct{}, opts ...testserver.Option) (float64, float64) {
		ts, _ := startServer(t, opts...)
		if hang != nil {
			t.Cleanup(func() { close(hang) })
		}
		ts.CreateNamespaces(t, "audit")
		kc := kubernetes.NewForConfigOrDie(ts.Config)
		start := time.Now()
		for i := range writes {
			if _, err := kc.CoreV1().ConfigMaps("audit").Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}, metav1.CreateOptions{}); err != nil {
				t.Fatalf("write %d: %v", i, err)
			}
		}
		r := writes / time.Since(start).Seconds()
		list, err := kc.CoreV1().ConfigMaps("audit").List(t.Context(), metav1.ListOptions{})
		if err != nil || len(list.Items) != writes {
			t.Fatalf("stored %d of %d writes: %v", len(list.Items), writes, err)
		}
		// The counter is k8s.io/apiserver's global: every server of the
		// test process adds to it.
		return r, metric(t, ts.Config, "apiserver_audit_error_total", `plugin="buffered"`)
	}
	off, before := rate(nil)

	sink := &webhookSink{hang: make(chan struct{})}
	srv := httptest.NewServer(sink)
	t.Cleanup(srv.Close)
	// Batches of one event: the sender's throttle (10 batches/s) holds
	// the buffer of 10 back, which fills and drops.
	hanging, after := rate(sink.hang, withAuditFlags(t, auditPolicy, "--audit-webhook-config-file="+webhookConfig(t, srv.URL),
		"--audit-webhook-batch-buffer-size=10", "--audit-webhook-batch-max-size=1"))

	closed := httptest.NewServer(http.NotFoundHandler())
	url := closed.URL
	closed.Close()
	if after <= before {
		t.Errorf("apiserver_audit_error_total{plugin=buffered} %v before, %v after; want events dropped by a full buffer", before, after)
	}
	down, _ := rate(nil, withAuditFlags(t, auditPolicy, "--audit-webhook-config-file="+webhookConfig(t, url), "--audit-webhook-batch-buffer-size=10"))
	// Once more, as the machine's load changes between the servers.
	off2, _ := rate(nil)
	t.Logf("creates/s: audit off %.0f and %.0f, webhook hanging %.0f (%.2fx the first), webhook port closed %.0f (%.2fx); events dropped %.0f",
		off, off2, hanging, hanging/off, down, down/off, after-before)
}
