package convert

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// Storage is the storage of version O of a kind whose objects are stored
// as S: a storage.Interface[O] over the storage.Interface[S] of the
// storage version (its etcd store or watch cache), converting each object
// that passes. Keys, resource versions, preconditions and errors are the
// inner storage's: a version is a view of the same objects.
//
// Label selectors and metadata fields select the same objects in every
// version. A field selector on a spec field is evaluated on the stored
// object's field of the same path, or of the path the conversion's
// FieldLabels name (the generator allows a version only the selectable
// fields its storage version has, under either).
//
// The storage version may be in another API group (events.k8s.io/v1 Event
// is stored as core/v1 Event): keys, resource versions and history are
// then shared across the two groups.
type Storage[O, S resource.Object] struct {
	inner storage.Interface[S]
	def   *resource.Definition[O]
	conv  resource.Conversion[O, S]
	gvk   schema.GroupVersionKind // O's
	sgvk  schema.GroupVersionKind // S's
	// frames are the encoded watch frames of recent converted events,
	// shared by every watcher of this version.
	frames *frameMemo
}

var _ storage.Interface[resource.Object] = (*Storage[resource.Object, resource.Object])(nil)

// New returns the storage of def's version over inner, the storage of
// conv.Storage's version. It panics when a conversion function is nil or
// def names its storage version otherwise than conv does: generated code
// never does either.
func New[O, S resource.Object](inner storage.Interface[S], def *resource.Definition[O], conv resource.Conversion[O, S]) *Storage[O, S] {
	if conv.Storage == nil || conv.ToStorage == nil || conv.FromStorage == nil {
		panic(fmt.Sprintf("convert: %s: incomplete conversion", def.GroupVersionResource()))
	}
	if def.StorageGroupVersion() != conv.Storage.GroupVersion() || def.Kind != conv.Storage.Kind {
		panic(fmt.Sprintf("convert: %s is stored as %s, not %s", def.GroupVersionKind(), def.StorageGroupVersion(), conv.Storage.GroupVersionKind()))
	}
	return &Storage[O, S]{
		inner: inner, def: def, conv: conv,
		gvk: def.GroupVersionKind(), sgvk: conv.Storage.GroupVersionKind(),
		frames: newFrameMemo(defaultFrameMemo),
	}
}

// ErrConversion is wrapped by the error of a read or write whose object
// did not convert.
var ErrConversion = fmt.Errorf("convert: conversion failed")

// fromStorage is s in version O, with O's kind and apiVersion. The result
// may share memory with s, which may be shared: callers that change it
// copy it first, as they would s.
func (c *Storage[O, S]) fromStorage(s S) (O, error) {
	o := c.def.New()
	if err := c.conv.FromStorage(s, o); err != nil {
		var zero O
		return zero, fmt.Errorf("%w: %s to %s: %w", ErrConversion, c.sgvk.Version, c.gvk.Version, err)
	}
	o.GetObjectKind().SetGroupVersionKind(c.gvk)
	return o, nil
}

// toStorage is o in the storage version, with its kind and apiVersion.
func (c *Storage[O, S]) toStorage(o O) (S, error) {
	s := c.conv.Storage.New()
	if err := c.conv.ToStorage(o, s); err != nil {
		var zero S
		return zero, fmt.Errorf("%w: %s to %s: %w", ErrConversion, c.gvk.Version, c.sgvk.Version, err)
	}
	s.GetObjectKind().SetGroupVersionKind(c.sgvk)
	return s, nil
}

// Get implements storage.Interface.
func (c *Storage[O, S]) Get(ctx context.Context, key string, opts storage.GetOptions) (O, error) {
	s, err := c.inner.Get(ctx, key, opts)
	if err != nil {
		var zero O
		return zero, err
	}
	return c.fromStorage(s)
}

// GetList implements storage.Interface. The list's items are converted
// and encoded anew (Raw is nil): a list is one request's, a watch event
// many watchers'.
func (c *Storage[O, S]) GetList(ctx context.Context, opts storage.ListOptions) (*storage.List[O], error) {
	opts, err := c.storageOptions(opts)
	if err != nil {
		return nil, err
	}
	l, err := c.inner.GetList(ctx, opts)
	if err != nil {
		return nil, err
	}
	out := &storage.List[O]{
		Items:              make([]O, len(l.Items)),
		ResourceVersion:    l.ResourceVersion,
		Continue:           l.Continue,
		RemainingItemCount: l.RemainingItemCount,
		Corrupt:            l.Corrupt,
	}
	for i, s := range l.Items {
		if out.Items[i], err = c.fromStorage(s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Create implements storage.Interface.
func (c *Storage[O, S]) Create(ctx context.Context, key string, obj O) (O, error) {
	s, err := c.toStorage(obj)
	if err != nil {
		var zero O
		return zero, err
	}
	created, err := c.inner.Create(ctx, key, s)
	if err != nil {
		var zero O
		return zero, err
	}
	return c.fromStorage(created)
}

// GuaranteedUpdate implements storage.Interface: tryUpdate sees the
// current object in version O and its result is stored converted. The
// current object is the inner storage's copy, so its conversion is
// tryUpdate's to change.
func (c *Storage[O, S]) GuaranteedUpdate(ctx context.Context, key string, pre *storage.Preconditions, tryUpdate func(current O) (O, error)) (O, error) {
	updated, err := c.inner.GuaranteedUpdate(ctx, key, pre, func(cur S) (S, error) {
		var zero S
		o, err := c.fromStorage(cur)
		if err != nil {
			return zero, err
		}
		o, err = tryUpdate(o)
		if err != nil {
			return zero, err
		}
		return c.toStorage(o)
	})
	if err != nil {
		var zero O
		return zero, err
	}
	return c.fromStorage(updated)
}

// Delete implements storage.Interface.
func (c *Storage[O, S]) Delete(ctx context.Context, key string, pre *storage.Preconditions) (O, error) {
	deleted, err := c.inner.Delete(ctx, key, pre)
	if err != nil {
		var zero O
		return zero, err
	}
	return c.fromStorage(deleted)
}

// DeleteCorrupt implements storage.Interface: an unreadable value is
// unreadable in every version.
func (c *Storage[O, S]) DeleteCorrupt(ctx context.Context, key string, dryRun bool) error {
	return c.inner.DeleteCorrupt(ctx, key, dryRun)
}
