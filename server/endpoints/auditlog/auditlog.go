// Package auditlog is how apiloom's own resource handlers put request and
// response objects into a request's audit event, as kube-apiserver's REST
// handlers do with k8s.io/apiserver/pkg/audit: the request object as
// decoded (a patch as received), the response object as returned, both
// JSON. The event is the one the server's audit filter started; every
// function does nothing, and costs a context lookup, unless the request's
// level asks for what it records (Level).
package auditlog

import (
	"context"
	"errors"
	"io"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/audit"
)

// inUse is set once a server of this process audits (SetInUse): until
// then every function here returns at once, without the context lookup
// (which walks the request's whole context, a dozen values, to miss).
var inUse atomic.Bool

// SetInUse is called by a server that audits, before it serves. It is
// process-wide, as k8s.io/apiserver's audit metrics are: another server
// of the process without audit then only looks its requests up.
func SetInUse() { inUse.Store(true) }

// InUse reports whether a server of this process audits.
func InUse() bool { return inUse.Load() }

// Level is the audit level of ctx's request: None when audit is off or
// the policy gives the request none.
func Level(ctx context.Context) auditinternal.Level {
	if !inUse.Load() {
		return auditinternal.LevelNone
	}
	ac := audit.AuditContextFrom(ctx)
	if ac == nil {
		return auditinternal.LevelNone
	}
	if l := ac.GetEventLevel(); l != "" {
		return l
	}
	return auditinternal.LevelNone
}

// Audited reports whether ctx's request has an audit event (audit is on
// and the policy's level for it is not None).
func Audited(ctx context.Context) bool {
	return Level(ctx) != auditinternal.LevelNone
}

// Encode encodes an object as JSON with its apiVersion and kind, for the
// event.
type Encode func(runtime.Object) ([]byte, error)

// RequestObject records obj, the request's object as decoded: from
// Metadata on, its namespace, name, uid and resourceVersion complete the
// event's objectRef (a create's name is only in its body); from Request
// on, obj itself. gvr and subresource are the request's.
func RequestObject(ctx context.Context, obj runtime.Object, gvr schema.GroupVersionResource, subresource string, enc Encode) {
	if !Audited(ctx) {
		return
	}
	audit.LogRequestObject(ctx, obj, gvr.GroupVersion(), gvr, subresource, serializer{enc})
}

// RequestPatch records a patch's body, JSON, from level Request on.
func RequestPatch(ctx context.Context, patch []byte) {
	if Level(ctx).Less(auditinternal.LevelRequest) {
		return
	}
	audit.LogRequestPatch(ctx, patch)
}

// ResponseObject records the response's object: a Status's code, reason
// and message from level Metadata on, the object itself from
// RequestResponse on.
func ResponseObject(ctx context.Context, obj runtime.Object, enc Encode) {
	if !Audited(ctx) {
		return
	}
	if _, status := obj.(*metav1.Status); !status && Level(ctx).Less(auditinternal.LevelRequestResponse) {
		return
	}
	audit.LogResponseObject(ctx, obj, obj.GetObjectKind().GroupVersionKind().GroupVersion(), serializer{enc})
}

// ResponseJSON records data, the response's JSON, from level
// RequestResponse on: for responses written as they are encoded (lists),
// which are encoded once more for the event. The policy's
// omitManagedFields does not apply to it.
func ResponseJSON(ctx context.Context, data []byte) {
	if Level(ctx).Less(auditinternal.LevelRequestResponse) {
		return
	}
	audit.AuditContextFrom(ctx).LogResponseObject(nil, &runtime.Unknown{Raw: data, ContentType: runtime.ContentTypeJSON})
}

// serializer hands upstream's audit functions, which encode through a
// NegotiatedSerializer, the handler's own JSON encoding.
type serializer struct{ enc Encode }

func (s serializer) SupportedMediaTypes() []runtime.SerializerInfo {
	return []runtime.SerializerInfo{{MediaType: runtime.ContentTypeJSON, Serializer: s}}
}

func (s serializer) EncoderForVersion(e runtime.Encoder, _ runtime.GroupVersioner) runtime.Encoder {
	return e
}

func (s serializer) DecoderToVersion(d runtime.Decoder, _ runtime.GroupVersioner) runtime.Decoder {
	return d
}

func (s serializer) Encode(obj runtime.Object, w io.Writer) error {
	data, err := s.enc(obj)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

func (s serializer) Decode([]byte, *schema.GroupVersionKind, runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	return nil, nil, errors.New("auditlog: encoding only")
}

func (s serializer) Identifier() runtime.Identifier { return "apiloom-audit-json" }
