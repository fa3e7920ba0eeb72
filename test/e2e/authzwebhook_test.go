package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/authz/authzconfig/authzconfigtest"
)

// authzConfig is an --authorization-config: the corp webhook first, for
// everyone but the group rbac-only (a match condition), then RBAC.
func authzConfig(kubeconfig, failurePolicy string) string {
	return `apiVersion: apiserver.config.k8s.io/v1
kind: AuthorizationConfiguration
authorizers:
- type: Webhook
  name: corp
  webhook:
    timeout: 5s
    authorizedTTL: 5m
    unauthorizedTTL: 30s
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: ` + failurePolicy + `
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: ` + kubeconfig + `}
    matchConditions:
    - expression: "!('rbac-only' in request.groups)"
- type: RBAC
  name: rbac
`
}

// TestAuthorizationWebhook: a webhook authorizer (a test HTTPS server)
// in --authorization-config allows alice and denies bob with its reason;
// its match condition leaves the group rbac-only to RBAC; when it is down
// its failure policy decides (Deny: refused, then NoOpinion: RBAC decides), and
// changes to the file take effect without a restart, a bad one keeping
// the chain in place.
func TestAuthorizationWebhook(t *testing.T) {
	hook := authzconfigtest.Start(t, func(s authorizationv1.SubjectAccessReviewSpec) (bool, bool, string) {
		switch s.User {
		case "alice":
			return true, false, "corp allows alice"
		case "bob":
			return false, true, "bob is on leave"
		}
		return false, false, ""
	})
	file := filepath.Join(t.TempDir(), "authz.yaml")
	write := func(yaml string) {
		t.Helper()
		// Written in place, as an editor or a ConfigMap volume's update
		// would leave it; the server rereads it on the change.
		if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(authzConfig(hook.Kubeconfig, "Deny"))
	ts, _ := startServer(t, func(o *apiserver.Options) {
		o.AuthorizationConfig.File = file
		o.AuthorizationConfig.RetryBackoff = wait.Backoff{Duration: 10 * time.Millisecond, Steps: 1}
		o.AuthorizationConfig.ReloadInterval = 500 * time.Millisecond
	})
	list := func(name string, groups ...string) error {
		_, err := kubernetes.NewForConfigOrDie(ts.UserConfig(name, groups...)).CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{})
		return err
	}

	if err := list("alice"); err != nil {
		t.Fatalf("alice, whom the webhook allows: %v", err)
	}
	err := list("bob")
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "bob is on leave") {
		t.Fatalf("bob, whom the webhook denies: %v, want 403 with the webhook's reason", err)
	}

	// RBAC lets carol and erin list configmaps.
	admin := kubernetes.NewForConfigOrDie(ts.Config)
	if _, err := admin.RbacV1().Roles("default").Create(t.Context(), &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "cm-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings("default").Create(t.Context(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "cm-readers"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "cm-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "carol"},
			{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "erin"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// carol is rbac-only: the webhook is not asked, RBAC allows.
	calls := hook.Calls()
	eventually(t, "RBAC to allow carol", func(context.Context) (bool, error) { return list("carol", "rbac-only") == nil, nil })
	if hook.Calls() != calls {
		t.Errorf("the webhook was asked about carol, whom its match condition leaves to RBAC")
	}
	// SelfSubjectRulesReview lists RBAC's rules through the chain; the
	// webhook lists none, so the answer says it is incomplete.
	review, err := kubernetes.NewForConfigOrDie(ts.UserConfig("carol", "rbac-only")).AuthorizationV1().SelfSubjectRulesReviews().Create(t.Context(),
		&authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "default"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("carol's SelfSubjectRulesReview: %v", err)
	}
	listsConfigMaps := false
	for _, r := range review.Status.ResourceRules {
		listsConfigMaps = listsConfigMaps || slices.Contains(r.Resources, "configmaps") && slices.Contains(r.Verbs, "list")
	}
	if !listsConfigMaps || !review.Status.Incomplete {
		t.Errorf("carol's rules %+v, incomplete %v: want RBAC's list configmaps, incomplete for the webhook", review.Status.ResourceRules, review.Status.Incomplete)
	}
	if err := list("erin"); err != nil {
		t.Fatalf("erin, on whom the webhook has no opinion and RBAC allows: %v", err)
	}

	// The webhook goes down: Deny refuses erin (a fresh decision: only
	// the webhook's answers are cached), though RBAC would allow her; as
	// kube-apiserver, with a 500 that carries the webhook's error, since
	// the refusal comes from a failure, not a decision.
	hook.Stop()
	if err := list("erin"); !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("erin with the webhook down and failurePolicy Deny: %v, want 500 with the webhook's error", err)
	}
	// NoOpinion, written without a restart: RBAC decides again.
	write(authzConfig(hook.Kubeconfig, "NoOpinion"))
	eventually(t, "the reloaded NoOpinion policy to let RBAC allow erin", func(context.Context) (bool, error) { return list("erin") == nil, nil })

	// A bad file is refused, counted, and the chain stays.
	failures := metric(t, ts.Config, "apiserver_authorization_config_controller_automatic_reloads_total", `status="failure"`)
	write(strings.Replace(authzConfig(hook.Kubeconfig, "NoOpinion"), "name: rbac", "name: roles", 1))
	eventually(t, "the bad file's reload failure", func(context.Context) (bool, error) {
		return metric(t, ts.Config, "apiserver_authorization_config_controller_automatic_reloads_total", `status="failure"`) > failures, nil
	})
	if err := list("erin"); err != nil {
		t.Fatalf("erin after a bad file: %v, want the kept chain to allow", err)
	}
}

// TestAuthorizationWebhookMode: --authorization-mode=Webhook,RBAC with the
// --authorization-webhook-* flags, whose SubjectAccessReviews are v1beta1
// by default: the webhook allows alice and denies bob; RBAC is asked
// about the users it has no opinion on.
func TestAuthorizationWebhookMode(t *testing.T) {
	versions := make(chan string, 16)
	hook := authzconfigtest.StartVersioned(t, func(version string, s authorizationv1.SubjectAccessReviewSpec) (bool, bool, string) {
		select {
		case versions <- version:
		default:
		}
		switch s.User {
		case "alice":
			return true, false, "corp allows alice"
		case "bob":
			return false, true, "bob is on leave"
		}
		return false, false, ""
	})
	ts, _ := startServer(t, func(o *apiserver.Options) {
		o.AuthorizationModes = []string{apiserver.AuthorizationModeWebhook, apiserver.AuthorizationModeRBAC}
		o.AuthorizationConfig.Webhook.ConfigFile = hook.Kubeconfig
	})
	list := func(name string) error {
		_, err := kubernetes.NewForConfigOrDie(ts.UserConfig(name)).CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{})
		return err
	}
	if err := list("alice"); err != nil {
		t.Fatalf("alice: %v", err)
	}
	if v := <-versions; v != "authorization.k8s.io/v1beta1" {
		t.Errorf("the webhook was sent %s, want --authorization-webhook-version's default v1beta1", v)
	}
	if err := list("bob"); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "bob is on leave") {
		t.Fatalf("bob: %v, want 403 with the webhook's reason", err)
	}
	if err := list("dave"); !apierrors.IsForbidden(err) {
		t.Fatalf("dave, unknown to the webhook and RBAC: %v, want 403", err)
	}
}
