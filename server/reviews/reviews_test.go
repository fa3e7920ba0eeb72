package reviews

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// clientset is client-go's typed client for srv, in JSON or protobuf.
func clientset(t *testing.T, url string, protobuf bool) kubernetes.Interface {
	t.Helper()
	cfg := &rest.Config{Host: url}
	if protobuf {
		cfg.ContentType = runtime.ContentTypeProtobuf
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSelfSubjectAccessReview: the review asks the authorizer about the
// request's user, with the spec's attributes (an empty version matching
// every version), and words each decision as kube-apiserver does: allowed,
// denied with the authorizer's reason, neither for no opinion, and the
// authorizer's error as evaluationError. Through client-go's typed client,
// in JSON and in protobuf.
func TestSelfSubjectAccessReview(t *testing.T) {
	for _, tc := range []struct {
		name     string
		decision authorizer.Decision
		reason   string
		err      error
		want     authorizationv1.SubjectAccessReviewStatus
	}{
		{"allowed", authorizer.DecisionAllow, "RBAC: allowed by ClusterRoleBinding \"x\"", nil,
			authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: "RBAC: allowed by ClusterRoleBinding \"x\""}},
		{"denied", authorizer.DecisionDeny, "forbidden by policy", nil,
			authorizationv1.SubjectAccessReviewStatus{Denied: true, Reason: "forbidden by policy"}},
		{"no opinion", authorizer.DecisionNoOpinion, "", nil,
			authorizationv1.SubjectAccessReviewStatus{}},
		{"error", authorizer.DecisionNoOpinion, "", errBoom,
			authorizationv1.SubjectAccessReviewStatus{EvaluationError: errBoom.Error()}},
	} {
		for _, protobuf := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				auth := &fakeAuthorizer{decision: tc.decision, reason: tc.reason, err: tc.err}
				srv := reviewServer(t, auth, &fakeResolver{}, alice)
				got, err := clientset(t, srv.URL, protobuf).AuthorizationV1().SelfSubjectAccessReviews().Create(t.Context(),
					&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
						ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "ns", Verb: "update", Group: "apps", Resource: "deployments", Subresource: "scale", Name: "web"},
					}}, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != tc.want {
					t.Errorf("status = %+v, want %+v", got.Status, tc.want)
				}
				if got.Spec.ResourceAttributes == nil || got.Spec.ResourceAttributes.Name != "web" {
					t.Errorf("spec not echoed: %+v", got.Spec)
				}
				a := auth.lastAsked(t)
				if a.GetUser().GetName() != "alice" || a.GetVerb() != "update" || a.GetNamespace() != "ns" || a.GetAPIGroup() != "apps" ||
					a.GetAPIVersion() != "*" || a.GetResource() != "deployments" || a.GetSubresource() != "scale" || a.GetName() != "web" || !a.IsResourceRequest() {
					t.Errorf("asked %+v", a)
				}
			})
		}
	}
}

// TestSelfSubjectAccessReviewNonResource: a non-resource review asks about
// the path and verb.
func TestSelfSubjectAccessReviewNonResource(t *testing.T) {
	auth := &fakeAuthorizer{decision: authorizer.DecisionAllow}
	srv := reviewServer(t, auth, &fakeResolver{}, alice)
	_, err := clientset(t, srv.URL, false).AuthorizationV1().SelfSubjectAccessReviews().Create(t.Context(),
		&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"},
		}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatal(err)
	}
	if a := auth.lastAsked(t); a.IsResourceRequest() || a.GetPath() != "/metrics" || a.GetVerb() != "get" || a.GetUser().GetName() != "alice" {
		t.Errorf("asked %+v", a)
	}
}

// TestSelectorParseErrors: selectors that do not parse are dropped from
// the question and named in evaluationError after the authorizer's error,
// partly or wholly as kube-apiserver words it.
func TestSelectorParseErrors(t *testing.T) {
	auth := &fakeAuthorizer{decision: authorizer.DecisionAllow, err: errBoom}
	srv := reviewServer(t, auth, &fakeResolver{}, alice)
	got, err := clientset(t, srv.URL, false).AuthorizationV1().SelfSubjectAccessReviews().Create(t.Context(),
		&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods",
				FieldSelector: &authorizationv1.FieldSelectorAttributes{RawSelector: "x"},
				LabelSelector: &authorizationv1.LabelSelectorAttributes{Requirements: []metav1.LabelSelectorRequirement{
					{Key: "a", Operator: metav1.LabelSelectorOpIn, Values: []string{"b"}},
					{Key: "c", Operator: "Bogus"},
				}},
			},
		}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := errBoom.Error() + "; spec.resourceAttributes.fieldSelector ignored due to parse error; spec.resourceAttributes.labelSelector partially ignored due to parse error"
	if got.Status.EvaluationError != want || !got.Status.Allowed {
		t.Errorf("status = %+v, want evaluationError %q", got.Status, want)
	}
	labels, _ := auth.lastAsked(t).GetLabelSelector()
	if len(labels) != 1 || labels[0].Key() != "a" {
		t.Errorf("label requirements asked = %v, want a in (b) alone", labels)
	}
}

