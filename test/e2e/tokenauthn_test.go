package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	apiloomserver "github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/authn/jwt/jwttest"
	"github.com/apiloom/apiloom/server/testserver"
)

// oidcConfig is an --authentication-config for is: audience aud, users
// "oidc:<email>" in groups "oidc:<group>", tokens without the claim
// tenant=acme refused by a claim validation rule, usernames under oidc:system:
// refused by a user validation rule.
func oidcConfig(is *jwttest.Issuer, aud string) string {
	return is.ConfigYAML(aud, `  claimValidationRules:
  - expression: "has(claims.tenant) && claims.tenant == 'acme'"
    message: not a member of tenant acme
  userValidationRules:
  - expression: "!user.username.startsWith('oidc:system:')"
    message: no system users from the IdP
`)
}

// withTokenAuthn sets the JWT and webhook options of the server.
func withTokenAuthn(f func(*apiloomserver.TokenAuthnOptions)) testserver.Option {
	return func(o *apiloomserver.Options) { f(&o.TokenAuthn) }
}

func bearer(ts *testserver.TestServer, token string) kubernetes.Interface {
	return kubernetes.NewForConfigOrDie(&rest.Config{Host: ts.Config.Host, BearerToken: token, TLSClientConfig: ts.Config.TLSClientConfig, QPS: -1})
}

// bindRole lets subject (a user or group) do verbs on resources in ns.
func bindRole(t *testing.T, kc kubernetes.Interface, ns, name string, subject rbacv1.Subject, resources []string, verbs ...string) {
	t.Helper()
	ctx := t.Context()
	if _, err := kc.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: resources, Verbs: verbs}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kc.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}, Subjects: []rbacv1.Subject{subject}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestOIDCAuthentication: users log in with tokens of a local HTTPS OIDC
// issuer configured by --authentication-config; RBAC applies to the
// mapped usernames and groups; the claim and user validation rules refuse
// tokens; a change of the file is picked up without a restart.
func TestOIDCAuthentication(t *testing.T) {
	is := jwttest.New(t)
	cfgPath := filepath.Join(t.TempDir(), "authn.yaml")
	writeFile(t, cfgPath, oidcConfig(is, "apiloom"))
	ts, _ := startServer(t, withTokenAuthn(func(o *apiloomserver.TokenAuthnOptions) {
		o.AuthenticationConfigFile = cfgPath
		o.AuthenticationConfigReloadInterval = 50 * time.Millisecond
	}))
	ts.CreateNamespaces(t, "team", "other")
	admin := kubernetes.NewForConfigOrDie(ts.Config)
	bindRole(t, admin, "team", "dev-reads", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "oidc:dev"}, []string{"configmaps"}, "get", "list")
	bindRole(t, admin, "other", "ann-reads", rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "oidc:ann@example.com"}, []string{"secrets"}, "list")

	token := func(aud, email string, inAcme bool, groups ...string) string {
		tenant := "acme"
		if !inAcme {
			tenant = "umbrella"
		}
		return is.Token(t, map[string]any{"aud": aud, "sub": email, "email": email, "tenant": tenant, "groups": groups})
	}
	ann := bearer(ts, token("apiloom", "ann@example.com", true, "dev"))
	// The issuer's keys are fetched in the background after the start.
	eventually(t, "ann's OIDC token to be accepted", func(ctx context.Context) (bool, error) {
		_, err := ann.CoreV1().ConfigMaps("team").List(ctx, metav1.ListOptions{})
		return err == nil, err
	})
	ctx := t.Context()
	if _, err := ann.CoreV1().Secrets("other").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("ann lists secrets in other (bound to her mapped username): %v", err)
	}
	if _, err := ann.CoreV1().ConfigMaps("other").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("ann lists configmaps in other: %v, want Forbidden", err)
	}
	if _, err := ann.CoreV1().Secrets("team").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("ann lists secrets in team: %v, want Forbidden", err)
	}
	bob := bearer(ts, token("apiloom", "bob@example.com", true, "qa"))
	if _, err := bob.CoreV1().ConfigMaps("team").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("bob (not in dev) lists configmaps in team: %v, want Forbidden", err)
	}
	for name, tok := range map[string]string{
		"claim rule (another tenant)": token("apiloom", "ann@example.com", false, "dev"),
		"user rule (a system user)":   token("apiloom", "system:admin", true, "dev"),
		"another audience":            token("elsewhere", "ann@example.com", true, "dev"),
	} {
		if _, err := bearer(ts, tok).CoreV1().ConfigMaps("team").List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
			t.Errorf("%s: %v, want Unauthorized", name, err)
		}
	}

	// k8s.io/apiserver's JWT metrics are served.
	if n := metric(t, ts.Config, "apiserver_authentication_jwt_authenticator_latency_seconds_count", `result="success"`); n < 1 {
		t.Errorf("apiserver_authentication_jwt_authenticator_latency_seconds_count{result=success} = %v, want ≥ 1", n)
	}

	// The issuer's audience changes in the file: without a restart, the
	// new audience is accepted and the old one refused.
	writeFile(t, cfgPath, oidcConfig(is, "apiloom-2"))
	ann2 := bearer(ts, token("apiloom-2", "ann@example.com", true, "dev"))
	eventually(t, "the reloaded configuration to accept the new audience", func(ctx context.Context) (bool, error) {
		_, err := ann2.CoreV1().ConfigMaps("team").List(ctx, metav1.ListOptions{})
		return err == nil, err
	})
	if _, err := ann.CoreV1().ConfigMaps("team").List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("the old audience after the reload: %v, want Unauthorized", err)
	}
}

