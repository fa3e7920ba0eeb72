package endpoints

import (
	"errors"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiloom/apiloom/server/admission/ownerrefs"
	"github.com/apiloom/apiloom/server/endpoints/fieldmanager"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/endpoints/storageerr"
	"github.com/apiloom/apiloom/server/endpoints/strategy"
	"github.com/apiloom/apiloom/server/storage"
)

// create serves POST on a collection: 201 with the stored object. The name
// comes from the body (or its generateName, retried with a fresh suffix when
// taken), the namespace from the URL. dryRun=All checks everything,
// including that the name is free, and stores nothing. The creator, named
// by fieldManager or its User-Agent, owns every field it set.
func (h *handler[O]) create(w http.ResponseWriter, r *http.Request, rt route) error {
	out, opts, in, err := h.readWrite(w, r, request.ParseCreateOptions)
	if err != nil {
		return err
	}
	ctx := r.Context()
	ownerrefs.Dedup(ctx, in.obj, false)
	obj := h.trackCreate(in.obj, fieldmanager.ManagerName(opts.FieldManager, r.UserAgent()))
	generated := obj.GetName() == "" && obj.GetGenerateName() != ""
	if err := h.prepareCreate(ctx, obj, in.form, rt.namespace, time.Now()); err != nil {
		return err
	}
	var created O
	for attempt := 1; ; attempt++ {
		key := storage.Key(obj.GetNamespace(), obj.GetName())
		store := h.storage(opts.DryRun)
		created, err = store.Create(ctx, key, obj)
		if errors.Is(err, storage.ErrTooLarge) && len(obj.GetManagedFields()) > 0 {
			// Too large with its managed fields: stored without them,
			// as kube-apiserver does.
			obj.SetManagedFields(nil)
			created, err = store.Create(ctx, key, obj)
		}
		if !generated || !errors.Is(err, storage.ErrExists) || attempt == strategy.MaxGenerateNameAttempts {
			break
		}
		obj.SetName(strategy.GenerateName(obj.GetGenerateName()))
	}
	if generated && errors.Is(err, storage.ErrExists) {
		return apierrors.NewGenerateNameConflict(h.gr, obj.GetName(), 1)
	}
	if err != nil {
		return storageerr.Status(err, h.gr, obj.GetName(), storageerr.Other)
	}
	return h.writeObject(w, r, out, http.StatusCreated, created, in.warnings)
}
