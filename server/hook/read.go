package hook

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/labels"
)

// Reader reads the objects of one served kind. What it returns is shared:
// read only.
type Reader[O Object] interface {
	// Get is the object namespace/name ("" namespace for a
	// cluster-scoped kind); a missing one is a NotFound API error
	// (apierrors.IsNotFound).
	Get(ctx context.Context, namespace, name string, opts ReadOptions) (O, error)
	// List is the objects in namespace ("" for all) that sel selects
	// (nil for all).
	List(ctx context.Context, namespace string, sel labels.Selector, opts ReadOptions) ([]O, error)
}

// ReadOptions say how a Reader reads; the zero value is a cached read.
type ReadOptions struct {
	// Consistent asks for a read that reflects every write acknowledged
	// before it began, as a client's GET or LIST without a
	// resourceVersion does. Without it the reader answers from the watch
	// cache as it is, which may not yet hold a write that has just
	// returned.
	Consistent bool
}

// ReadOption sets one of the ReadOptions of Get or List.
type ReadOption func(*ReadOptions)

// Consistent makes Get or List see every write acknowledged before the
// call (a Database deleted by a request that has returned is gone), at the
// cost of one etcd round trip and, for List, of waiting until the watch
// cache has caught up with etcd's revision: the read a guard needs, whose
// answer decides whether a write is refused. The wait is bounded by the
// request's context (the hook's deadline, the server's shutdown).
func Consistent() ReadOption { return func(o *ReadOptions) { o.Consistent = true } }

// readOptions are the ReadOptions opts set.
func readOptions(opts []ReadOption) ReadOptions {
	var o ReadOptions
	for _, set := range opts {
		set(&o)
	}
	return o
}

// ErrNotServed is returned by Get and List for a type the server does not
// serve.
var ErrNotServed = errors.New("hook: kind not served")

// reader is the reader of O for req.
func reader[O Object](req *Request) (Reader[O], error) {
	t := reflect.TypeFor[O]()
	if req.readers != nil {
		if r, ok := req.readers.Reader(t).(Reader[O]); ok {
			return r, nil
		}
	}
	return nil, fmt.Errorf("%w: %v", ErrNotServed, t)
}

// Get reads one object of kind O: hook.Get[*v1.Region](req, "", "eu-1").
// By default it reads the server's watch cache, with no etcd round trip,
// and may miss a write that has just returned; with Consistent() it does
// not (a quorum read of etcd, as a client's GET).
func Get[O Object](req *Request, namespace, name string, opts ...ReadOption) (O, error) {
	r, err := reader[O](req)
	if err != nil {
		var zero O
		return zero, err
	}
	return r.Get(req.ctx, namespace, name, readOptions(opts))
}

// List reads the objects of kind O in namespace ("" for all) that sel
// selects (nil for all). By default it reads the server's watch cache as
// it is, with no etcd round trip, and may miss a write that has just
// returned; with Consistent() it first learns etcd's revision and waits
// until the cache has seen it, as a client's LIST without a
// resourceVersion does.
func List[O Object](req *Request, namespace string, sel labels.Selector, opts ...ReadOption) ([]O, error) {
	r, err := reader[O](req)
	if err != nil {
		return nil, err
	}
	return r.List(req.ctx, namespace, sel, readOptions(opts))
}
