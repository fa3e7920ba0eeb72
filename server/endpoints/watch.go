package endpoints

import (
	"context"
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"

	"github.com/apiloom/apiloom/server/detach"
	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
	"github.com/apiloom/apiloom/server/endpoints/storageerr"
	"github.com/apiloom/apiloom/server/endpoints/watch"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// watch serves a watch: a 200 stream of one frame per event, the headers
// flushed at once. It ends cleanly when the timeout passes, the client
// goes away or storage ends the stream; a storage error (410 Expired for a
// watcher that fell behind) is sent as an ERROR event and then ends it.
// A WebSocket upgrade gets the same stream, one event per message.
//
// Over a connection that can carry a body from a detach.Source, the watch
// is handed to the connection as a watch.Source and the handler returns:
// an idle watch then holds no goroutine. Otherwise the handler's goroutine
// pumps the events, blocking in a storage.Blocking over the same watcher.
func (h *handler[O]) watch(w http.ResponseWriter, r *http.Request, lr request.List, out negotiation.Output) error {
	ws := watch.IsWebSocket(r)
	var detacher detach.Detacher
	if !ws {
		if detacher, _ = detach.Find(w); detacher == nil && !watch.CanFlush(w) {
			return errNoFlusher()
		}
	}

	timeout := watch.Timeout(lr.TimeoutSeconds)
	if timeout <= 0 {
		// Over before it began: kube-apiserver answers an empty stream.
		w.Header().Set("Content-Type", out.StreamContentType())
		w.WriteHeader(http.StatusOK)
		return nil
	}
	enc := h.eventEncoder(out)
	// A whole-object JSON watch writes the store's frames where it has them
	// (watch.Encoder.Frame): a store that keeps them need not decode.
	lr.Options.Encoded = enc.WritesFrames()
	if detacher != nil {
		// An idle detached watch holds its context for up to the
		// timeout: the stream's, without the request's values (detach),
		// and its timeout is the source's timer.
		ctx := detach.StreamContext(r.Context())
		watcher, err := h.store.Watch(ctx, lr.Options)
		if err != nil {
			return storageerr.Status(err, h.gr, "", storageerr.Watch)
		}
		watchInitialized(r)
		// The source owns the watcher from here on.
		w.Header().Set("Content-Type", out.StreamContentType())
		w.WriteHeader(http.StatusOK)
		detacher.DetachBody(watch.NewSource(r, ctx, timeout, watcher, enc))
		return nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	watcher, err := h.store.Watch(ctx, lr.Options)
	if err != nil {
		return storageerr.Status(err, h.gr, "", storageerr.Watch)
	}
	watchInitialized(r)
	events := storage.NewBlocking(watcher)
	defer events.Stop()
	if ws {
		watch.ServeWebSocket(ctx, w, r, events, &enc, h.limits.WatchWriteTimeout)
	} else {
		watch.StreamHTTP(ctx, w, r, events, &enc, out.StreamContentType(), h.limits.WatchWriteTimeout)
	}
	return nil
}

// watchInitialized tells API Priority and Fairness's filter that the
// watch is set up: the store has registered the watcher and taken the
// snapshot its initial events come from, which is the work kube-apiserver's
// watch cache signals at the same point. The filter then frees the seats
// the watch's initialization held; without the filter it does nothing.
func watchInitialized(r *http.Request) { utilflowcontrol.WatchInitialized(r.Context()) }

// errNoFlusher is kube-apiserver's answer to a watch it cannot stream.
func errNoFlusher() error {
	return apierrors.NewInternalError(errors.New("unable to start watch - can't get http.Flusher"))
}

// eventEncoder is the watch.Encoder of a watch negotiated as out.
func (h *handler[O]) eventEncoder(out negotiation.Output) watch.Encoder[O, eventView[O]] {
	format := watch.JSON
	switch out.Encoding {
	case negotiation.CBOR:
		format = watch.CBOR
	case negotiation.Protobuf:
		format = watch.Protobuf
	}
	form := watch.Form{Format: format, Whole: out.Target == negotiation.AsObject}
	return watch.NewEncoder[O](form, eventView[O]{h: h, out: out})
}

// eventView is the watch.View of a watch negotiated as out: its objects
// and its final Status as the handler encodes them.
type eventView[O resource.Object] struct {
	h   *handler[O]
	out negotiation.Output
}

// Object implements watch.View.
func (v eventView[O]) Object(obj O, headers bool) ([]byte, error) {
	switch v.out.Target {
	case negotiation.AsTable:
		t, err := v.h.table([]O{obj}, nil, v.out, headers)
		if err != nil {
			return nil, err
		}
		t.ResourceVersion = obj.GetResourceVersion()
		return responsewriters.EncodeView(t, v.out)
	case negotiation.AsPartial:
		return responsewriters.EncodeView(v.out.PartialObject(obj), v.out)
	default:
		return v.h.encodeObject(obj, v.out)
	}
}

// Status implements watch.View.
func (v eventView[O]) Status(err error) []byte {
	st := responsewriters.ToStatus(storageerr.Status(err, v.h.gr, "", storageerr.Watch))
	switch v.out.Encoding {
	case negotiation.CBOR, negotiation.Protobuf:
		return responsewriters.EncodeStatusAs(st, v.out)
	}
	return responsewriters.EncodeStatus(st)
}
