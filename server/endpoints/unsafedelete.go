package endpoints

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
	"github.com/apiloom/apiloom/server/storage"
)

// deleteCorrupt serves a DELETE with
// DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential, the
// unsafe delete of an object whose stored value does not decode, as
// kube-apiserver does it for a custom resource (KEP-3926): the value is
// removed without being read, so no finalizer, admission or other check
// of its content runs (validation has already refused preconditions,
// propagation policy and grace period with the option). An object that
// decodes is refused with 409 Conflict, a missing one is 404. The answer
// is 200 with a Success Status naming the object, since there is no object
// to return; dryRun checks and answers the same without deleting.
//
// As kube-apiserver, it needs more than the delete verb: the user must
// also be allowed unsafe-delete-ignore-read-errors on the object
// (authorizeUnsafeDelete), so only those trusted to break a cluster's
// invariants may skip its finalizers and admission.
func (h *handler[O]) deleteCorrupt(w http.ResponseWriter, r *http.Request, rt route, out output, dryRun bool) error {
	if err := h.authorizeUnsafeDelete(r.Context(), rt); err != nil {
		return err
	}
	if err := h.storage(dryRun).DeleteCorrupt(r.Context(), h.key(rt), dryRun); err != nil {
		return storageStatus(err, h.gr, rt.name, verbOther)
	}
	return writeStatus(w, out, metav1.Status{
		Status:  metav1.StatusSuccess,
		Code:    http.StatusOK,
		Details: &metav1.StatusDetails{Name: rt.name, Kind: h.gvk.Kind},
	})
}

// unsafeDeleteVerb is the verb the unsafe delete needs besides delete.
const unsafeDeleteVerb = "unsafe-delete-ignore-read-errors"

// authorizeUnsafeDelete is nil when the request's user may do
// unsafeDeleteVerb on the object rt names, and otherwise the 403 (or,
// without an authorizer, the 500) kube-apiserver answers.
func (h *handler[O]) authorizeUnsafeDelete(ctx context.Context, rt route) error {
	if h.authz == nil {
		return apierrors.NewInternalError(errors.New("no authorizer provided, unable to authorize unsafe delete"))
	}
	u, _ := genericrequest.UserFrom(ctx)
	attrs := authorizer.AttributesRecord{
		User: u, Verb: unsafeDeleteVerb, Namespace: rt.namespace, Name: rt.name,
		APIGroup: h.gvk.Group, APIVersion: h.gvk.Version, Resource: h.gr.Resource, ResourceRequest: true,
	}
	decision, reason, err := h.authz.Authorize(ctx, attrs)
	switch {
	case err != nil:
		return apierrors.NewForbidden(h.gr, rt.name, fmt.Errorf("error while checking permission for %q, %w", unsafeDeleteVerb, err))
	case decision != authorizer.DecisionAllow:
		return apierrors.NewForbidden(h.gr, rt.name, fmt.Errorf("not permitted to do %q, reason: %s", unsafeDeleteVerb, reason))
	}
	return nil
}

// unsafeDelete reports whether opts ask for the unsafe delete.
func unsafeDelete(opts metav1.DeleteOptions) bool {
	o := opts.IgnoreStoreReadErrorWithClusterBreakingPotential
	return o != nil && *o
}

// writeStatus answers with a Status that is the result of a request, not
// an error, in the negotiated encoding: kube-apiserver returns a Status
// as it is whatever view (;as=Table) the client asked for.
func writeStatus(w http.ResponseWriter, out output, s metav1.Status) error {
	return responsewriters.WriteEncoded(w, out, int(s.Code), responsewriters.EncodeStatusAs(s, out), nil)
}

// corruptStatus is the API error for an object whose stored value does not
// decode (storage.ErrCorrupt), worded as kube-apiserver words it for a
// custom resource. A read or a delete is a 500 InternalError quoting its
// storage error, which names the key and the decode error; an update,
// whose storage layer returns the decode error unwrapped, is a 500 with
// only that message and no reason.
func corruptStatus(se *storage.Error, gr schema.GroupResource, v verb) error {
	cause := fmt.Sprintf("object not decodable revision=%d: %s", se.ResourceVersion, se.Detail)
	if v == verbUpdate {
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: cause,
		}}
	}
	return apierrors.NewInternalError(fmt.Errorf("StorageError: corrupt object, Code: 7, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: %s",
		registryKey(gr, se.Key), cause))
}

// notCorruptStatus is the 409 Conflict kube-apiserver answers an unsafe
// delete of an object that decodes with (storage.ErrNotCorrupt); its
// storage error names the full etcd key.
func notCorruptStatus(se *storage.Error, gr schema.GroupResource, name string) error {
	return apierrors.NewConflict(gr, name, fmt.Errorf("StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: %s",
		se.StoredKey, se.Detail))
}

// registryKey is kube-apiserver's key of an object relative to the
// server-wide etcd prefix, "/<group>/<resource>/<namespace>/<name>" for a
// custom resource, which is where storage.ResourcePrefix puts it too.
func registryKey(gr schema.GroupResource, key string) string {
	var b strings.Builder
	b.WriteByte('/')
	if gr.Group != "" {
		b.WriteString(gr.Group)
		b.WriteByte('/')
	}
	b.WriteString(gr.Resource)
	b.WriteByte('/')
	b.WriteString(key)
	return b.String()
}
