package endpoints

import (
	"context"
	"errors"
	"net/http"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiloom/apiloom/server/endpoints/deletion"
	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/endpoints/storageerr"
	"github.com/apiloom/apiloom/server/storage"
)

// deleteCollection serves DELETE on a collection: every object the list
// options select is deleted as by delete, with the request's options and
// preconditions each, and the response is the list of them. Objects that
// vanish meanwhile are skipped. Like kube-apiserver it is not atomic: an
// error ends it with some objects deleted.
//
// As kube-apiserver's store, the objects are listed page by page while
// request.Limits.DeleteCollectionWorkers goroutines delete them (one by
// default: --delete-collection-workers). A worker whose delete fails stops
// and the others go on with what is listed; once every worker has stopped
// the listing ends too, and the first failure is the answer.
func (h *handler[O]) deleteCollection(w http.ResponseWriter, r *http.Request, rt route) error {
	out, err := h.negotiate(r, negotiation.ObjectList)
	if err != nil {
		return err
	}
	lr, err := h.parseListOptions(r.URL.Query(), rt.namespace, "")
	if err != nil {
		return err
	}
	opts, err := h.deleteOptions(w, r)
	if err != nil {
		return err
	}
	if deletion.Unsafe(opts) {
		// The unsafe delete names one object: the one that cannot be read.
		return request.InvalidOptions("DeleteOptions", field.ErrorList{field.Invalid(
			field.NewPath("ignoreStoreReadErrorWithClusterBreakingPotential"), true,
			"is not allowed with DELETECOLLECTION, try again after removing the option")})
	}
	ctx := r.Context()
	request.SetDelete(ctx, &opts)
	pool := h.startDeleters(ctx, deletion.Preconditions(opts), len(opts.DryRun) > 0, deletion.PropagationOf(opts))
	paged := lr.Options.Limit > 0
	if !paged {
		lr.Options.Limit = deleteCollectionPageSize
	}
	var items []O
	var listRV int64
	listErr := func() error {
		defer pool.close()
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			list, err := h.store.GetList(ctx, lr.Options)
			if err != nil {
				return storageerr.Status(err, h.gr, "", storageerr.List)
			}
			if listRV == 0 {
				listRV = list.ResourceVersion
			}
			items = append(items, list.Items...)
			for _, item := range list.Items {
				if !pool.send(item) {
					return nil // every worker stopped: pool.wait has why
				}
			}
			if paged || list.Continue == "" {
				return nil
			}
			lr.Options.Continue, lr.Options.ResourceVersion, lr.Options.ResourceVersionMatch = list.Continue, "", ""
		}
	}()
	// The workers are waited for even when the listing failed: they are
	// the request's.
	poolErr := pool.wait()
	if listErr != nil {
		return listErr
	}
	if poolErr != nil {
		return poolErr
	}
	return h.writeList(w, r, out, items, nil, nil, metav1.ListMeta{ResourceVersion: storage.FormatResourceVersion(listRV)})
}

// deleters are the goroutines of one deletecollection.
type deleters[O any] struct {
	items   chan O
	stopped chan struct{} // closed once every worker has returned
	wg      sync.WaitGroup

	mu    sync.Mutex
	first error // the first failure
}

// startDeleters starts the workers of a deletecollection: each deletes the
// items sent to it with pre, dryRun and prop, and stops at its first
// failure (an object already gone is none).
func (h *handler[O]) startDeleters(ctx context.Context, pre *storage.Preconditions, dryRun bool, prop deletion.Propagation) *deleters[O] {
	n := max(h.limits.DeleteCollectionWorkers, 1)
	// The buffer lets the next page be read while this one is deleted,
	// as upstream's (at least 256).
	d := &deleters[O]{items: make(chan O, max(2*n, 256)), stopped: make(chan struct{})}
	d.wg.Add(n)
	for range n {
		go func() {
			defer d.wg.Done()
			for item := range d.items {
				key := storage.Key(item.GetNamespace(), item.GetName())
				if _, _, err := h.deleteObject(ctx, key, pre, dryRun, prop); err != nil && !errors.Is(err, storage.ErrNotFound) {
					d.fail(storageerr.Status(err, h.gr, item.GetName(), storageerr.Other))
					return
				}
			}
		}()
	}
	go func() {
		d.wg.Wait()
		close(d.stopped)
	}()
	return d
}

// send hands item to a worker; false once every worker has stopped.
func (d *deleters[O]) send(item O) bool {
	select {
	case d.items <- item:
		return true
	case <-d.stopped:
		return false
	}
}

// close says no more items come.
func (d *deleters[O]) close() { close(d.items) }

// wait waits for the workers to finish what was sent and returns the first
// failure.
func (d *deleters[O]) wait() error {
	<-d.stopped
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.first
}

func (d *deleters[O]) fail(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.first == nil {
		d.first = err
	}
}