// TestSubjectAccessReview: the review asks about the user the spec names,
// not the requester.
func TestSubjectAccessReview(t *testing.T) {
	auth := &fakeAuthorizer{decision: authorizer.DecisionDeny, reason: "no"}
	srv := reviewServer(t, auth, &fakeResolver{}, alice)
	got, err := clientset(t, srv.URL, true).AuthorizationV1().SubjectAccessReviews().Create(t.Context(),
		&authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: "bob", UID: "b-1", Groups: []string{"ops"}, Extra: map[string]authorizationv1.ExtraValue{"k": {"v"}},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "delete", Resource: "secrets", Version: "v1"},
		}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Status.Denied || got.Status.Reason != "no" || got.Status.Allowed {
		t.Errorf("status = %+v", got.Status)
	}
	a := auth.lastAsked(t)
	u := a.GetUser()
	if u.GetName() != "bob" || u.GetUID() != "b-1" || !slices.Equal(u.GetGroups(), []string{"ops"}) || !slices.Equal(u.GetExtra()["k"], []string{"v"}) || a.GetAPIVersion() != "v1" {
		t.Errorf("asked about %+v (%+v)", u, a)
	}
}

// TestLocalSubjectAccessReview: the review is answered within the URL's
// namespace, which its spec's must be.
func TestLocalSubjectAccessReview(t *testing.T) {
	auth := &fakeAuthorizer{decision: authorizer.DecisionAllow}
	srv := reviewServer(t, auth, &fakeResolver{}, alice)
	got, err := clientset(t, srv.URL, false).AuthorizationV1().LocalSubjectAccessReviews("team").Create(t.Context(),
		&authorizationv1.LocalSubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			Groups:             []string{"ops"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "team", Verb: "get", Resource: "configmaps"},
		}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Status.Allowed || got.Namespace != "team" {
		t.Errorf("got %+v", got)
	}
	if a := auth.lastAsked(t); a.GetNamespace() != "team" || a.GetUser().GetName() != "" || !slices.Equal(a.GetUser().GetGroups(), []string{"ops"}) {
		t.Errorf("asked %+v", a)
	}

	_, err = clientset(t, srv.URL, false).AuthorizationV1().LocalSubjectAccessReviews("team").Create(t.Context(),
		&authorizationv1.LocalSubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: "bob", ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "other", Verb: "get"},
		}}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || err.Error() != `.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace` {
		t.Errorf("spec in another namespace: %v", err)
	}
}

// TestSelfSubjectRulesReview: the review lists the resolver's rules for
// the request's user in the spec's namespace, with incomplete and the
// resolver's error as evaluationError, and echoes neither metadata nor
// spec, as kube-apiserver.
func TestSelfSubjectRulesReview(t *testing.T) {
	res := &fakeResolver{
		res: []authorizer.ResourceRuleInfo{&authorizer.DefaultResourceRuleInfo{
			Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{"p1"}}},
		nonRes:     []authorizer.NonResourceRuleInfo{&authorizer.DefaultNonResourceRuleInfo{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}},
		incomplete: true,
		err:        errBoom,
	}
	srv := reviewServer(t, &fakeAuthorizer{}, res, alice)
	got, err := clientset(t, srv.URL, true).AuthorizationV1().SelfSubjectRulesReviews().Create(t.Context(),
		&authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "team"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := authorizationv1.SubjectRulesReviewStatus{
		ResourceRules:    []authorizationv1.ResourceRule{{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{"p1"}}},
		NonResourceRules: []authorizationv1.NonResourceRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}},
		Incomplete:       true,
		EvaluationError:  errBoom.Error(),
	}
	gotJSON, _ := json.Marshal(got.Status)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) || got.Spec.Namespace != "" {
		t.Errorf("got %s (spec %+v), want %s", gotJSON, got.Spec, wantJSON)
	}
	if res.user.GetName() != "alice" || res.namespace != "team" {
		t.Errorf("resolver asked about %v in %q", res.user, res.namespace)
	}

	// No rules: empty lists, not null, as kube-apiserver answers.
	srv = reviewServer(t, &fakeAuthorizer{}, &fakeResolver{}, alice)
	code, body, _ := post(t, srv, "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", "application/json", `{"spec":{"namespace":"team"}}`)
	if code != http.StatusCreated || !strings.Contains(body, `"status":{"resourceRules":[],"nonResourceRules":[],"incomplete":false}`) {
		t.Errorf("no rules: %d %s", code, body)
	}
}

// TestSelfSubjectReview: the review tells the request's user who they
// are, whatever the body says, stamped with the time it was made.
func TestSelfSubjectReview(t *testing.T) {
	srv := reviewServer(t, &fakeAuthorizer{}, &fakeResolver{}, alice)
	got, err := clientset(t, srv.URL, true).AuthenticationV1().SelfSubjectReviews().Create(t.Context(),
		&authenticationv1.SelfSubjectReview{Status: authenticationv1.SelfSubjectReviewStatus{UserInfo: authenticationv1.UserInfo{Username: "mallory"}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u := got.Status.UserInfo
	if u.Username != "alice" || u.UID != "a-1" || !slices.Equal(u.Groups, alice.Groups) || !slices.Equal(u.Extra["scopes"], []string{"x", "y"}) ||
		!got.CreationTimestamp.Time.Equal(fixedAt) {
		t.Errorf("got %+v", got)
	}
}
