package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/tools/clientcmd"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/apiloom/apiloom/server/testserver"
)

// nsPropagation is a namespace being deleted with a propagation policy,
// and what the policy is about: a dependent of the Namespace object
// itself, in another namespace, and a held object inside that keeps the
// namespace Terminating until released.
type nsPropagation struct {
	t      *testing.T
	kc     kubernetes.Interface
	ns     *corev1.Namespace
	other  string
	holder string // the held ConfigMap's name, in ns
}

const holdFinalizer = "example.com/hold"

// newNSPropagation creates namespace name with a held ConfigMap in it and,
// in namespace other, a ConfigMap owned by the Namespace (blocking its
// owner's foreground deletion, with depFinalizers).
func newNSPropagation(t *testing.T, kc kubernetes.Interface, name, other string, depFinalizers ...string) *nsPropagation {
	t.Helper()
	ctx := t.Context()
	ns, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	p := &nsPropagation{t: t, kc: kc, ns: ns, other: other, holder: "held"}
	p.create(name, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: p.holder, Finalizers: []string{holdFinalizer}}})
	p.create(other, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dep-of-" + name, Finalizers: depFinalizers,
		OwnerReferences: []metav1.OwnerReference{ownerRefTo(ns, "v1", "Namespace", true)}}})
	return p
}

func (p *nsPropagation) create(ns string, cm *corev1.ConfigMap) *corev1.ConfigMap {
	p.t.Helper()
	got, err := p.kc.CoreV1().ConfigMaps(ns).Create(p.t.Context(), cm, metav1.CreateOptions{})
	if err != nil {
		p.t.Fatal(err)
	}
	return got
}

// delete DELETEs the namespace with policy ("" for none) and returns the
// answer.
func (p *nsPropagation) delete(policy metav1.DeletionPropagation) *corev1.Namespace {
	p.t.Helper()
	opts := metav1.DeleteOptions{}
	if policy != "" {
		opts.PropagationPolicy = &policy
	}
	got := &corev1.Namespace{}
	if err := p.kc.CoreV1().RESTClient().Delete().Resource("namespaces").Name(p.ns.Name).Body(&opts).Do(p.t.Context()).Into(got); err != nil {
		p.t.Fatal(err)
	}
	return got
}

// release removes the finalizer of ConfigMap name in ns.
func (p *nsPropagation) release(ns, name string) {
	p.t.Helper()
	if _, err := p.kc.CoreV1().ConfigMaps(ns).Patch(p.t.Context(), name, types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
		p.t.Fatal(err)
	}
}

