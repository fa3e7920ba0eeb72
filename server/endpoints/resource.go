package endpoints

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"k8s.io/apiserver/pkg/authorization/authorizer"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiloom/apiloom/server/admission"
	"github.com/apiloom/apiloom/server/endpoints/fieldmanager"
	"github.com/apiloom/apiloom/server/endpoints/patch"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
	"github.com/apiloom/apiloom/server/endpoints/scale"
	"github.com/apiloom/apiloom/server/endpoints/strategy"
	"github.com/apiloom/apiloom/server/endpoints/tableconvert"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// handler serves one resource. Immutable after NewResource and safe for
// concurrent use; every request's state lives on its goroutine.
//
// Objects that storage returns may be shared with other readers (the watch
// cache hands out its own) and are never modified here: writes work on the
// copy GuaranteedUpdate passes, or on copyObject's.
type handler[O resource.Object] struct {
	def   *resource.Definition[O]
	store storage.Interface[O]
	// dryRun is store as a request with dryRun=All writes to it.
	dryRun storage.Interface[O]

	gvk schema.GroupVersionKind
	gr  schema.GroupResource
	// fieldKeys are the field-selector keys the resource supports.
	fieldKeys map[string]bool
	// columns renders Table rows, with the printer columns compiled.
	columns *tableconvert.Columns
	// now is the clock Table ages are measured with.
	now    func() time.Time
	limits request.Limits
	// protobuf is true when the kind's type has protobuf methods (a
	// built-in kind's), so request bodies may be protobuf.
	protobuf bool
	// fmts are the syntaxes the resource reads and writes besides JSON.
	fmts request.Formats
	// patchMeta says how strategic merge patch merges each field.
	patchMeta strategicpatch.LookupPatchMeta
	// managed keeps the objects' managed fields (package fieldmanager).
	managed *fieldmanager.Managers[O]
	// scale is where the scale subresource's fields live, and how writes
	// through it are tracked (package scale); nil without one.
	scale *scale.Subresource
	// kind is what the resource's definition does to its writes
	// (package strategy): defaults, hooks, the fields the server owns,
	// validation.
	kind *strategy.Kind[O]
	// admission is the chain every write goes through (admit.go).
	admission *admission.Chain
	// authz decides what a request needs beyond its own verb (the unsafe
	// delete's); nil without one (WithAuthorizer).
	authz authorizer.Authorizer
	// customs are the kind's own subresources by name (custom.go).
	customs map[string]*custom[O]
	// hooks are the readers and timeout of hook calls (WithHooks).
	hooks strategy.Hooks
	// writers write objects for actions (WithWriters); nil for none.
	writers *Writers
	// maxStreams bounds the calls of each stream subresource running at
	// once (WithMaxStreams).
	maxStreams int64
}

var _ Resource = (*handler[resource.Object])(nil)

// NewResource returns the REST handler of the resource def, backed by store
// (the etcd store or the watch cache in front of it). It panics when one
// of def's PrintColumns is invalid (resource.PrintColumn.Validate), a
// programming error apiserver-gen refuses to generate, when def.New does
// not make a pointer to a struct, or when WithSchemas gives definitions
// that lack def.OpenAPIName, or when def.Schema is invalid and
// WithSchemaCheck gives no check. Managed fields are kept, and server-side
// apply merges, by the type converter WithTypeConverter gives.
func NewResource[O resource.Object](def *resource.Definition[O], store storage.Interface[O], opts ...Option) Resource {
	cfg := handlerConfig{limits: request.DefaultLimits()}
	for _, o := range opts {
		o(&cfg)
	}
	cols, err := tableconvert.NewColumns(&def.Info)
	if err != nil {
		panic(fmt.Sprintf("endpoints: resource %s: %v", def.GroupResource(), err))
	}
	tableconvert.WithPrinter(cols, def.Printer)
	meta, err := patch.Meta(cfg.schemas, def.OpenAPIName, def.New())
	if err != nil {
		panic(fmt.Sprintf("endpoints: resource %s: %v", def.GroupResource(), err))
	}
	tc := cfg.typeConverter
	if tc == nil {
		tc = managedfields.NewDeducedTypeConverter()
	}
	h := &handler[O]{protobuf: hasProtobuf(def.New())}
	var versions []*resource.Info
	if cfg.versions != nil {
		versions = cfg.versions.Infos()
	}
	if h.scale, err = scale.New(def.Scale, def.GroupVersion(), versions); err != nil { // never: Scales' type converter is deduced
		panic(fmt.Sprintf("endpoints: resource %s: %v", def.GroupResource(), err))
	}
	var scaleErrors func(map[string]any, bool) field.ErrorList
	if h.scale != nil {
		scaleErrors = h.scale.Errors
	}
	h.kind = strategy.New(def, cfg.schemaCheck, scaleErrors, cfg.hooks)
	managed, err := fieldmanager.New(def, tc, h.kind.ApplyDefaults, cfg.versions)
	if err != nil { // only for a nil type converter
		panic(fmt.Sprintf("endpoints: resource %s: %v", def.GroupResource(), err))
	}
	keys := map[string]bool{"metadata.name": true}
	if def.Namespaced {
		keys["metadata.namespace"] = true
	}
	for _, f := range def.SelectableFields {
		keys[f] = true
	}
	h.def, h.store, h.dryRun = def, store, storage.DryRun(store)
	h.gvk, h.gr = def.GroupVersionKind(), def.GroupResource()
	h.fieldKeys, h.columns, h.now = keys, cols, time.Now
	h.limits, h.patchMeta, h.managed = cfg.limits, meta, managed
	h.fmts = request.Formats{Protobuf: h.protobuf, CBOR: h.limits.CBOR, Kind: def.GroupVersionKind(), NewObject: func() runtime.Object { return def.New() }}
	h.admission, h.authz = cfg.admission, cfg.authorizer
	h.customs, h.hooks, h.writers = newCustoms(def), cfg.hooks, cfg.writers
	h.maxStreams = int64(cfg.maxStreams)
	if h.maxStreams <= 0 {
		h.maxStreams = DefaultMaxStreams
	}
	if h.writers != nil {
		h.writers.add(h)
	}
	if h.admission == nil {
		h.admission = standardChain
	}
	return h
}

