package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
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
// "oidc:<email>" in groups "oidc:<group>", tokens with email_verified
// false refused by a claim validation rule, usernames under oidc:system:
// refused by a user validation rule.
func oidcConfig(is *jwttest.Issuer, aud string) string {
	ca := "      " + strings.ReplaceAll(strings.TrimSpace(is.CAPEM), "\n", "\n      ")
	return fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: %s
    audiences: [%s]
    certificateAuthority: |
%s
  claimMappings:
    username: {claim: email, prefix: "oidc:"}
    groups: {claim: groups, prefix: "oidc:"}
  claimValidationRules:
  - expression: 'claims.email_verified == true'
    message: the email is not verified
  userValidationRules:
  - expression: "!user.username.startsWith('oidc:system:')"
    message: no system users from the IdP
`, is.URL, aud, ca)
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

	token := func(aud, email string, verified bool, groups ...string) string {
		return is.Token(t, map[string]any{"aud": aud, "sub": email, "email": email, "email_verified": verified, "groups": groups})
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
		"claim rule (email not verified)": token("apiloom", "ann@example.com", false, "dev"),
		"user rule (a system user)":       token("apiloom", "system:admin", true, "dev"),
		"another audience":                token("elsewhere", "ann@example.com", true, "dev"),
	} {
		if _, err := bearer(ts, tok).CoreV1().ConfigMaps("team").List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
			t.Errorf("%s: %v, want Unauthorized", name, err)
		}
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
