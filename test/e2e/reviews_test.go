package e2e

import (
	"context"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// TestKubectlAuth: kubectl auth can-i (resources, subresources,
// non-resource URLs, --list) and kubectl auth whoami work against the
// server as its admin, the loopback user in system:masters, who may do
// everything; kubectl api-resources lists the reviews with verb create.
func TestKubectlAuth(t *testing.T) {
	requireKubectl(t)
	ts, _ := startServer(t)
	k := &kubectlEnv{t: t, kubeconfig: ts.Kubeconfig, home: t.TempDir()}

	for _, args := range [][]string{
		{"get", "databases.example.apiloom.dev", "-n", "team"},
		{"update", "databases", "--subresource=status", "-n", "team"},
		{"delete", "namespaces/kube-system"},
		{"create", "configmaps", "-n", "team"},
		{"get", "/metrics"},
		{"*", "*"},
	} {
		if out := k.run(append([]string{"auth", "can-i"}, args...)...); strings.TrimSpace(out) != "yes" {
			t.Errorf("auth can-i %v = %q, want yes", args, out)
		}
	}

	for _, ns := range []string{"", "team"} {
		args := []string{"auth", "can-i", "--list"}
		if ns != "" {
			args = append(args, "-n", ns)
		}
		out := k.run(args...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		// The admin's rules come from RBAC's default policy: cluster-admin
		// (bound to system:masters) first, then what every authenticated
		// user may do (system:basic-user, system:discovery, ...), as
		// kube-apiserver lists them.
		want := [][]string{
			{"Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"},
			{"*.*", "[]", "[]", "[*]"},
			{"[*]", "[]", "[*]"},
			{"selfsubjectreviews.authentication.k8s.io", "[]", "[]", "[create]"},
			{"selfsubjectaccessreviews.authorization.k8s.io", "[]", "[]", "[create]"},
			{"selfsubjectrulesreviews.authorization.k8s.io", "[]", "[]", "[create]"},
		}
		if len(lines) < len(want) {
			t.Fatalf("auth can-i --list (%q):\n%s", ns, out)
		}
		for i, w := range want {
			if got := strings.Fields(lines[i]); strings.Join(got, " ") != strings.Join(w, " ") {
				t.Errorf("auth can-i --list line %d = %q, want %q", i, got, w)
			}
		}
	}

	out := k.run("auth", "whoami")
	// The kubeconfig the server writes names its admin by a client
	// certificate; the certificate's ID is an extra, as upstream's.
	for _, want := range []string{"apiloom:admin", "[system:masters system:authenticated]", "authentication.kubernetes.io/credential-id   [X509SHA256="} {
		if !strings.Contains(out, want) {
			t.Errorf("auth whoami lacks %q:\n%s", want, out)
		}
	}
	var ssr authenticationv1.SelfSubjectReview
	if err := yaml.Unmarshal([]byte(k.run("auth", "whoami", "-o", "yaml")), &ssr); err != nil {
		t.Fatal(err)
	}
	if ssr.Kind != "SelfSubjectReview" || ssr.Status.UserInfo.Username != "apiloom:admin" || ssr.CreationTimestamp.IsZero() {
		t.Errorf("auth whoami -o yaml: %+v", ssr)
	}

	// NAME APIVERSION NAMESPACED KIND VERBS, sorted by name; the reviews
	// have no short names nor categories.
	out = k.run("api-resources", "--api-group=authorization.k8s.io", "-o", "wide", "--no-headers")
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		got = append(got, strings.Join(strings.Fields(line), " "))
	}
	want := []string{
		"localsubjectaccessreviews authorization.k8s.io/v1 true LocalSubjectAccessReview create",
		"selfsubjectaccessreviews authorization.k8s.io/v1 false SelfSubjectAccessReview create",
		"selfsubjectrulesreviews authorization.k8s.io/v1 false SelfSubjectRulesReview create",
		"subjectaccessreviews authorization.k8s.io/v1 false SubjectAccessReview create",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("api-resources:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestReviewsClientGo: client-go's typed AuthorizationV1 and
// AuthenticationV1 clients create every review, in protobuf, which
// controllers commonly configure for built-in kinds.
func TestReviewsClientGo(t *testing.T) {
	ts, _ := startServer(t)
	cfg := *ts.Config
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	c, err := kubernetes.NewForConfig(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ts.CreateNamespaces(t, "team")
	// bob and group g may read in team (the view ClusterRole); carol
	// nothing.
	if _, err := c.RbacV1().RoleBindings("team").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "readers"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "bob"},
			{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "g"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	attrs := &authorizationv1.ResourceAttributes{Namespace: "team", Verb: "list", Resource: "configmaps"}
	eventually(t, "the RoleBinding to take effect", func(ctx context.Context) (bool, error) {
		sar, err := c.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: "bob", ResourceAttributes: attrs}}, metav1.CreateOptions{})
		return err == nil && sar.Status.Allowed, err
	})
	denied, err := c.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{User: "carol", ResourceAttributes: attrs}}, metav1.CreateOptions{})
	if err != nil || denied.Status.Allowed {
		t.Errorf("SubjectAccessReview for carol: %+v, %v", denied, err)
	}

	sar, err := c.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{User: "bob", ResourceAttributes: attrs}}, metav1.CreateOptions{})
	if err != nil || !sar.Status.Allowed {
		t.Errorf("SubjectAccessReview: %+v, %v", sar, err)
	}
	lsar, err := c.AuthorizationV1().LocalSubjectAccessReviews("team").Create(ctx, &authorizationv1.LocalSubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{Groups: []string{"g"}, ResourceAttributes: attrs}}, metav1.CreateOptions{})
	if err != nil || !lsar.Status.Allowed || lsar.Namespace != "team" {
		t.Errorf("LocalSubjectAccessReview: %+v, %v", lsar, err)
	}
	ssar, err := c.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}}},
		metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil || !ssar.Status.Allowed {
		t.Errorf("SelfSubjectAccessReview: %+v, %v", ssar, err)
	}
	ssrr, err := c.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{
		Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "team"}}, metav1.CreateOptions{})
	// system:masters' rules: cluster-admin's, then what every
	// authenticated user may do (system:basic-user).
	if err != nil || len(ssrr.Status.ResourceRules) != 3 || ssrr.Status.ResourceRules[0].Verbs[0] != "*" || ssrr.Status.Incomplete {
		t.Errorf("SelfSubjectRulesReview: %+v, %v", ssrr, err)
	}
	ssr, err := c.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || ssr.Status.UserInfo.Username != "system:apiserver" {
		t.Errorf("SelfSubjectReview: %+v, %v", ssr, err)
	}
}
