package endpoints

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/endpoints/deletion"
	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
	"github.com/apiloom/apiloom/server/endpoints/storageerr"
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
// (deletion.AuthorizeUnsafe), so only those trusted to break a cluster's
// invariants may skip its finalizers and admission.
func (h *handler[O]) deleteCorrupt(w http.ResponseWriter, r *http.Request, rt route, out negotiation.Output, dryRun bool) error {
	if err := deletion.AuthorizeUnsafe(r.Context(), h.authz, h.gvk.GroupVersion(), h.gr, rt.namespace, rt.name); err != nil {
		return err
	}
	if err := h.storage(dryRun).DeleteCorrupt(r.Context(), h.key(rt), dryRun); err != nil {
		return storageerr.Status(err, h.gr, rt.name, storageerr.Other)
	}
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Code:     http.StatusOK,
		Details:  &metav1.StatusDetails{Name: rt.name, Kind: h.gvk.Kind},
	}
	h.auditResponse(r.Context(), &st, true)
	return writeStatus(w, out, st)
}

// writeStatus answers with a Status that is the result of a request, not
// an error, in the negotiated encoding: kube-apiserver returns a Status
// as it is whatever view (;as=Table) the client asked for.
func writeStatus(w http.ResponseWriter, out negotiation.Output, s metav1.Status) error {
	return responsewriters.WriteEncoded(w, out, int(s.Code), responsewriters.EncodeStatusAs(s, out), nil)
}