// Info implements Resource.
func (h *handler[O]) Info() *resource.Info { return &h.def.Info }

// stored implements Resource: the watch cache knows its size; the etcd
// store would have to ask etcd.
func (h *handler[O]) stored() (int, bool) {
	if s, ok := h.store.(interface{ Len() int }); ok {
		return s.Len(), true
	}
	return 0, false
}

// serve dispatches a routed request to its verb. Each verb returns an error
// only before it has written anything; serve answers it with a Status.
func (h *handler[O]) serve(w http.ResponseWriter, r *http.Request, rt route) {
	r = h.withAdmission(w, r, rt)
	if err := h.dispatch(w, r, rt); err != nil {
		responsewriters.WriteStatusError(w, r, responsewriters.ToStatus(err), h.fmts.CBOR)
	}
}

func (h *handler[O]) dispatch(w http.ResponseWriter, r *http.Request, rt route) error {
	if err := validateSegments(rt); err != nil {
		return err
	}
	method := r.Method
	switch {
	case rt.custom != "":
		return h.serveCustom(w, r, rt)
	case rt.scale:
		switch method {
		case http.MethodGet:
			return h.getScale(w, r, rt)
		case http.MethodPut:
			return h.updateScale(w, r, rt)
		case http.MethodPatch:
			return h.patchScale(w, r, rt)
		}
	case rt.finalize:
		if method == http.MethodPut {
			return h.update(w, r, rt)
		}
	case rt.status:
		switch method {
		case http.MethodGet:
			return h.get(w, r, rt)
		case http.MethodPut:
			return h.update(w, r, rt)
		case http.MethodPatch:
			return h.patch(w, r, rt)
		}
	case rt.name != "":
		switch method {
		case http.MethodGet:
			if request.QueryBool(r.URL.Query(), "watch") {
				return h.listOrWatch(w, r, rt)
			}
			return h.get(w, r, rt)
		case http.MethodPut:
			return h.update(w, r, rt)
		case http.MethodPatch:
			return h.patch(w, r, rt)
		case http.MethodDelete:
			return h.delete(w, r, rt)
		}
	default:
		switch method {
		case http.MethodGet:
			return h.listOrWatch(w, r, rt)
		case http.MethodPost:
			// Namespaced objects are created within their namespace.
			if !h.def.Namespaced || rt.namespace != "" {
				return h.create(w, r, rt)
			}
		case http.MethodDelete:
			return h.deleteCollection(w, r, rt)
		}
	}
	return apierrors.NewMethodNotSupported(h.gr, requestVerb(method, rt))
}

// requestVerb is the API verb of a request for messages: "create" for a
// POST, "deletecollection" for a DELETE of a collection, and so on.
func requestVerb(method string, rt route) string {
	switch method {
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if rt.name == "" {
			return "deletecollection"
		}
		return "delete"
	case http.MethodGet:
		if rt.name == "" {
			return "list"
		}
		return "get"
	}
	return strings.ToLower(method)
}

// validateSegments rejects names and namespaces that cannot be one path
// segment of a key, as kube-apiserver's key functions do.
func validateSegments(rt route) error {
	if rt.namespace != "" {
		if msgs := path.IsValidPathSegmentName(rt.namespace); len(msgs) > 0 {
			return apierrors.NewBadRequest("Namespace parameter invalid: " + quoteJoin(rt.namespace, msgs))
		}
	}
	if rt.name != "" {
		if msgs := path.IsValidPathSegmentName(rt.name); len(msgs) > 0 {
			return apierrors.NewBadRequest("Name parameter invalid: " + quoteJoin(rt.name, msgs))
		}
	}
	return nil
}

func quoteJoin(v string, msgs []string) string {
	return `"` + v + `": ` + strings.Join(msgs, ";")
}

// storage is where a write goes: the store, or with dryRun its dry run,
// which checks what the store would and stores nothing.
func (h *handler[O]) storage(dryRun bool) storage.Interface[O] {
	if dryRun {
		return h.dryRun
	}
	return h.store
}

// key is the storage key of the object a request names.
func (h *handler[O]) key(rt route) string {
	return storage.Key(rt.namespace, rt.name)
}
