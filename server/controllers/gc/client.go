package gc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/util/retry"
)

// The collector's reads and writes, through the metadata client over the
// server's loopback: live reads (a consistent GET, never the informers'
// possibly stale state) before every decision, and writes conditioned on
// what was read (UID, resourceVersion), as upstream's collector does.

// errNamespacedOwnerOfClusterScoped is a cluster-scoped object referring to
// a namespaced owner: no namespace to look it up in, so it is left alone
// (upstream's rule).
var errNamespacedOwnerOfClusterScoped = errors.New("gc: cluster-scoped objects cannot refer to namespaced owners")

// resourceOf is the client of id's resource in id's namespace (none for a
// cluster-scoped kind).
func (c *collector) resourceOf(id ref) (metadata.ResourceInterface, bool, error) {
	info, err := c.kinds.lookup(id.APIVersion, id.Kind)
	if err != nil {
		return nil, false, err
	}
	r := c.client.Resource(info.GroupVersionResource())
	if !info.Namespaced {
		return r, false, nil
	}
	return r.Namespace(id.Namespace), true, nil
}

// get reads id's object live.
func (c *collector) get(ctx context.Context, id ref) (*metav1.PartialObjectMetadata, error) {
	r, namespaced, err := c.resourceOf(id)
	if err != nil {
		return nil, err
	}
	if namespaced && id.Namespace == "" {
		return nil, errNamespacedOwnerOfClusterScoped
	}
	return r.Get(ctx, id.Name, metav1.GetOptions{})
}

// deleteObject deletes id's object with policy, provided it is still the
// object read at resourceVersion; when only its resourceVersion moved and
// its owners are those read, it deletes regardless of the version.
func (c *collector) deleteObject(ctx context.Context, id ref, resourceVersion string, owners []metav1.OwnerReference, policy metav1.DeletionPropagation) error {
	r, _, err := c.resourceOf(id)
	if err != nil {
		return err
	}
	uid := id.UID
	pre := &metav1.Preconditions{UID: &uid}
	if resourceVersion != "" {
		pre.ResourceVersion = &resourceVersion
	}
	err = r.Delete(ctx, id.Name, metav1.DeleteOptions{Preconditions: pre, PropagationPolicy: &policy})
	if apierrors.IsConflict(err) && resourceVersion != "" {
		live, liveErr := r.Get(ctx, id.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(liveErr) {
			return liveErr
		}
		if liveErr == nil && live.UID == id.UID && live.ResourceVersion != resourceVersion && slices.EqualFunc(live.OwnerReferences, owners, sameRef) {
			return c.deleteObject(ctx, id, "", nil, policy)
		}
	}
	return err
}

// metaPatch is a JSON merge patch of an object's metadata, conditioned on
// its resourceVersion.
type metaPatch struct {
	Metadata struct {
		ResourceVersion string                   `json:"resourceVersion"`
		OwnerReferences *[]metav1.OwnerReference `json:"ownerReferences,omitempty"`
		Finalizers      *[]string                `json:"finalizers,omitempty"`
	} `json:"metadata"`
}

// updateMeta reads id's object live, lets change edit its metadata (false:
// nothing to do), and writes the owner references and finalizers back with
// a merge patch conditioned on the version read, again on a conflict. An
// object gone, or replaced by one of another UID, is nothing to do.
func (c *collector) updateMeta(ctx context.Context, id ref, change func(*metav1.PartialObjectMetadata) bool) error {
	r, _, err := c.resourceOf(id)
	if err != nil {
		return err
	}
	err = retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		live, err := r.Get(ctx, id.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if live.UID != id.UID || !change(live) {
			return nil
		}
		var p metaPatch
		p.Metadata.ResourceVersion = live.ResourceVersion
		owners, fins := live.OwnerReferences, live.Finalizers
		if owners == nil {
			owners = []metav1.OwnerReference{}
		}
		if fins == nil {
			fins = []string{}
		}
		p.Metadata.OwnerReferences, p.Metadata.Finalizers = &owners, &fins
		body, err := json.Marshal(p)
		if err != nil {
			return err
		}
		_, err = r.Patch(ctx, id.Name, types.MergePatchType, body, metav1.PatchOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("updating %s: %w", id, err)
	}
	return nil
}

// removeOwnerRefs removes the references to uids from id's object.
func (c *collector) removeOwnerRefs(ctx context.Context, id ref, uids ...types.UID) error {
	return c.updateMeta(ctx, id, func(o *metav1.PartialObjectMetadata) bool {
		n := len(o.OwnerReferences)
		o.OwnerReferences = slices.DeleteFunc(o.OwnerReferences, func(r metav1.OwnerReference) bool { return slices.Contains(uids, r.UID) })
		return len(o.OwnerReferences) != n
	})
}

// unblockOwnerRefs makes every reference of id's object non-blocking.
func (c *collector) unblockOwnerRefs(ctx context.Context, id ref) error {
	return c.updateMeta(ctx, id, func(o *metav1.PartialObjectMetadata) bool {
		changed := false
		for i := range o.OwnerReferences {
			if blocks(o.OwnerReferences[i]) {
				no := false
				o.OwnerReferences[i].BlockOwnerDeletion = &no
				changed = true
			}
		}
		return changed
	})
}

// removeFinalizer removes finalizer f from id's object.
func (c *collector) removeFinalizer(ctx context.Context, id ref, f string) error {
	return c.updateMeta(ctx, id, func(o *metav1.PartialObjectMetadata) bool {
		n := len(o.Finalizers)
		o.Finalizers = slices.DeleteFunc(o.Finalizers, func(s string) bool { return s == f })
		return len(o.Finalizers) != n
	})
}
