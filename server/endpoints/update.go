package endpoints

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/admission/ownerrefs"
	"github.com/apiloom/apiloom/server/endpoints/fieldmanager"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/endpoints/storageerr"
	"github.com/apiloom/apiloom/server/endpoints/strategy"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// update serves PUT of an object or of its status: 200 with the stored
// object. The body must carry the stored resourceVersion (422 without one,
// 409 Conflict with another) and the object's name; it never creates. The
// writer, named by fieldManager or its User-Agent, comes to own the fields
// it changed.
func (h *handler[O]) update(w http.ResponseWriter, r *http.Request, rt route) error {
	out, opts, in, err := h.readWrite(w, r, request.ParseUpdateOptions)
	if err != nil {
		return err
	}
	if err := h.checkName(in.obj, rt); err != nil {
		return err
	}
	manager := fieldmanager.ManagerName(opts.FieldManager, r.UserAgent())
	ownerrefs.Dedup(r.Context(), in.obj, false)
	result, err := h.withoutManagedFieldsIfTooLarge(func(drop bool) (O, error) {
		return h.guaranteedUpdate(r.Context(), rt, opts.DryRun, func(current O) (O, error) {
			// tryUpdate may run again on a fresher object: work on a copy.
			obj := h.trackUpdate(copyObject(in.obj), current, manager, rt, drop)
			return h.prepareWrite(r.Context(), obj, current, in.form, rt)
		})
	})
	if err != nil {
		return err
	}
	return h.writeObject(w, r, out, http.StatusOK, result, in.warnings)
}

// prepareWrite is the object to store when obj, sent or patched by the
// client, is written over current through the route's endpoint: the main
// resource or its status. f is the form of what the client sent or its
// patch produced (nil for an apply).
func (h *handler[O]) prepareWrite(ctx context.Context, obj, current O, f *form, rt route) (O, error) {
	if rt.finalize {
		return h.prepareFinalize(ctx, obj, current)
	}
	if rt.status {
		return h.prepareStatusUpdate(ctx, obj, current, f)
	}
	if err := h.prepareUpdate(ctx, obj, current, f, rt.namespace); err != nil {
		var zero O
		return zero, err
	}
	return obj, nil
}

// checkName is 400 when the object in a body is not the one the URL names.
// kube-apiserver checks the namespace first, and words that as
// ensureNamespace does.
func (h *handler[O]) checkName(obj metav1.Object, rt route) error {
	switch {
	case h.def.Namespaced && obj.GetNamespace() != "" && obj.GetNamespace() != rt.namespace:
		return strategy.ErrNamespaceMismatch
	case obj.GetName() == "":
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s based on URL) was undeterminable: name must be provided", rt.name))
	case obj.GetName() != rt.name:
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", obj.GetName(), rt.name))
	}
	return nil
}

// errEmptiedFinalizers stops an update that removed the last finalizer of
// an object being deleted: the object is deleted instead.
var errEmptiedFinalizers = errors.New("endpoints: emptied finalizers")

// guaranteedUpdate writes what tryUpdate makes of the stored object at the
// route's key and returns the result, with storage errors turned into API
// errors. With dryRun it computes the result from a consistent read and
// stores nothing.
//
// An update that removes the last finalizer of an object whose deletion
// was requested deletes it instead, as kube-apiserver does; the response is
// then the object as the update left it.
func (h *handler[O]) guaranteedUpdate(ctx context.Context, rt route, dryRun bool, tryUpdate func(current O) (O, error)) (O, error) {
	var zero O
	key := h.key(rt)
	var emptied, last O
	try := func(current O) (O, error) {
		obj, err := tryUpdate(current)
		if err != nil {
			return zero, err
		}
		if len(obj.GetFinalizers()) == 0 && !h.ownFinalizersPending(obj) && current.GetDeletionTimestamp() != nil &&
			(current.GetDeletionGracePeriodSeconds() == nil || *current.GetDeletionGracePeriodSeconds() == 0) {
			emptied, last = obj, current
			return zero, errEmptiedFinalizers
		}
		return obj, nil
	}

	store := h.storage(dryRun)
	result, err := store.GuaranteedUpdate(ctx, key, nil, try)
	if errors.Is(err, errEmptiedFinalizers) {
		uid, rv := string(last.GetUID()), last.GetResourceVersion()
		if _, err := store.Delete(ctx, key, &storage.Preconditions{UID: &uid, ResourceVersion: &rv}); err != nil && !errors.Is(err, storage.ErrNotFound) {
			return zero, storageerr.Status(err, h.gr, rt.name, storageerr.Other)
		}
		return emptied, nil
	}
	if err != nil {
		// A dry run read the object with Get, and kube-apiserver words
		// its errors as a Get's.
		v := storageerr.Update
		if dryRun {
			v = storageerr.Other
		}
		return zero, storageerr.Status(err, h.gr, rt.name, v)
	}
	return result, nil
}

// copyObject returns a deep copy of obj.
func copyObject[O resource.Object](obj O) O {
	return obj.DeepCopyObject().(O)
}
