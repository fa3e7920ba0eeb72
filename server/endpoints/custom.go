package endpoints

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/apiloom/apiloom/server/admission/schemacheck"
	"github.com/apiloom/apiloom/server/endpoints/auditlog"
	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
	"github.com/apiloom/apiloom/server/endpoints/storageerr"
	"github.com/apiloom/apiloom/server/endpoints/strategy"
	"github.com/apiloom/apiloom/server/hook"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/wire"
)

// A kind's own subresources (resource.Definition.Custom) are served here:
// an action is a POST of its input answered 201 with its result (as
// kube-apiserver answers a POST to serviceaccounts/token or
// pods/eviction), a view a GET answered 200, a stream a GET answered with
// bytes as the hook writes them (stream.go). The parent object is read
// consistently, as a GET without resourceVersion.

// custom is one of the kind's own subresources as the handler serves it.
type custom[O resource.Object] struct {
	def *resource.Custom[O]
	// inputGVK is the input's kind: the parent's group/version and the
	// input's Go type name.
	inputGVK schema.GroupVersionKind
	// check defaults and validates an action's input by its InputSchema;
	// nil without one.
	check *schemacheck.Check
	// protobufIn: the input has protobuf methods, so a body may be
	// protobuf.
	protobufIn bool
	// streams is how many of a stream's calls run now (limited by
	// handlerConfig.maxStreams).
	streams atomic.Int64
}

// newCustoms builds the handler's view of def's own subresources. An
// invalid InputSchema panics, as an invalid Schema does.
func newCustoms[O resource.Object](def *resource.Definition[O]) map[string]*custom[O] {
	if len(def.Custom) == 0 {
		return nil
	}
	out := make(map[string]*custom[O], len(def.Custom))
	for i := range def.Custom {
		c := &custom[O]{def: &def.Custom[i]}
		if c.def.NewInput != nil {
			in := c.def.NewInput()
			c.inputGVK = def.GroupVersion().WithKind(typeName(in))
			c.protobufIn = hasProtobuf(in)
		}
		if c.def.InputSchema != "" {
			kind := c.inputGVK.Kind
			info := &resource.Info{
				Group: def.Group, Version: def.Version, Kind: kind, ListKind: kind + "List",
				Plural: strings.ToLower(kind) + "s", Singular: strings.ToLower(kind),
				Namespaced: def.Namespaced, Schema: c.def.InputSchema,
			}
			check, err := schemacheck.New(context.Background(), info)
			if err != nil {
				panic(fmt.Sprintf("endpoints: resource %s: subresource %s: %v", def.GroupResource(), c.def.Name, err))
			}
			c.check = check
		}
		out[c.def.Name] = c
	}
	return out
}

// typeName is the name of obj's Go type, its pointer's element: the kind
// of a custom subresource's input or result.
func typeName(obj any) string {
	t := reflect.TypeOf(obj)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return ""
	}
	return t.Name()
}

// serveCustom dispatches a request to one of the kind's own
// subresources: an action takes POST only, a view and a stream GET only.
func (h *handler[O]) serveCustom(w http.ResponseWriter, r *http.Request, rt route) error {
	c := h.customs[rt.custom]
	if c == nil {
		return errPathNotFound
	}
	verb := requestVerb(r.Method, rt)
	if h.def.Namespaced && rt.namespace == "" {
		return apierrors.NewMethodNotSupported(h.gr, verb)
	}
	switch {
	case c.def.Type == resource.Action && r.Method == http.MethodPost:
		return h.action(w, r, rt, c)
	case c.def.Type == resource.View && r.Method == http.MethodGet:
		return h.view(w, r, rt, c)
	case c.def.Type == resource.Stream && r.Method == http.MethodGet:
		return h.stream(w, r, rt, c)
	}
	return apierrors.NewMethodNotSupported(schema.GroupResource{Group: h.gr.Group, Resource: h.gr.Resource + "/" + rt.custom}, verb)
}

