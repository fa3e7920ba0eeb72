package rbac

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// peerEnv names the kubeconfig of a kube-apiserver started with
// --authorization-mode=RBAC whose user is in system:masters
// (hack/rbac-peer.sh, `make test-rbac-peer`). Without it the differential
// test skips.
const peerEnv = "APILOOM_RBAC_PEER_KUBECONFIG"

// Sizes of the differential test's matrix.
const (
	peerRoles      = 150 // Roles and as many ClusterRoles
	peerBindings   = 150 // RoleBindings, and a third as many ClusterRoleBindings
	peerRequests   = 4000
	peerRulesUsers = 12 // identities whose rules are compared, in each namespace and cluster-wide
	peerSeed       = 15
)

// TestPeerDifferential: a real kube-apiserver and this package decide the
// same generated requests over the same generated RBAC objects (plus the
// peer's bootstrap policy), and must agree on every decision, on the
// missing roles a denial names, and on the rules SelfSubjectRulesReview
// lists for a few users.
func TestPeerDifferential(t *testing.T) {
	path := os.Getenv(peerEnv)
	if path == "" {
		t.Skipf("%s is not set (make test-rbac-peer)", peerEnv)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 2000, 2000
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := t.Context()

	g := newGenerator(peerSeed)
	objs := g.policy(peerRoles, peerBindings)
	createOnPeer(t, client, objs)
	waitForPeer(t, client)

	// Our authorizer reads exactly what the peer holds: the generated
	// objects and its bootstrap policy.
	s := newMemSources()
	s.add(t, listPeer(t, client)...)
	a := runAuthorizer(t, s)

	reqs := make([]authorizer.AttributesRecord, peerRequests)
	for i := range reqs {
		reqs[i] = g.request()
	}
	answers := askPeer(t, client, reqs)
	var mismatches []string
	allowed, byRoleBinding, withMissing := 0, 0, 0
	for i, req := range reqs {
		want := answers[i]
		d, reason, err := a.Authorize(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		got := d == authorizer.DecisionAllow
		switch {
		case got && strings.HasPrefix(reason, "RBAC: allowed by RoleBinding"):
			byRoleBinding++
			fallthrough
		case got:
			allowed++
		case reason != "":
			withMissing++
		}
		switch {
		case got != want.Allowed || want.Denied:
			mismatches = append(mismatches, fmt.Sprintf("%s: peer allowed=%v denied=%v (%q), ours %v (%q)",
				describeRequest(req), want.Allowed, want.Denied, want.Reason, got, reason))
		case !got && !sameErrors(reason, want.Reason):
			mismatches = append(mismatches, fmt.Sprintf("%s: denied by both, reasons differ: peer %q, ours %q",
				describeRequest(req), want.Reason, reason))
		case got && !strings.HasPrefix(reason, "RBAC: allowed by "):
			mismatches = append(mismatches, fmt.Sprintf("%s: allowed, reason %q", describeRequest(req), reason))
		}
	}
	t.Logf("%d generated objects (%d rules) plus the peer's bootstrap policy, %d requests: %d allowed (%d by a RoleBinding), "+
		"%d denied (%d naming missing roles), %d mismatches",
		len(objs), countRules(objs), len(reqs), allowed, byRoleBinding, len(reqs)-allowed, withMissing, len(mismatches))
	for _, m := range mismatches {
		t.Error(m)
	}

	compareRules(t, cfg, a, g)
}

func countRules(objs []runtime.Object) int {
	n := 0
	for _, o := range objs {
		switch o := o.(type) {
		case *rbacv1.Role:
			n += len(o.Rules)
		case *rbacv1.ClusterRole:
			n += len(o.Rules)
		}
	}
	return n
}

// createOnPeer creates the namespaces and objs on the peer, each kind
// after the previous, so that the last object of a kind is the last its
// informer on the peer sees; then the probes waitForPeer looks for.
func createOnPeer(t *testing.T, c kubernetes.Interface, objs []runtime.Object) {
	ctx := t.Context()
	for _, ns := range genNamespaces {
		_, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	objs = append(slices.Clone(objs), probes()...)
	// Stable by kind: all Roles, then ClusterRoles, RoleBindings,
	// ClusterRoleBindings, in generated order, the probes last.
	order := func(o runtime.Object) int {
		switch o.(type) {
		case *rbacv1.Role:
			return 0
		case *rbacv1.ClusterRole:
			return 1
		case *rbacv1.RoleBinding:
			return 2
		}
		return 3
	}
	slices.SortStableFunc(objs, func(a, b runtime.Object) int { return order(a) - order(b) })
	var err error
	for _, o := range objs {
		switch o := o.(type) {
		case *rbacv1.Role:
			_, err = c.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			_, err = c.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			_, err = c.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
		}
		if apierrors.IsAlreadyExists(err) {
			t.Fatalf("%v: the differential test needs a fresh peer (make test-rbac-peer starts one)", err)
		}
		if err != nil {
			t.Fatalf("create %T: %v", o, err)
		}
	}
}

// probes are the last Role, ClusterRole, RoleBinding and
// ClusterRoleBinding created: once the peer allows what they grant, its
// authorizer has seen every object created before them.
func probes() []runtime.Object {
	get := resourceRule(l("get"), l(""), l("probes"))
	return []runtime.Object{
		role("ns-a", "zz-probe", get),
		clusterRole("zz-probe", get),
		roleBinding("ns-a", "zz-probe", "Role", "zz-probe", userSubject("probe-ns")),
		clusterRoleBinding("zz-probe", "zz-probe", userSubject("probe-cluster")),
	}
}

func waitForPeer(t *testing.T, c kubernetes.Interface) {
	probe := func(u string) bool {
		a := askPeer(t, c, []authorizer.AttributesRecord{request(person(u), "get", "ns-a", "", "probes", "", "")})
		return a[0].Allowed
	}
	deadline := time.Now().Add(time.Minute)
	for !probe("probe-ns") || !probe("probe-cluster") {
		if time.Now().After(deadline) {
			t.Fatal("the peer's authorizer never saw the probes")
		}
		time.Sleep(100 * time.Millisecond) // polling a remote server, not synchronising goroutines
	}
}

// listPeer returns every RBAC object the peer holds.
func listPeer(t *testing.T, c kubernetes.Interface) []runtime.Object {
	ctx := t.Context()
	var out []runtime.Object
	roles, err := c.RbacV1().Roles("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range roles.Items {
		out = append(out, &roles.Items[i])
	}
	crs, err := c.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range crs.Items {
		out = append(out, &crs.Items[i])
	}
	rbs, err := c.RbacV1().RoleBindings("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rbs.Items {
		out = append(out, &rbs.Items[i])
	}
	crbs, err := c.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range crbs.Items {
		out = append(out, &crbs.Items[i])
	}
	return out
}

// askPeer asks the peer a SubjectAccessReview for each request, four at a
// time.
func askPeer(t *testing.T, c kubernetes.Interface, reqs []authorizer.AttributesRecord) []authorizationv1.SubjectAccessReviewStatus {
	out := make([]authorizationv1.SubjectAccessReviewStatus, len(reqs))
	errs := make([]error, len(reqs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range next {
				sar := &authorizationv1.SubjectAccessReview{Spec: sarSpec(reqs[i])}
				res, err := c.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), sar, metav1.CreateOptions{})
				if err != nil {
					errs[i] = err
					continue
				}
				out[i] = res.Status
			}
		})
	}
	for i := range reqs {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("SubjectAccessReview of %s: %v", describeRequest(reqs[i]), err)
		}
	}
	return out
}

