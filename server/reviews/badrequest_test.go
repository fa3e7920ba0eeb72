package reviews

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

const (
	ssar  = `"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview"`
	sar   = `"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview"`
	lsar  = `"apiVersion":"authorization.k8s.io/v1","kind":"LocalSubjectAccessReview"`
	authz = "/apis/authorization.k8s.io/v1/"
)

// TestBadRequests: each bad request gets the Status kube-apiserver v1.37
// answers (compared with a running one), and the authorizer is not asked.
func TestBadRequests(t *testing.T) {
	for _, tc := range []struct {
		name, path, contentType, body string
		code                          int32
		reason                        metav1.StatusReason
		message                       string
	}{
		{"no attributes", authz + "selfsubjectaccessreviews", "", `{` + ssar + `,"spec":{}}`, 422, metav1.StatusReasonInvalid,
			`.authorization.k8s.io "" is invalid: spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified`},
		{"both attributes", authz + "selfsubjectaccessreviews", "", `{` + ssar + `,"spec":{"resourceAttributes":{"verb":"get"},"nonResourceAttributes":{"path":"/x","verb":"get"}}}`, 422, metav1.StatusReasonInvalid,
			`.authorization.k8s.io "" is invalid: spec: Invalid value: {"Path":"/x","Verb":"get"}: exactly one of nonResourceAttributes or resourceAttributes must be specified`},
		{"metadata", authz + "selfsubjectaccessreviews", "", `{` + ssar + `,"metadata":{"name":"n","namespace":"q"},"spec":{"resourceAttributes":{"verb":"get"}}}`, 422, metav1.StatusReasonInvalid,
			`.authorization.k8s.io "" is invalid: metadata: Invalid value: {"name":"n"}: must be empty`},
		{"selectors", authz + "selfsubjectaccessreviews", "", `{` + ssar + `,"spec":{"resourceAttributes":{"verb":"get","labelSelector":{},"fieldSelector":{"rawSelector":"a=b","requirements":[{"key":"","operator":"In","values":["b"]}]}}}}`, 422, metav1.StatusReasonInvalid,
			`.authorization.k8s.io "" is invalid: [spec.resourceAttributes.fieldSelector.rawSelector: Invalid value: "a=b": may not specified at the same time as requirements, spec.resourceAttributes.fieldSelector.requirements[0].key: Required value: must be specified, spec.resourceAttributes.labelSelector.requirements: Required value: when spec.resourceAttributes.labelSelector is specified, requirements or rawSelector is required]`},
		{"no subject", authz + "subjectaccessreviews", "", `{` + sar + `,"spec":{"resourceAttributes":{"verb":"get"}}}`, 422, metav1.StatusReasonInvalid,
			`.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified`},
		{"local namespace", authz + "namespaces/ns1/localsubjectaccessreviews", "", `{` + lsar + `,"spec":{"user":"bob","resourceAttributes":{"verb":"get"}}}`, 422, metav1.StatusReasonInvalid,
			`.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "": must match metadata.namespace`},
		{"local metadata", authz + "namespaces/ns1/localsubjectaccessreviews", "", `{` + lsar + `,"metadata":{"name":"q"},"spec":{"resourceAttributes":{"verb":"get","namespace":"ns1"}}}`, 422, metav1.StatusReasonInvalid,
			`.authorization.k8s.io "" is invalid: [spec.user: Invalid value: "": at least one of user or group must be specified, metadata: Invalid value: {"name":"q","namespace":"ns1"}: must be empty except for namespace]`},
		{"local non-resource", authz + "namespaces/ns1/localsubjectaccessreviews", "", `{` + lsar + `,"spec":{"user":"bob","nonResourceAttributes":{"verb":"get","path":"/x"}}}`, 422, metav1.StatusReasonInvalid,
			`.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: {"Path":"/x","Verb":"get"}: disallowed on this kind of request`},
		{"local body namespace", authz + "namespaces/ns1/localsubjectaccessreviews", "", `{` + lsar + `,"metadata":{"namespace":"ns3"},"spec":{"user":"bob","resourceAttributes":{"verb":"get","namespace":"ns1"}}}`, 400, metav1.StatusReasonBadRequest,
			`the namespace of the provided object does not match the namespace sent on the request`},
		{"rules without namespace", authz + "selfsubjectrulesreviews", "", `{"spec":{}}`, 400, metav1.StatusReasonBadRequest, `no namespace on request`},
		{"not JSON", authz + "selfsubjectaccessreviews", "", `not json`, 400, metav1.StatusReasonBadRequest,
			`the object provided is unrecognized (must be of type SelfSubjectAccessReview): couldn't get version/kind; json parse error: invalid character 'o' in literal null (expecting 'u') (6e6f74206a736f6e)`},
		{"other kind", authz + "selfsubjectaccessreviews", "", `{` + sar + `,"spec":{"nonResourceAttributes":{"path":"/x","verb":"get"}}}`, 400, metav1.StatusReasonBadRequest,
			`SubjectAccessReview in version "v1" cannot be handled as a SelfSubjectAccessReview: converting (v1.SubjectAccessReview) to (authorization.SelfSubjectAccessReview): unknown conversion`},
		{"strict", authz + "selfsubjectaccessreviews?fieldValidation=Strict", "", `{` + ssar + `,"spec":{"bogus":1,"resourceAttributes":{"verb":"get"}}}`, 400, metav1.StatusReasonBadRequest,
			`SelfSubjectAccessReview in version "v1" cannot be handled as a SelfSubjectAccessReview: strict decoding error: unknown field "spec.bogus"`},
		{"dryRun", authz + "selfsubjectaccessreviews?dryRun=Foo", "", `{` + ssar + `,"spec":{"resourceAttributes":{"verb":"get"}}}`, 422, metav1.StatusReasonInvalid,
			`CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Foo"]: supported values: "All"`},
		{"fieldValidation", authz + "selfsubjectaccessreviews?fieldValidation=Bad", "", `{` + ssar + `,"spec":{"resourceAttributes":{"verb":"get"}}}`, 422, metav1.StatusReasonInvalid,
			`CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Bad": supported values: "", "Ignore", "Strict", "Warn"`},
		{"media type", authz + "selfsubjectaccessreviews", "text/plain", `x`, 415, metav1.StatusReasonUnsupportedMediaType,
			`the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf`},
		{"too large", authz + "selfsubjectaccessreviews", "", `{"x":"` + strings.Repeat("a", 1<<16) + `"}`, 413, metav1.StatusReasonRequestEntityTooLarge,
			`Request entity too large: limit is 65536`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			auth := &fakeAuthorizer{decision: authorizer.DecisionAllow}
			srv := reviewServer(t, auth, &fakeResolver{}, alice)
			ct := tc.contentType
			if ct == "" {
				ct = "application/json"
			}
			code, body, _ := post(t, srv, tc.path, ct, tc.body)
			var s metav1.Status
			if err := json.Unmarshal([]byte(body), &s); err != nil {
				t.Fatalf("%d %s: %v", code, body, err)
			}
			if code != int(tc.code) || s.Code != tc.code || s.Reason != tc.reason || s.Message != tc.message || s.Kind != "Status" {
				t.Errorf("got %d %s\nwant %d %s %q", code, body, tc.code, tc.reason, tc.message)
			}
			if len(auth.asked) > 0 {
				t.Errorf("the authorizer was asked %v", auth.asked)
			}
		})
	}
}