// TestOIDCFlags: the classic --oidc-* flags configure one issuer, with
// upstream's username prefix ("<issuer>#" for a claim other than email).
func TestOIDCFlags(t *testing.T) {
	is := jwttest.New(t)
	caFile := filepath.Join(t.TempDir(), "oidc-ca.crt")
	writeFile(t, caFile, is.CAPEM)
	ts, _ := startServer(t, withTokenAuthn(func(o *apiloomserver.TokenAuthnOptions) {
		o.OIDC.IssuerURL, o.OIDC.ClientID, o.OIDC.CAFile = is.URL, "kubectl", caFile
		o.OIDC.GroupsClaim, o.OIDC.GroupsPrefix = "groups", "idp:"
		o.OIDC.RequiredClaims = map[string]string{"hd": "example.com"}
	}))
	ts.CreateNamespaces(t, "team")
	bindRole(t, kubernetes.NewForConfigOrDie(ts.Config), "team", "idp-dev", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "idp:dev"}, []string{"configmaps"}, "list")
	good := bearer(ts, is.Token(t, map[string]any{"aud": "kubectl", "sub": "u-1", "hd": "example.com", "groups": []string{"dev"}}))
	eventually(t, "the --oidc-* issuer's token to be accepted", func(ctx context.Context) (bool, error) {
		_, err := good.CoreV1().ConfigMaps("team").List(ctx, metav1.ListOptions{})
		return err == nil, err
	})
	who, err := good.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := who.Status.UserInfo.Username, is.URL+"#u-1"; got != want {
		t.Errorf("username %q, want %q", got, want)
	}
	noClaim := bearer(ts, is.Token(t, map[string]any{"aud": "kubectl", "sub": "u-1", "hd": "elsewhere.com"}))
	if _, err := noClaim.CoreV1().ConfigMaps("team").List(t.Context(), metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("a token without the required claim: %v, want Unauthorized", err)
	}
}

// tokenWebhook is a TokenReview service for --authentication-token-
// webhook-config-file: "hook-token" is wanda in hook-users, any other
// token is refused. It counts the reviews it gets per token.
type tokenWebhook struct {
	srv   *httptest.Server
	mu    sync.Mutex
	calls map[string]int
}