func sarSpec(r authorizer.AttributesRecord) authorizationv1.SubjectAccessReviewSpec {
	spec := authorizationv1.SubjectAccessReviewSpec{User: r.User.GetName(), Groups: r.User.GetGroups()}
	if r.ResourceRequest {
		spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Namespace: r.Namespace, Verb: r.Verb,
			Group: r.APIGroup, Version: r.APIVersion, Resource: r.Resource, Subresource: r.Subresource, Name: r.Name}
	} else {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: r.Path, Verb: r.Verb}
	}
	return spec
}

func describeRequest(r authorizer.AttributesRecord) string {
	who := fmt.Sprintf("user %q groups %q", r.User.GetName(), r.User.GetGroups())
	if !r.ResourceRequest {
		return fmt.Sprintf("%s: %s %s", who, r.Verb, r.Path)
	}
	return fmt.Sprintf("%s: %s group %q resource %q subresource %q name %q namespace %q",
		who, r.Verb, r.APIGroup, r.Resource, r.Subresource, r.Name, r.Namespace)
}

// sameErrors compares two denial reasons as sets of messages: the peer
// lists the missing roles in its informers' (map) order, and puts the
// authorizer's name before RBAC's reason.
func sameErrors(ours, peer string) bool {
	return slices.Equal(reasonErrors(ours), reasonErrors(peer))
}