// TestUnknownFieldWarns: by default an unknown field is a warning, as
// kube-apiserver's fieldValidation=Warn, and the review is answered.
func TestUnknownFieldWarns(t *testing.T) {
	srv := reviewServer(t, &fakeAuthorizer{decision: authorizer.DecisionAllow}, &fakeResolver{}, alice)
	code, body, h := post(t, srv, authz+"selfsubjectaccessreviews", "application/json", `{`+ssar+`,"spec":{"bogus":1,"resourceAttributes":{"verb":"get"}}}`)
	if code != http.StatusCreated || !strings.Contains(body, `"allowed":true`) {
		t.Fatalf("%d %s", code, body)
	}
	if got := h.Values("Warning"); len(got) != 1 || got[0] != `299 - "unknown field \"spec.bogus\""` {
		t.Errorf("warnings %q", got)
	}
	code, _, h = post(t, srv, authz+"selfsubjectaccessreviews?fieldValidation=Ignore", "application/json", `{`+ssar+`,"spec":{"bogus":1,"resourceAttributes":{"verb":"get"}}}`)
	if code != http.StatusCreated || len(h.Values("Warning")) != 0 {
		t.Errorf("Ignore: %d, warnings %q", code, h.Values("Warning"))
	}
}

// TestOnlyPost: other methods on a review's collection get
// kube-apiserver's 405.
func TestOnlyPost(t *testing.T) {
	srv := reviewServer(t, &fakeAuthorizer{}, &fakeResolver{}, alice)
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		req, err := http.NewRequestWithContext(t.Context(), m, srv.URL+authz+"selfsubjectaccessreviews", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var s metav1.Status
		_ = json.NewDecoder(resp.Body).Decode(&s)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || s.Reason != metav1.StatusReasonMethodNotAllowed ||
			s.Message != "the server does not allow this method on the requested resource" {
			t.Errorf("%s: %d %+v", m, resp.StatusCode, s)
		}
	}
}

// TestNoUser: a self review without a user in the request (which the
// authentication stage prevents) is a 400, as in kube-apiserver.
func TestNoUser(t *testing.T) {
	srv := reviewServer(t, &fakeAuthorizer{}, &fakeResolver{}, nil)
	for _, p := range []string{"selfsubjectaccessreviews", "selfsubjectrulesreviews"} {
		body := `{"spec":{"resourceAttributes":{"verb":"get"},"namespace":"x"}}`
		if code, got, _ := post(t, srv, authz+p, "application/json", body); code != 400 || !strings.Contains(got, "no user present on request") {
			t.Errorf("%s: %d %s", p, code, got)
		}
	}
	if code, got, _ := post(t, srv, "/apis/authentication.k8s.io/v1/selfsubjectreviews", "application/json", `{}`); code != 400 || !strings.Contains(got, "no user present on request") {
		t.Errorf("selfsubjectreviews: %d %s", code, got)
	}
}
