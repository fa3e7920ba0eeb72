package hook

import (
	"context"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
)

// Object is what every served type is (resource.Object): a hook's type
// parameter is a pointer type such as *v1.Database.
type Object interface {
	runtime.Object
	metav1.Object
}

// Operation is what a write does to the object, as admission names it.
type Operation string

// The operations hooks see, as kube-apiserver's admission attributes.
const (
	Create Operation = "CREATE"
	Update Operation = "UPDATE"
	Delete Operation = "DELETE"
)

// Warnings are what a validation hook tells the client without refusing
// the write: each becomes a `Warning: 299 - "..."` response header, which
// kubectl prints on stderr and client-go hands to its warning handler.
type Warnings []string

// Hooks are a kind's hooks; any may be nil. Generated code fills them from
// the methods of the kind's type in hooks/<group>/<version>. Objects
// passed as old, and any object a hook reads through Get or List, are
// shared with the server and must not be changed; obj is the request's own.
type Hooks[O Object] struct {
	// Default sets defaults on obj after the schema's (marker) defaults,
	// on every write of the object (create, update, patch, apply, status).
	Default func(req *Request, obj O)
	// PrepareForCreate changes obj, the object a create stores, before it
	// is validated: kube-apiserver's strategy PrepareForCreate.
	PrepareForCreate func(req *Request, obj O)
	// PrepareForUpdate changes obj, the object an update of the main
	// resource (or of /scale) stores over old, before it is validated.
	PrepareForUpdate func(req *Request, obj, old O)
	// PrepareForStatusUpdate is PrepareForUpdate for writes to /status.
	PrepareForStatusUpdate func(req *Request, obj, old O)
	// ValidateCreate, ValidateUpdate and ValidateStatusUpdate run once
	// the metadata rules and the schema accept obj; errors become one 422
	// Invalid with a cause each, as the schema's do.
	ValidateCreate       func(req *Request, obj O) (Warnings, field.ErrorList)
	ValidateUpdate       func(req *Request, obj, old O) (Warnings, field.ErrorList)
	ValidateStatusUpdate func(req *Request, obj, old O) (Warnings, field.ErrorList)
	// ValidateDelete runs before obj, the stored object, is deleted (or
	// marked for deletion); errors refuse the delete with 403 Forbidden,
	// as kube-apiserver's admission refuses a delete.
	ValidateDelete func(req *Request, obj O) (Warnings, field.ErrorList)
}

// Mutates reports whether h has a hook that may change the object.
func (h *Hooks[O]) Mutates() bool {
	return h != nil && (h.Default != nil || h.PrepareForCreate != nil || h.PrepareForUpdate != nil || h.PrepareForStatusUpdate != nil)
}

// Request is what a hook knows of the write it admits. It is valid only
// during the call.
type Request struct {
	ctx context.Context
	// Operation is CREATE, UPDATE or DELETE; CREATE for an action of
	// the kind's own (a POST to its subresource), READ for a view or a
	// stream.
	Operation Operation
	// Subresource is "" for the main resource, "status" or "scale", or
	// the name of the kind's own subresource being called ("backup").
	Subresource string
	// DryRun is true when nothing will be stored: a hook with side
	// effects must not have them.
	DryRun bool
	// User is the requesting user, when the server authenticates users;
	// nil otherwise.
	User user.Info
	// Namespace and Name are the object's.
	Namespace, Name string

	readers Readers
	// writers are set on an action's request only (WithWriters).
	writers Writers
}

// Context is the request's context, with the hook's deadline: a hook that
// waits on anything must stop when it is done.
func (r *Request) Context() context.Context { return r.ctx }

// Readers finds the reader of a served kind by its Go type (a pointer
// type such as *v1.Region); the server implements it over its caches.
type Readers interface {
	Reader(t reflect.Type) any
}

// NewRequest returns a Request; the server calls it (and tests).
func NewRequest(ctx context.Context, op Operation, subresource string, dryRun bool, u user.Info, namespace, name string, readers Readers) *Request {
	return &Request{ctx: ctx, Operation: op, Subresource: subresource, DryRun: dryRun, User: u, Namespace: namespace, Name: name, readers: readers}
}

// withContext is r with ctx.
func (r *Request) withContext(ctx context.Context) *Request {
	c := *r
	c.ctx = ctx
	return &c
}
