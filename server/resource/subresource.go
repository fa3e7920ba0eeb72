package resource

import (
	"io"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apiloom/apiloom/server/hook"
)

// SubresourceType is what a kind's own subresource does.
type SubresourceType string

// The kinds of a kind's own subresources (package hook says how each is
// written).
const (
	// Action is a POST with a typed body and a typed result, which may
	// write objects through the server's write path: RBAC verb create.
	Action SubresourceType = "action"
	// View is a GET answering a typed result computed from the parent
	// object and anything the caches hold: RBAC verb get.
	View SubresourceType = "view"
	// Stream is a GET whose answer is a byte stream written for as long as
	// the handler likes (as pods/log), long-running: RBAC verb get.
	Stream SubresourceType = "stream"
)

// Custom is one of a kind's own subresources with its handler, typed by
// the parent kind O and type-erased in its input and result (NewAction,
// NewView and NewStream type them).
type Custom[O Object] struct {
	// Name is the path segment after the object's name ("backup").
	Name string
	Type SubresourceType
	// NewInput makes an empty input: an action's body, a stream's options
	// (decoded from the query string). nil for a view.
	NewInput func() runtime.Object
	// InputSchema is the structural schema (as Info.Schema) an action's
	// input is defaulted and validated by; "" for none.
	InputSchema string
	// Exactly one of Action, View and Stream is set, as Type says.
	Action func(req *hook.Request, obj O, in runtime.Object) (runtime.Object, error)
	View   func(req *hook.Request, obj O) (runtime.Object, error)
	Stream func(req *hook.Request, obj O, opts runtime.Object, w io.Writer) error
}

// NewAction is the action name served by fn, reading an I made by newIn.
func NewAction[O Object, I, R runtime.Object](name string, newIn func() I, inputSchema string, fn func(*hook.Request, O, I) (R, error)) Custom[O] {
	return Custom[O]{
		Name: name, Type: Action,
		NewInput:    func() runtime.Object { return newIn() },
		InputSchema: inputSchema,
		Action: func(req *hook.Request, obj O, in runtime.Object) (runtime.Object, error) {
			r, err := fn(req, obj, in.(I))
			if err != nil {
				return nil, err
			}
			return r, nil
		},
	}
}

// NewView is the view name served by fn.
func NewView[O Object, R runtime.Object](name string, fn func(*hook.Request, O) (R, error)) Custom[O] {
	return Custom[O]{
		Name: name, Type: View,
		View: func(req *hook.Request, obj O) (runtime.Object, error) {
			r, err := fn(req, obj)
			if err != nil {
				return nil, err
			}
			return r, nil
		},
	}
}

// NewStream is the stream name served by fn, with options P made by
// newOpts and decoded from the query string.
func NewStream[O Object, P runtime.Object](name string, newOpts func() P, fn func(*hook.Request, O, P, io.Writer) error) Custom[O] {
	return Custom[O]{
		Name: name, Type: Stream,
		NewInput: func() runtime.Object { return newOpts() },
		Stream: func(req *hook.Request, obj O, opts runtime.Object, w io.Writer) error {
			return fn(req, obj, opts.(P), w)
		},
	}
}
