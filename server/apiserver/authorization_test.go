package apiserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	authorizationcel "k8s.io/apiserver/pkg/authorization/cel"
	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/apiloom/apiloom/server/authz/authzconfig"
)

// aliceRules allows alice to get configmaps in namespace a and to
// impersonate bob, and nothing else.
type aliceRules struct{}

func (aliceRules) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetUser().GetName() != "alice" {
		return authorizer.DecisionNoOpinion, "", nil
	}
	if a.GetVerb() == "get" && a.GetResource() == "configmaps" && a.GetNamespace() == "a" {
		return authorizer.DecisionAllow, "", nil
	}
	if a.GetVerb() == "impersonate" && a.GetResource() == "users" && a.GetName() == "bob" {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func (r aliceRules) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(r.Authorize(ctx, a))
}

func (aliceRules) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

func (aliceRules) RulesFor(context.Context, user.Info, string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	return nil, nil, false, nil
}

// newAuthorizers is the chain of the modes (no webhook) over rbac, as the
// server builds it from flags.
func newAuthorizers(modes []string, rbac ruleAuthorizer) (authorizers, error) {
	b := &authzconfig.Builder{RBAC: rbac, Compiler: authorizationcel.NewDefaultCompiler()}
	if rbac == nil && slices.Contains(modes, AuthorizationModeRBAC) {
		return authorizers{}, errRBACNotServed
	}
	a, rules, err := b.Build(authzconfig.FromModes(modes, authzconfig.WebhookFlags{}))
	if err != nil {
		return authorizers{}, err
	}
	return authorizers{Authorizer: a, rules: rules}, nil
}

// authzChain is the server's chain after authentication, as given user,
// over a handler that answers with the name of the user it sees.
func authzChain(t *testing.T, modes []string, as user.Info) http.Handler {
	t.Helper()
	authz, err := newAuthorizers(modes, aliceRules{})
	if err != nil {
		t.Fatal(err)
	}
	seen := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, ok := request.UserFrom(r.Context()); ok {
			_, _ = w.Write([]byte(u.GetName()))
		}
	})
	chain := withImpersonation(authz, true, withAuthorization(authz, true, seen))
	return withRequestInfo(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if as != nil {
			r = r.WithContext(request.WithUser(r.Context(), as))
		}
		chain.ServeHTTP(w, r)
	}))
}

func TestAuthorizationChain(t *testing.T) {
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{user.AllAuthenticated}}
	admin := &user.DefaultInfo{Name: "root", Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated}}
	for _, tc := range []struct {
		name    string
		modes   []string
		as      user.Info
		path    string
		headers map[string]string
		code    int
		body    string // the user the handler saw, or the Status message
	}{
		{"allowed", []string{AuthorizationModeRBAC}, alice, "/api/v1/namespaces/a/configmaps/x", nil, 200, "alice"},
		{"other namespace", []string{AuthorizationModeRBAC}, alice, "/api/v1/namespaces/b/configmaps/x", nil, 403,
			`configmaps "x" is forbidden: User "alice" cannot get resource "configmaps" in API group "" in the namespace "b"`},
		{"cluster-wide list", []string{AuthorizationModeRBAC}, alice, "/apis/example.apiloom.dev/v1/databases", nil, 403,
			`databases.example.apiloom.dev is forbidden: User "alice" cannot list resource "databases" in API group "example.apiloom.dev" at the cluster scope`},
		{"non-resource", []string{AuthorizationModeRBAC}, alice, "/metrics", nil, 403,
			`forbidden: User "alice" cannot get path "/metrics"`},
		{"health needs no permission", []string{AuthorizationModeRBAC}, nil, "/readyz", nil, 200, ""},
		{"system:masters", []string{AuthorizationModeRBAC}, admin, "/api/v1/namespaces/b/secrets", nil, 200, "root"},
		{"always allow", []string{AuthorizationModeAlwaysAllow}, alice, "/api/v1/namespaces/b/secrets", nil, 200, "alice"},
		{"impersonate allowed", []string{AuthorizationModeRBAC}, alice, "/version", map[string]string{"Impersonate-User": "bob"}, 403,
			`forbidden: User "bob" cannot get path "/version"`},
		{"impersonate refused", []string{AuthorizationModeRBAC}, alice, "/version", map[string]string{"Impersonate-User": "carol"}, 403,
			`users "carol" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope`},
		{"masters impersonate", []string{AuthorizationModeRBAC}, admin, "/api/v1/namespaces/a/configmaps/x", map[string]string{"Impersonate-User": "alice"}, 200, "alice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", tc.path, nil)
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			authzChain(t, tc.modes, tc.as).ServeHTTP(w, r)
			if w.Code != tc.code {
				t.Fatalf("code %d, want %d: %s", w.Code, tc.code, w.Body)
			}
			got := w.Body.String()
			if tc.code != 200 {
				var st metav1.Status
				if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil {
					t.Fatalf("not a Status: %s", got)
				}
				if st.Reason != metav1.StatusReasonForbidden {
					t.Errorf("reason %q", st.Reason)
				}
				got = st.Message
			}
			if strings.TrimSpace(got) != tc.body {
				t.Errorf("got %q\nwant %q", got, tc.body)
			}
		})
	}
}

// TestForbiddenNegotiated: the 403s of the authorization and impersonation
// filters are in the client's format, CBOR included, as every error is.
func TestForbiddenNegotiated(t *testing.T) {
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{user.AllAuthenticated}}
	chain := authzChain(t, []string{AuthorizationModeRBAC}, alice)
	for _, tc := range []struct{ accept, impersonate, want string }{
		{"application/cbor", "", "application/cbor"},
		{"application/vnd.kubernetes.protobuf, application/json", "", "application/vnd.kubernetes.protobuf"},
		{"application/yaml", "carol", "application/yaml"},
		{"application/cbor", "carol", "application/cbor"},
		{"", "", "application/json"},
	} {
		r := httptest.NewRequest("GET", "/api/v1/namespaces/b/configmaps/x", nil)
		r.Header.Set("Accept", tc.accept)
		if tc.impersonate != "" {
			r.Header.Set("Impersonate-User", tc.impersonate)
		}
		w := httptest.NewRecorder()
		chain.ServeHTTP(w, r)
		if w.Code != http.StatusForbidden || w.Header().Get("Content-Type") != tc.want {
			t.Errorf("Accept %q: %d %q, want 403 %q", tc.accept, w.Code, w.Header().Get("Content-Type"), tc.want)
		}
	}
}

func TestAuthorizationModesValidate(t *testing.T) {
	for modes, ok := range map[string]bool{"RBAC": true, "AlwaysAllow": true, "RBAC,AlwaysAllow": true, "": false, "Node": false, "RBAC,RBAC": false} {
		o := DefaultOptions()
		o.AuthorizationModes = nil
		if modes != "" {
			o.AuthorizationModes = strings.Split(modes, ",")
		}
		if errs := o.validateAuthorization(); (len(errs) == 0) != ok {
			t.Errorf("%q: %v", modes, errs)
		}
	}
}
