package storage

import (
	"context"
	"errors"

	"github.com/apiloom/apiloom/server/resource"
)

// DryRun is s as a dry run writes to it, kube-apiserver's
// DryRunnableStorage: reads are s's, and each write checks what s would
// check on a consistent read of the object and returns what s would
// return, storing nothing. The handlers write to it for a request with
// dryRun=All, so the write paths have no branch of their own for it.
func DryRun[O resource.Object](s Interface[O]) Interface[O] {
	return dryRun[O]{s}
}

type dryRun[O resource.Object] struct {
	Interface[O]
}

// Create implements Interface: ErrExists when the key holds a value, one
// that does not decode included (a create would find it taken); else obj.
func (d dryRun[O]) Create(ctx context.Context, key string, obj O) (O, error) {
	var zero O
	_, err := d.Get(ctx, key, GetOptions{})
	switch {
	case err == nil, errors.Is(err, ErrCorrupt):
		return zero, &Error{Err: ErrExists, Key: key}
	case errors.Is(err, ErrNotFound):
		return obj, nil
	default:
		return zero, err
	}
}

// GuaranteedUpdate implements Interface: tryUpdate's result on a copy of
// the object read, once the preconditions hold. Errors are the Get's.
func (d dryRun[O]) GuaranteedUpdate(ctx context.Context, key string, pre *Preconditions, tryUpdate func(current O) (O, error)) (O, error) {
	var zero O
	current, err := d.Get(ctx, key, GetOptions{})
	if err != nil {
		return zero, err
	}
	if err := CheckPreconditions(key, pre, current); err != nil {
		return zero, err
	}
	// What s returns may be shared with other readers (the watch cache's
	// is); tryUpdate may change what it is given.
	return tryUpdate(current.DeepCopyObject().(O))
}

// Delete implements Interface: the object read, once the preconditions
// hold.
func (d dryRun[O]) Delete(ctx context.Context, key string, pre *Preconditions) (O, error) {
	var zero O
	current, err := d.Get(ctx, key, GetOptions{})
	if err != nil {
		return zero, err
	}
	if err := CheckPreconditions(key, pre, current); err != nil {
		return zero, err
	}
	return current, nil
}

// DeleteCorrupt implements Interface: always a dry run.
func (d dryRun[O]) DeleteCorrupt(ctx context.Context, key string, _ bool) error {
	return d.Interface.DeleteCorrupt(ctx, key, true)
}
