package request

import (
	"context"
	"net/http"
	"net/url"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"

	"k8s.io/apiserver/pkg/warning"

	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
)

// Write is what a write's admission (the chain, the kind's hooks) knows of
// its request beyond the object, and where its warnings go: carried in the
// context of every write (WithWrite), as k8s.io/apiserver's warning
// recorder too (warning.AddWarning).
type Write struct {
	w http.ResponseWriter
	// Subresource is "" for the main resource, else "status", "scale" or
	// "finalize".
	Subresource string
	DryRun      bool
	// query is the request's query, of which the options admission is
	// given are made (Options).
	query url.Values
	// deleteOptions are a DELETE's, from its body or query (SetDelete).
	deleteOptions *metav1.DeleteOptions
	// warned are the warnings already added to w's header.
	warned map[string]bool
}

var _ warning.Recorder = (*Write)(nil)

type writeKey struct{}

// WithWrite is r, a write to subresource answered through w, with its
// Write in its context. dryRun is the query's; a DELETE's body may set it
// (SetDryRun).
func WithWrite(r *http.Request, w http.ResponseWriter, subresource string) *http.Request {
	q := r.URL.Query()
	a := &Write{w: w, Subresource: subresource, DryRun: len(q["dryRun"]) > 0, query: q}
	ctx := context.WithValue(r.Context(), writeKey{}, a)
	return r.WithContext(warning.WithWarningRecorder(ctx, a))
}

// WriteOf is ctx's Write; outside a write, an empty one shared by all,
// which adds no warning (it has no response) and must not be changed.
func WriteOf(ctx context.Context) *Write {
	if a, ok := ctx.Value(writeKey{}).(*Write); ok {
		return a
	}
	return &noWrite
}

// noWrite is the Write outside a write.
var noWrite Write

// SetDelete records a DELETE's options, which may come in a body.
func SetDelete(ctx context.Context, opts *metav1.DeleteOptions) {
	if a, ok := ctx.Value(writeKey{}).(*Write); ok {
		a.DryRun = len(opts.DryRun) > 0
		a.deleteOptions = opts
	}
}

// Options are the operation's options as admission plugins are given
// them (admission.Attributes' GetOperationOptions, the AdmissionReview's
// options): CreateOptions of a create, UpdateOptions of an update or a
// patch (as kube-apiserver gives a patch), the DeleteOptions of a delete;
// with their apiVersion and kind, as webhooks receive them.
func (a *Write) Options(op admission.Operation) runtime.Object {
	q := a.query
	switch op {
	case admission.Create:
		o := &metav1.CreateOptions{DryRun: q["dryRun"], FieldManager: q.Get("fieldManager"), FieldValidation: q.Get("fieldValidation")}
		o.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("CreateOptions"))
		return o
	case admission.Update:
		o := &metav1.UpdateOptions{DryRun: q["dryRun"], FieldManager: q.Get("fieldManager"), FieldValidation: q.Get("fieldValidation")}
		o.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("UpdateOptions"))
		return o
	case admission.Delete:
		o := &metav1.DeleteOptions{}
		if a.deleteOptions != nil {
			*o = *a.deleteOptions
		}
		o.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("DeleteOptions"))
		return o
	}
	return nil
}

// AddWarning implements warning.Recorder: the warning is added to the
// response's Warning headers, once; nothing outside a write.
func (a *Write) AddWarning(_, text string) {
	if a.w == nil || a.warned[text] {
		return
	}
	if a.warned == nil {
		a.warned = map[string]bool{}
	}
	a.warned[text] = true
	responsewriters.WriteWarnings(a.w, []string{text})
}