func newTokenWebhook(t *testing.T) *tokenWebhook {
	h := &tokenWebhook{calls: map[string]int{}}
	h.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rev authenticationv1.TokenReview
		if err := json.NewDecoder(r.Body).Decode(&rev); err != nil || rev.APIVersion != "authentication.k8s.io/v1" || rev.Kind != "TokenReview" {
			http.Error(w, fmt.Sprintf("not a v1 TokenReview: %v %s", err, rev.APIVersion), http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.calls[rev.Spec.Token]++
		h.mu.Unlock()
		rev.Status = authenticationv1.TokenReviewStatus{}
		if rev.Spec.Token == "hook-token" {
			rev.Status = authenticationv1.TokenReviewStatus{Authenticated: true,
				User: authenticationv1.UserInfo{Username: "wanda", UID: "w-1", Groups: []string{"hook-users"}}}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&rev)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *tokenWebhook) callsFor(token string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls[token]
}

// kubeconfig is the webhook's kubeconfig file.
func (h *tokenWebhook) kubeconfig(t *testing.T) string {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h.srv.Certificate().Raw})
	path := filepath.Join(t.TempDir(), "webhook.kubeconfig")
	writeFile(t, path, fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: hook
  cluster:
    server: %s/review
    certificate-authority-data: %s
users:
- name: apiserver
  user: {}
contexts:
- name: hook
  context: {cluster: hook, user: apiserver}
current-context: hook
`, h.srv.URL, base64.StdEncoding.EncodeToString(ca)))
	return path
}

// TestTokenReviewAndWebhook: with a token file, an OIDC issuer and a
// token webhook configured, TokenReview says who each credential is (or
// that it is none), as the requests' authenticator does; the webhook's
// answers are cached; creating a TokenReview takes RBAC's permission,
// which system:auth-delegator grants; discovery lists tokenreviews.
func TestTokenReviewAndWebhook(t *testing.T) {
	is := jwttest.New(t)
	hook := newTokenWebhook(t)
	dir := t.TempDir()
	cfgPath, tokens := filepath.Join(dir, "authn.yaml"), filepath.Join(dir, "tokens.csv")
	writeFile(t, cfgPath, oidcConfig(is, "apiloom"))
	writeFile(t, tokens, "carol-token,carol,1003,\"qa,ops\"\n")
	ts, _ := startServer(t, testserver.WithTokenAuthFile(tokens), withTokenAuthn(func(o *apiloomserver.TokenAuthnOptions) {
		o.AuthenticationConfigFile = cfgPath
		o.WebhookConfigFile, o.WebhookVersion = hook.kubeconfig(t), "v1"
	}))
	admin := kubernetes.NewForConfigOrDie(ts.Config)
	review := func(ctx context.Context, kc kubernetes.Interface, token string, audiences ...string) (*authenticationv1.TokenReview, error) {
		return kc.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
			Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: audiences}}, metav1.CreateOptions{})
	}
	ann := is.Token(t, map[string]any{"aud": "apiloom", "email": "ann@example.com", "tenant": "acme", "groups": []string{"dev"}})
	eventually(t, "the OIDC token to be reviewed authenticated", func(ctx context.Context) (bool, error) {
		r, err := review(ctx, admin, ann)
		return err == nil && r.Status.Authenticated, err
	})
	ctx := t.Context()
	for _, tc := range []struct {
		name, token string
		audiences   []string
		want        string // "user groups...", or "" for not authenticated
		wantErr     string
	}{
		{name: "token file", token: "carol-token", want: "carol qa,ops,system:authenticated"},
		{name: "OIDC", token: ann, want: "oidc:ann@example.com oidc:dev,system:authenticated"},
		{name: "webhook", token: "hook-token", want: "wanda hook-users,system:authenticated"},
		{name: "bad token", token: "no-such-token"},
		{name: "OIDC refused by a claim rule", token: is.Token(t, map[string]any{"aud": "apiloom", "email": "ann@example.com", "tenant": "umbrella"}), wantErr: "not a member of tenant acme"},
		// No --api-audiences: the API's audiences are the issuer's; a token
		// that names no audience is good for those only.
		{name: "token file for another audience", token: "carol-token", audiences: []string{"vault"}},
	} {
		r, err := review(ctx, admin, tc.token, tc.audiences...)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got := ""
		if r.Status.Authenticated {
			got = r.Status.User.Username + " " + strings.Join(r.Status.User.Groups, ",")
		}
		if got != tc.want || !strings.Contains(r.Status.Error, tc.wantErr) {
			t.Errorf("%s: user %q error %q, want %q error containing %q", tc.name, got, r.Status.Error, tc.want, tc.wantErr)
		}
		if !r.Status.Authenticated && r.Status.User.Username != "" {
			t.Errorf("%s: unauthenticated, with a user %+v", tc.name, r.Status.User)
		}
	}
	if _, err := review(ctx, admin, ""); !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "token is required") {
		t.Errorf("an empty token: %v, want BadRequest", err)
	}

	// The webhook's user makes requests; the webhook is asked once (the
	// review above and these share the cached answer).
	wanda := bearer(ts, "hook-token")
	for range 3 {
		if _, err := wanda.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("wanda's request: %v", err)
		}
	}
	if n := hook.callsFor("hook-token"); n != 1 {
		t.Errorf("the webhook was asked %d times about hook-token, want 1 (cached)", n)
	}
	if _, err := bearer(ts, "other-hook-token").CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("a token the webhook refuses: %v, want Unauthorized", err)
	}

	// Creating a TokenReview takes permission: carol has none until she is
	// bound to system:auth-delegator.
	carol := bearer(ts, "carol-token")
	if _, err := review(ctx, carol, "hook-token"); !apierrors.IsForbidden(err) {
		t.Fatalf("carol's TokenReview: %v, want Forbidden", err)
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "carol-delegator"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:auth-delegator"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "carol"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "carol's TokenReview to be allowed", func(ctx context.Context) (bool, error) {
		r, err := review(ctx, carol, "hook-token")
		return err == nil && r.Status.User.Username == "wanda", err
	})

	resources, err := admin.Discovery().ServerResourcesForGroupVersion("authentication.k8s.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range resources.APIResources {
		if r.Name == "tokenreviews" {
			found = !r.Namespaced && r.Kind == "TokenReview" && strings.Join(r.Verbs, ",") == "create"
		}
	}
	if !found {
		t.Errorf("discovery of authentication.k8s.io/v1: %+v, want tokenreviews (cluster-scoped, create)", resources.APIResources)
	}
}
