package endpoints

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
)

// WriteAdmission is a check of a kind's writes that needs the request
// itself (its user, from the context's request.UserFrom) and answers with
// an error of its own rather than a validation's 422: RBAC's escalation
// prevention refuses a Role that grants what its writer does not hold
// with 403 Forbidden. The registry gives one to the kinds that have one
// (WithWriteAdmission), from what the server passes it.
type WriteAdmission interface {
	// Admit is nil when the request of ctx may store obj: a create when
	// old is nil, else an update of old (the stored object). Otherwise it
	// is the error the client gets, an APIStatus (apierrors); another
	// error is answered as a 500. It must change neither obj nor old.
	Admit(ctx context.Context, obj, old runtime.Object) error
}

// WithWriteAdmission admits the resource's creates and updates by a as
// well: every path that stores an object of the main resource or of
// /scale reaches it (create, update, every patch type, server-side apply,
// dryRun), once the object to store is complete and before it is
// validated, the order in which kube-apiserver's RBAC storage checks
// escalation before its strategy validates.
func WithWriteAdmission(a WriteAdmission) Option {
	return func(c *handlerConfig) { c.writeAdmission = a }
}

// admitWrite is a's verdict on obj, the object a create (old the zero
// value, create true) or an update of old would store; nil without one.
func (h *handler[O]) admitWrite(ctx context.Context, obj, old O, create bool) error {
	if h.writeAdmission == nil {
		return nil
	}
	var prev runtime.Object
	if !create {
		prev = old
	}
	return h.writeAdmission.Admit(ctx, obj, prev)
}