func reasonErrors(reason string) []string {
	if i := strings.Index(reason, "RBAC: "); i >= 0 {
		reason = reason[i+len("RBAC: "):]
	}
	reason = strings.TrimSuffix(strings.TrimPrefix(reason, "["), "]")
	if reason == "" {
		return nil
	}
	out := strings.Split(reason, ", ")
	sort.Strings(out)
	return slices.Compact(out)
}

// compareRules compares, for a few identities in every namespace and
// cluster-wide, the peer's SelfSubjectRulesReview (asked as that
// identity, impersonated) with RulesFor's, as multisets of rules: the
// peer lists bindings in its informers' order.
func compareRules(t *testing.T, cfg *rest.Config, a *Authorizer, g *generator) {
	compared := 0
	for range peerRulesUsers {
		id := g.identity()
		groups := id.GetGroups()
		if !slices.Contains(groups, user.AllAuthenticated) {
			// impersonation adds it, as authentication does
			groups = append(slices.Clone(groups), user.AllAuthenticated)
		}
		id = &user.DefaultInfo{Name: id.GetName(), Groups: groups}
		icfg := rest.CopyConfig(cfg)
		icfg.Impersonate = rest.ImpersonationConfig{UserName: id.GetName(), Groups: groups}
		ic := kubernetes.NewForConfigOrDie(icfg)
		for _, ns := range append([]string{""}, genNamespaces...) {
			ssrr := &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: ns}}
			if ns == "" {
				// the review needs a namespace; the rules of a namespace
				// nobody binds in are the cluster-wide ones
				ssrr.Spec.Namespace = "nowhere"
			}
			res, err := ic.AuthorizationV1().SelfSubjectRulesReviews().Create(t.Context(), ssrr, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("SelfSubjectRulesReview as %q: %v", id.GetName(), err)
			}
			var peer []string
			for _, r := range res.Status.ResourceRules {
				peer = append(peer, fmt.Sprintf("res %q %q %q %q", r.Verbs, r.APIGroups, r.Resources, r.ResourceNames))
			}
			for _, r := range res.Status.NonResourceRules {
				peer = append(peer, fmt.Sprintf("url %q %q", r.Verbs, r.NonResourceURLs))
			}
			resRules, nonRes, _, err := a.RulesFor(t.Context(), id, ssrr.Spec.Namespace)
			var ours []string
			for _, r := range resRules {
				ours = append(ours, fmt.Sprintf("res %q %q %q %q", r.GetVerbs(), r.GetAPIGroups(), r.GetResources(), r.GetResourceNames()))
			}
			for _, r := range nonRes {
				ours = append(ours, fmt.Sprintf("url %q %q", r.GetVerbs(), r.GetNonResourceURLs()))
			}
			sort.Strings(peer)
			sort.Strings(ours)
			ourErr := ""
			if err != nil {
				ourErr = err.Error()
			}
			if !slices.Equal(peer, ours) || !sameErrors(ourErr, res.Status.EvaluationError) {
				t.Errorf("rules of %q %q in %q differ:\npeer %q (error %q)\nours %q (error %q)",
					id.GetName(), groups, ssrr.Spec.Namespace, peer, res.Status.EvaluationError, ours, ourErr)
			}
			compared++
		}
	}
	t.Logf("%d rules reviews compared", compared)
}