// dependent is the Namespace's dependent, nil once gone.
func (p *nsPropagation) dependent(ctx context.Context) (*corev1.ConfigMap, error) {
	cm, err := p.kc.CoreV1().ConfigMaps(p.other).Get(ctx, "dep-of-"+p.ns.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return cm, err
}

// TestNamespaceDeletePropagation: a Namespace's DELETE turns its
// propagationPolicy into the namespace's garbage-collection finalizer
// as kube-apiserver's namespace storage does (orphan, foregroundDeletion,
// none for Background or no policy), a later DELETE while the namespace
// is Terminating changes nothing, and the policy is about the
// Namespace's own dependents (objects whose ownerReferences name it, here
// a ConfigMap in another namespace): Orphan leaves them without the
// reference, Foreground deletes them before the namespace goes,
// Background after. The namespace's content is deleted in the background
// whatever the policy (the namespace controller's deletecollection), as
// kube-controller-manager does: an owner inside goes while its blocking
// dependent is still held. A UID precondition that does not hold is 409 in
// upstream's words.
func TestNamespaceDeletePropagation(t *testing.T) {
	ts, _ := startServer(t, testserver.WithBuiltinAPIs("namespaces", "configmaps", "leases"), testserver.WithAuthorizationModes("AlwaysAllow"))
	testNamespaceDeletePropagation(t, kubernetes.NewForConfigOrDie(ts.Config), "")
}

// TestNamespaceDeletePropagationMatchesKubeAPIServer runs
// TestNamespaceDeletePropagation's requests and checks against a
// kube-apiserver with kube-controller-manager's namespace and garbage
// collector controllers (APILOOM_PEER_KUBECONFIG, started with
// PEER_KCM=1): what apiloom is held to is what kube-apiserver does.
func TestNamespaceDeletePropagationMatchesKubeAPIServer(t *testing.T) {
	path := os.Getenv(peerEnv)
	if path == "" {
		t.Skip(peerEnv + " is not set")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	testNamespaceDeletePropagation(t, kubernetes.NewForConfigOrDie(cfg), rand.String(4)+"-")
}

// testNamespaceDeletePropagation is TestNamespaceDeletePropagation against
// kc, its namespaces' names prefixed with prefix.
func testNamespaceDeletePropagation(t *testing.T, kc kubernetes.Interface, prefix string) {

	t.Run("precondition", func(t *testing.T) {
		p := newNSPropagation(t, kc, prefix+"pre", prefix+"pre-other")
		uid := types.UID("not-the-uid")
		err := kc.CoreV1().Namespaces().Delete(t.Context(), p.ns.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		want := fmt.Sprintf(`Operation cannot be fulfilled on namespaces %q: Precondition failed: UID in precondition: not-the-uid, UID in object meta: %s`, p.ns.Name, p.ns.UID)
		if !apierrors.IsConflict(err) || err.Error() != want {
			t.Fatalf("DELETE with another uid: %v, want 409 %q", err, want)
		}
		p.delete("")
		p.release(p.ns.Name, p.holder)
		waitNamespaceGone(t, kc, p.ns.Name)
	})

	for _, c := range []struct {
		policy metav1.DeletionPropagation
		want   []string
	}{
		{"", nil},
		{metav1.DeletePropagationBackground, nil},
		{metav1.DeletePropagationOrphan, []string{metav1.FinalizerOrphanDependents}},
		{metav1.DeletePropagationForeground, []string{metav1.FinalizerDeleteDependents}},
	} {
		name := "none"
		if c.policy != "" {
			name = string(c.policy)
		}
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			nsName := prefix + "prop-" + map[string]string{"none": "none", "Background": "bg", "Orphan": "orphan", "Foreground": "fg"}[name]
			p := newNSPropagation(t, kc, nsName, nsName+"-other", holdFinalizer)
			got := p.delete(c.policy)
			if !slices.Equal(got.Finalizers, c.want) || got.DeletionTimestamp == nil || got.Status.Phase != corev1.NamespaceTerminating {
				t.Fatalf("DELETE answered finalizers %v, deletionTimestamp %v, phase %s; want finalizers %v", got.Finalizers, got.DeletionTimestamp, got.Status.Phase, c.want)
			}
			// A second DELETE with another policy while spec.finalizers
			// hold the namespace answers it as it is.
			other := metav1.DeletePropagationForeground
			if c.policy == other {
				other = metav1.DeletePropagationOrphan
			}
			if again := p.delete(other); slices.Contains(again.Finalizers, map[metav1.DeletionPropagation]string{
				metav1.DeletePropagationForeground: metav1.FinalizerDeleteDependents, metav1.DeletePropagationOrphan: metav1.FinalizerOrphanDependents}[other]) {
				t.Fatalf("a second DELETE with %s set finalizers %v", other, again.Finalizers)
			}

			switch c.policy {
			case metav1.DeletePropagationOrphan:
				eventually(t, "the dependent to be orphaned", func(ctx context.Context) (bool, error) {
					dep, err := p.dependent(ctx)
					if err != nil || dep == nil {
						return false, fmt.Errorf("dependent: %v %v", dep, err)
					}
					return len(dep.OwnerReferences) == 0 && dep.DeletionTimestamp == nil, fmt.Errorf("owner references %v", dep.OwnerReferences)
				})
				p.release(nsName, p.holder)
				waitNamespaceGone(t, kc, nsName)
				if dep, err := p.dependent(ctx); err != nil || dep == nil || dep.DeletionTimestamp != nil {
					t.Fatalf("the orphaned dependent after the namespace went: %+v %v", dep, err)
				}
			case metav1.DeletePropagationForeground:
				// The content goes, the namespace controller finalizes,
				// and the namespace waits for its dependent.
				eventually(t, "the dependent's deletion", func(ctx context.Context) (bool, error) {
					dep, err := p.dependent(ctx)
					return err == nil && dep != nil && dep.DeletionTimestamp != nil, fmt.Errorf("dependent: %+v %v", dep, err)
				})
				p.release(nsName, p.holder)
				eventually(t, "the namespace to be finalized", func(ctx context.Context) (bool, error) {
					ns, err := kc.CoreV1().Namespaces().Get(ctx, nsName, metav1.GetOptions{})
					if err != nil {
						return false, err
					}
					return len(ns.Spec.Finalizers) == 0, fmt.Errorf("spec.finalizers %v", ns.Spec.Finalizers)
				})
				ns, err := kc.CoreV1().Namespaces().Get(ctx, nsName, metav1.GetOptions{})
				if err != nil || !slices.Equal(ns.Finalizers, c.want) {
					t.Fatalf("the namespace while its dependent is held: %v %v", ns, err)
				}
				p.release(p.other, "dep-of-"+nsName)
				waitNamespaceGone(t, kc, nsName)
			default:
				p.release(nsName, p.holder)
				waitNamespaceGone(t, kc, nsName)
				eventually(t, "the dependent's deletion", func(ctx context.Context) (bool, error) {
					dep, err := p.dependent(ctx)
					return err == nil && dep != nil && dep.DeletionTimestamp != nil, fmt.Errorf("dependent: %+v %v", dep, err)
				})
				p.release(p.other, "dep-of-"+nsName)
			}
		})
	}

	t.Run("content in the background", func(t *testing.T) {
		ctx := t.Context()
		ns := prefix + "content"
		p := newNSPropagation(t, kc, ns, ns+"-other")
		owner := p.create(ns, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}})
		p.create(ns, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dep", Finalizers: []string{holdFinalizer},
			OwnerReferences: []metav1.OwnerReference{cmRef(owner, true)}}})
		p.delete(metav1.DeletePropagationForeground)
		eventually(t, "the owner to go while its dependent is held", func(ctx context.Context) (bool, error) {
			_, err := kc.CoreV1().ConfigMaps(ns).Get(ctx, "owner", metav1.GetOptions{})
			return apierrors.IsNotFound(err), err
		})
		dep, err := kc.CoreV1().ConfigMaps(ns).Get(ctx, "dep", metav1.GetOptions{})
		if err != nil || dep.DeletionTimestamp == nil {
			t.Fatalf("the held dependent: %+v %v", dep, err)
		}
		p.release(ns, "dep")
		p.release(ns, p.holder)
		waitNamespaceGone(t, kc, ns)
	})
}
