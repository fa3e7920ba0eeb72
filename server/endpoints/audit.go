package endpoints

import (
	"bytes"
	"context"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"

	"github.com/apiloom/apiloom/server/endpoints/auditlog"
	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/wire"
)

// The audit event's request and response objects, where kube-apiserver's
// REST handlers record them (package auditlog): the decoded object of a
// create or update (auditRequest, in readWrite), a patch's body
// (readPatch), DeleteOptions (deleteOptions), the object or view returned
// (writeObject, writeScale, get's stored bytes), a list (writeList) and an
// error's Status (responsewriters.WriteStatusError). All of it is skipped
// when the request is not audited.

// auditRequest records obj, decoded from the request body.
// The subresource is the request's, in the event already.
func (h *handler[O]) auditRequest(ctx context.Context, obj runtime.Object) {
	auditlog.RequestObject(ctx, obj, h.gr.WithVersion(h.gvk.Version), "", h.encodeJSON)
}

// encodeJSON encodes an object of the resource as it is served.
func (h *handler[O]) encodeJSON(obj runtime.Object) ([]byte, error) {
	return wire.EncodeObject(obj, h.gvk)
}

// auditResponse records the object a request is answered with (obj of the
// resource, or its Table or partial view, encoded by their own kind).
func (h *handler[O]) auditResponse(ctx context.Context, obj runtime.Object, view bool) {
	if view {
		auditlog.ResponseObject(ctx, obj, encodeView)
		return
	}
	auditlog.ResponseObject(ctx, obj, h.encodeJSON)
}

// encodeView encodes a response view that carries its own kind (a Table,
// a partial object, a Status, a Scale, DeleteOptions).
func encodeView(obj runtime.Object) ([]byte, error) { return json.Marshal(obj) }

// auditList records a list response, encoded once more as JSON, from level
// RequestResponse on.
func (h *handler[O]) auditList(ctx context.Context, items []O, raw [][]byte, lm metav1.ListMeta, out negotiation.Output) {
	if auditlog.Level(ctx).Less(auditinternal.LevelRequestResponse) {
		return
	}
	out.Encoding, out.Gzip = negotiation.JSON, false
	var buf bytes.Buffer
	if err := h.encodeList(&buf, items, raw, lm, out); err != nil {
		return
	}
	auditlog.ResponseJSON(ctx, buf.Bytes())
}

// auditDeleteOptions records a delete's options as kube-apiserver does,
// meta.k8s.io/v1 DeleteOptions.
func (h *handler[O]) auditDeleteOptions(ctx context.Context, opts metav1.DeleteOptions) {
	if !auditlog.Audited(ctx) {
		return
	}
	opts.TypeMeta = metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "meta.k8s.io/v1"}
	auditlog.RequestObject(ctx, &opts, h.gr.WithVersion(h.gvk.Version), "", encodeView)
}
