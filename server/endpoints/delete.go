package endpoints

import (
	"context"
	"errors"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/endpoints/deletion"
	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
	"github.com/apiloom/apiloom/server/endpoints/storageerr"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/wire"
)

// deleteCollectionPageSize is how many objects deletecollection reads per
// page when the client sets no limit (kube-apiserver's value).
const deleteCollectionPageSize = 10000

// delete serves DELETE of one object: 200 with the object as it was
// deleted (its resourceVersion is the deletion's revision). An object with
// finalizers is only marked (deletionTimestamp) and returned; the update
// that removes its last finalizer deletes it. DeleteOptions come from the
// body or, without one, the query; preconditions that do not hold are 409.
// The propagation policy decides the garbage-collection finalizers first
// (deletion.Propagation). With ignoreStoreReadErrorWithClusterBreakingPotential it
// is the unsafe delete of an object that cannot be read (deleteCorrupt).
func (h *handler[O]) delete(w http.ResponseWriter, r *http.Request, rt route) error {
	out, err := h.negotiate(r, negotiation.OneObject)
	if err != nil {
		return err
	}
	opts, err := h.deleteOptions(w, r)
	if err != nil {
		return err
	}
	request.SetDelete(r.Context(), &opts)
	if deletion.Unsafe(opts) {
		// The object cannot be read: admitted by its name alone.
		if err := h.admitDelete(r.Context(), rt.name, rt.namespace); err != nil {
			return err
		}
		return h.deleteCorrupt(w, r, rt, out, len(opts.DryRun) > 0)
	}
	obj, gone, err := h.deleteObject(r.Context(), h.key(rt), deletion.Preconditions(opts), len(opts.DryRun) > 0, deletion.PropagationOf(opts))
	if err != nil {
		return storageerr.Status(err, h.gr, rt.name, storageerr.Other)
	}
	if gone && h.def.Strategy.DeleteAnswersStatus {
		// As kube-apiserver's store without ReturnDeletedObject: the
		// details name the resource in their kind.
		// Its Status has no code of its own.
		st := metav1.Status{Status: metav1.StatusSuccess, Details: &metav1.StatusDetails{
			Name: obj.GetName(), Group: h.gr.Group, Kind: h.gr.Resource, UID: obj.GetUID(),
		}}
		data := responsewriters.EncodeStatusAs(st, out)
		st.Kind, st.APIVersion = "Status", "v1"
		h.auditResponse(r.Context(), &st, true)
		return responsewriters.WriteEncoded(w, out, http.StatusOK, data, nil)
	}
	return h.writeObject(w, r, out, http.StatusOK, obj, nil)
}

// deleteObject deletes the object at key, or marks it deleted when it has
// finalizers once prop's are set (deletion.Propagation). With dryRun it only
// checks and returns what would be. gone says the object was (or, with
// dryRun, would be) removed rather than marked.
func (h *handler[O]) deleteObject(ctx context.Context, key string, pre *storage.Preconditions, dryRun bool, prop deletion.Propagation) (obj O, gone bool, err error) {
	var zero O
	current, err := h.store.Get(ctx, key, storage.GetOptions{})
	if err != nil {
		return zero, false, err
	}
	if err := h.admitStoredDelete(ctx, current); err != nil {
		return zero, false, err
	}
	if h.def.Finalize != nil && (current.GetDeletionTimestamp() == nil || h.def.Finalize.Pending(current)) {
		obj, err := h.markFinalizing(ctx, key, pre, current, dryRun, prop)
		return obj, false, err
	}
	if h.def.Finalize == nil {
		// The registry store checks the preconditions on the object read
		// before anything else (rest.BeforeDelete); a kind with its own
		// finalize lifecycle, a Namespace, has its own storage that does not.
		if err := h.precondition(pre, current); err != nil {
			return zero, false, err
		}
	}
	store := h.storage(dryRun)
	if _, changed := prop.Finalizers(current); !changed && len(current.GetFinalizers()) == 0 {
		obj, err := store.Delete(ctx, key, pre)
		return obj, err == nil, err
	}
	marked, err := store.GuaranteedUpdate(ctx, key, pre, func(cur O) (O, error) {
		if !prop.Apply(cur) {
			return zero, errNoFinalizers
		}
		deletion.Mark(cur, time.Now())
		return cur, nil
	})
	if !errors.Is(err, errNoFinalizers) {
		return marked, false, err
	}
	// No finalizer is left (they went away meanwhile, or the policy
	// removed the last): delete now.
	obj, err = store.Delete(ctx, key, pre)
	return obj, err == nil, err
}

// precondition is deletion.CheckPreconditions for this kind. The kind is
// qualified only when there are preconditions: that costs a parse of the
// storage version.
func (h *handler[O]) precondition(pre *storage.Preconditions, current O) error {
	if pre == nil {
		return nil
	}
	// Upstream qualifies the kind by the group, in the resource's place.
	qualified := schema.GroupResource{Group: h.def.StorageGroupVersion().Group, Resource: h.gvk.Kind}
	return deletion.CheckPreconditions(pre, current, qualified)
}

// errNoFinalizers stops marking an object whose finalizers were removed
// since it was read; it is deleted instead.
var errNoFinalizers = errors.New("endpoints: no finalizers")

// deleteOptions reads DeleteOptions from the request body, decoded
// leniently (kind DeleteOptions of any version, or none), or from the query
// when there is no body, and validates them (422 Invalid).
func (h *handler[O]) deleteOptions(w http.ResponseWriter, r *http.Request) (metav1.DeleteOptions, error) {
	body, err := h.readBody(w, r)
	if err != nil {
		return metav1.DeleteOptions{}, err
	}
	var opts metav1.DeleteOptions
	if len(body) > 0 {
		data, err := request.BodyJSON(r, body, false, h.formats())
		if err != nil {
			return opts, err
		}
		if _, err := (wire.Decoder{}).Decode(data, &opts); err != nil {
			return opts, apierrors.NewBadRequest(err.Error())
		}
		if opts.Kind != "" && opts.Kind != "DeleteOptions" {
			return opts, apierrors.NewBadRequest("decoded object cannot be converted to DeleteOptions")
		}
	} else if opts, err = request.DeleteQueryOptions(r.URL.Query()); err != nil {
		return opts, err
	}
	h.auditDeleteOptions(r.Context(), opts)
	return opts, request.ValidateDeleteOptions(&opts)
}
