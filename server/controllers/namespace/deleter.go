package namespace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/metadata"

	"github.com/apiloom/apiloom/server/resource"
)

// errContentRemains asks for a retry: objects of the namespace are still
// there (held by finalizers).
var errContentRemains = errors.New("namespace controller: some content remains in the namespace")

// deleter deletes the content of terminating namespaces.
type deleter struct {
	client kubernetes.Interface
	meta   metadata.Interface
	lister corelisters.NamespaceLister
	// resources are the namespaced resources whose objects are deleted,
	// one version of each.
	resources []schema.GroupVersionResource
	log       *slog.Logger
}

// namespacedResources are the namespaced resources of infos, one version
// of each kind (its storage version; deleting through one deletes in all).
func namespacedResources(infos []*resource.Info) []schema.GroupVersionResource {
	var out []schema.GroupVersionResource
	seen := map[schema.GroupResource]bool{}
	for _, i := range infos {
		if !i.Namespaced || !i.Stored() || seen[i.GroupResource()] {
			continue
		}
		seen[i.GroupResource()] = true
		out = append(out, i.GroupVersionResource())
	}
	return out
}

// sync advances the deletion of namespace name, as upstream's
// namespacedResourcesDeleter.Delete does: it is Terminating, its content is
// deleted, its conditions say what is left, and once nothing is, the
// "kubernetes" finalizer is removed. errContentRemains when objects are
// left.
func (d *deleter) sync(ctx context.Context, name string) error {
	ns, err := d.lister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ns.DeletionTimestamp == nil {
		return nil
	}
	ns = ns.DeepCopy() // the informer's copy is shared
	if ns.Status.Phase != corev1.NamespaceTerminating {
		ns.Status.Phase = corev1.NamespaceTerminating
		if ns, err = d.client.CoreV1().Namespaces().UpdateStatus(ctx, ns, metav1.UpdateOptions{}); err != nil {
			return ignoreNotFound(err)
		}
	}
	if len(ns.Spec.Finalizers) == 0 {
		return nil // finalized
	}
	p := d.deleteContent(ctx, name)
	now := metav1.Now()
	if updateConditions(&ns.Status, p.conditions(now), now) {
		updated, err := d.client.CoreV1().Namespaces().UpdateStatus(ctx, ns, metav1.UpdateOptions{})
		if err != nil {
			return ignoreNotFound(err) // a conflict: the informer brings the namespace again
		}
		ns = updated
	}
	if len(p.deleteErrs) > 0 {
		return errors.Join(p.deleteErrs...)
	}
	if len(p.remaining) > 0 {
		return errContentRemains
	}
	ns.Spec.Finalizers = slices.DeleteFunc(ns.Spec.Finalizers, func(f corev1.FinalizerName) bool { return f == corev1.FinalizerKubernetes })
	_, err = d.client.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
	return ignoreNotFound(err)
}

// deleteContent deletes every object of every resource in namespace ns
// (a deletecollection each, propagation Background, as upstream) and
// counts what is left and the finalizers that hold it.
func (d *deleter) deleteContent(ctx context.Context, ns string) *progress {
	p := newProgress()
	background := metav1.DeletePropagationBackground
	for _, gvr := range d.resources {
		client := d.meta.Resource(gvr).Namespace(ns)
		if err := client.DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &background}, metav1.ListOptions{}); err != nil {
			p.deleteErrs = append(p.deleteErrs, err)
			continue
		}
		left, err := client.List(ctx, metav1.ListOptions{})
		if err != nil {
			p.deleteErrs = append(p.deleteErrs, err)
			continue
		}
		if len(left.Items) == 0 {
			continue
		}
		p.remaining[gvr] = len(left.Items)
		held := false
		for _, item := range left.Items {
			for _, f := range item.Finalizers {
				p.finalizers[f]++
				held = true
			}
		}
		if !held {
			// As upstream: objects left without finalizers were created
			// meanwhile, or their deletion failed.
			p.deleteErrs = append(p.deleteErrs, fmt.Errorf("unexpected items still remain in namespace: %s for gvr: %v", ns, gvr))
		}
	}
	return p
}

// ignoreNotFound is err, or nil for a 404: the namespace is gone.
func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