// parent reads the object the request names, consistently: 404 naming
// the parent's resource when it is missing.
func (h *handler[O]) parent(ctx context.Context, rt route) (O, error) {
	obj, err := h.store.Get(ctx, h.key(rt), storage.GetOptions{})
	if err != nil {
		var zero O
		return zero, storageerr.Status(err, h.gr, rt.name, storageerr.Other)
	}
	return obj, nil
}

// customRequest is the hook.Request of a call of c on rt's object.
func (h *handler[O]) customRequest(ctx context.Context, op hook.Operation, c *custom[O], dryRun bool, rt route) *hook.Request {
	u, _ := genericrequest.UserFrom(ctx)
	return hook.NewRequest(ctx, op, c.def.Name, dryRun, u, rt.namespace, rt.name, h.hooks.Readers)
}

// customError is the answer to a custom subresource's failure: an API
// status is the client's answer as it is; anything else (a plain error,
// a panic, a missed deadline) a 500 InternalError, logged with the
// request's context.
func (h *handler[O]) customError(ctx context.Context, c *custom[O], rt route, err error) error {
	var st apierrors.APIStatus
	if errors.As(err, &st) && !errors.Is(err, hook.ErrPanic) && !errors.Is(err, hook.ErrTimeout) {
		return err
	}
	slog.ErrorContext(ctx, "endpoints: subresource handler failed", "resource", h.gr.String(),
		"subresource", c.def.Name, "namespace", rt.namespace, "name", rt.name, "err", err)
	return apierrors.NewInternalError(fmt.Errorf("%s of %s: %w", c.def.Name, h.gvk.Kind, strategy.ErrorHead(err)))
}

// negotiateResult picks the form of a custom subresource's result: the
// object itself (a Table or metadata view of it is 406), as the kind's
// GET offers its encodings.
func (h *handler[O]) negotiateResult(r *http.Request) (negotiation.Output, error) {
	out, err := negotiation.Negotiate(r, negotiation.OneObject, negotiation.Formats{Protobuf: h.fmts.Protobuf, CBOR: h.fmts.CBOR})
	if err != nil {
		return out, err
	}
	if out.Target != negotiation.AsObject {
		return out, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusNotAcceptable, Reason: metav1.StatusReasonNotAcceptable,
			Message: "only the subresource's own kind is served, not a Table or metadata view of it",
		}}
	}
	out.Gzip = h.limits.ResponseCompression && negotiation.AcceptsGzip(r)
	return out, nil
}

// writeResult answers with res, a custom subresource's result, its
// apiVersion the parent's group/version and its kind its Go type's name.
func (h *handler[O]) writeResult(w http.ResponseWriter, r *http.Request, out negotiation.Output, code int, res runtime.Object) error {
	if res == nil || reflect.ValueOf(res).IsNil() {
		return apierrors.NewInternalError(fmt.Errorf("subresource of %s returned no result", h.gvk.Kind))
	}
	res.GetObjectKind().SetGroupVersionKind(h.gvk.GroupVersion().WithKind(typeName(res)))
	if out.Encoding == negotiation.Protobuf && !hasProtobuf(res) {
		return apierrors.NewInternalError(fmt.Errorf("%s has no protobuf encoding", typeName(res)))
	}
	data, err := responsewriters.EncodeView(res, out)
	if err != nil {
		return err
	}
	h.auditResponse(r.Context(), res, true)
	return responsewriters.WriteEncoded(w, out, code, data, nil)
}

