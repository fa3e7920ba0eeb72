package hook

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/labels"
)

// Reader reads the objects of one served kind, as the server's watch cache
// holds them (no etcd round trip). What it returns is shared: read only.
type Reader[O Object] interface {
	// Get is the object namespace/name ("" namespace for a
	// cluster-scoped kind); a missing one is a NotFound API error
	// (apierrors.IsNotFound).
	Get(ctx context.Context, namespace, name string) (O, error)
	// List is the objects in namespace ("" for all) that sel selects
	// (nil for all).
	List(ctx context.Context, namespace string, sel labels.Selector) ([]O, error)
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

// Get reads one object of kind O from the server's cache:
// hook.Get[*v1.Region](req, "", "eu-1").
func Get[O Object](req *Request, namespace, name string) (O, error) {
	r, err := reader[O](req)
	if err != nil {
		var zero O
		return zero, err
	}
	return r.Get(req.ctx, namespace, name)
}

// List reads the objects of kind O in namespace ("" for all) that sel
// selects (nil for all) from the server's cache.
func List[O Object](req *Request, namespace string, sel labels.Selector) ([]O, error) {
	r, err := reader[O](req)
	if err != nil {
		return nil, err
	}
	return r.List(req.ctx, namespace, sel)
}