// action serves POST of an action: its input decoded as a create's body
// is, defaulted and validated by its InputSchema (422), then the action
// called on the parent with the hook timeout and writers, its result
// answered 201. dryRun=All makes the request, and every write through
// its writers, a dry run.
func (h *handler[O]) action(w http.ResponseWriter, r *http.Request, rt route, c *custom[O]) error {
	out, err := h.negotiateResult(r)
	if err != nil {
		return err
	}
	opts, err := request.ParseCreateOptions(r.URL.Query())
	if err != nil {
		return err
	}
	body, err := h.readBody(w, r)
	if err != nil {
		return err
	}
	in, warnings, err := h.decodeInput(r, body, opts, c)
	if err != nil {
		return err
	}
	ctx := r.Context()
	if err := h.checkInput(ctx, c, rt, in); err != nil {
		return err
	}
	// The audit event records the input, as a create's records its body.
	in.GetObjectKind().SetGroupVersionKind(c.inputGVK)
	auditlog.RequestObject(ctx, in, h.gr.WithVersion(h.gvk.Version), c.def.Name, encodeView)
	parent, err := h.parent(ctx, rt)
	if err != nil {
		return err
	}
	req := h.customRequest(ctx, hook.Create, c, opts.DryRun, rt)
	if h.writers != nil {
		req = req.WithWriters(h.writers.forRequest(r, opts.DryRun, opts.FieldManager))
	}
	var res runtime.Object
	var herr error
	if err := hook.Call(req, h.hooks.CallTimeout(), func(req *hook.Request) { res, herr = c.def.Action(req, parent, in) }); err != nil {
		herr = err
	}
	if herr != nil {
		return h.customError(ctx, c, rt, herr)
	}
	responsewriters.WriteWarnings(w, warnings)
	return h.writeResult(w, r, out, http.StatusCreated, res)
}

// decodeInput decodes an action's body into a new input, as
// decodeObject decodes a create's: fieldValidation's rules for unknown
// and duplicate fields, and a kind and apiVersion, when given, that must
// be the input's.
func (h *handler[O]) decodeInput(r *http.Request, body []byte, opts request.WriteOptions, c *custom[O]) (runtime.Object, []string, error) {
	f := request.Formats{Protobuf: c.protobufIn, CBOR: h.fmts.CBOR, Kind: c.inputGVK, NewObject: c.def.NewInput}
	data, err := request.BodyJSON(r, body, opts.FieldValidation == metav1.FieldValidationStrict, f)
	if err != nil {
		return nil, nil, err
	}
	in := c.def.NewInput()
	strictErrs, err := wire.Decoder{Strict: opts.Strict()}.Decode(data, in)
	if err != nil {
		return nil, nil, request.DecodeError(c.inputGVK, data, err)
	}
	var warnings []string
	if len(strictErrs) > 0 {
		if opts.FieldValidation == metav1.FieldValidationStrict {
			return nil, nil, request.DecodeError(c.inputGVK, data, runtime.NewStrictDecodingError(strictErrs))
		}
		for _, e := range strictErrs {
			warnings = append(warnings, e.Error())
		}
	}
	if err := request.CheckKind(in.GetObjectKind().GroupVersionKind(), c.inputGVK); err != nil {
		return nil, nil, err
	}
	return in, warnings, nil
}

// checkInput defaults in by c's InputSchema and validates it by the
// schema and its CEL rules, as a create of a kind with that schema
// would be: 422 Invalid with a cause per violation.
func (h *handler[O]) checkInput(ctx context.Context, c *custom[O], rt route, in runtime.Object) error {
	if c.check == nil {
		return nil
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(in)
	if err != nil {
		return err
	}
	if c.check.HasDefaults() {
		c.check.Default(u)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, in); err != nil {
			return err
		}
	}
	if errs := c.check.Create(ctx, u, nil, nil); len(errs) > 0 {
		return apierrors.NewInvalid(c.inputGVK.GroupKind(), rt.name, errs)
	}
	return nil
}

// view serves GET of a view: the view called on the parent with the hook
// timeout, its result answered 200.
func (h *handler[O]) view(w http.ResponseWriter, r *http.Request, rt route, c *custom[O]) error {
	out, err := h.negotiateResult(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	parent, err := h.parent(ctx, rt)
	if err != nil {
		return err
	}
	req := h.customRequest(ctx, hook.Read, c, false, rt)
	var res runtime.Object
	var herr error
	if err := hook.Call(req, h.hooks.CallTimeout(), func(req *hook.Request) { res, herr = c.def.View(req, parent) }); err != nil {
		herr = err
	}
	if herr != nil {
		return h.customError(ctx, c, rt, herr)
	}
	return h.writeResult(w, r, out, http.StatusOK, res)
}
