package endpoints

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/warning"

	"github.com/apiloom/apiloom/server/endpoints/fieldmanager"
	"github.com/apiloom/apiloom/server/hook"
	"github.com/apiloom/apiloom/server/resource"
)

// Writers are the writers actions write objects through (hook.Writers):
// each serves an in-process request to the kind's own handler, with the
// action's context (its user), User-Agent, fieldManager and dryRun, so
// that admission, managed fields, the kinds' hooks and watch events are
// those of a client's write. No network is involved, and the write is
// not authorized again: the user was authorized for the action, as
// kube-apiserver's eviction deletes its pod. A server shares one among
// its resources (WithWriters), filled as they are built and read-only
// once it serves.
type Writers struct {
	byType map[reflect.Type]writerSource
}

// NewWriters returns an empty Writers for WithWriters.
func NewWriters() *Writers { return &Writers{byType: map[reflect.Type]writerSource{}} }

// writerSource makes the writer of one kind for an action's request.
type writerSource interface {
	writer(base actionContext) any
	// objectType is the kind's Go type (*v1.Database).
	objectType() reflect.Type
}

// actionContext is what an inner write takes from its action's request.
type actionContext struct {
	userAgent, fieldManager string
	dryRun                  bool
}

// add makes h's kind written through ws.
func (ws *Writers) add(h writerSource) { ws.byType[h.objectType()] = h }

// forRequest is the hook.Writers of an action's request r.
func (ws *Writers) forRequest(r *http.Request, dryRun bool, fieldManager string) hook.Writers {
	if fieldManager == "" {
		// The action's client owns what its writes set, as
		// fieldmanager.ManagerName names it from its User-Agent.
		fieldManager = fieldmanager.ManagerName("", r.UserAgent())
	}
	return boundWriters{ws: ws, base: actionContext{userAgent: r.UserAgent(), fieldManager: fieldManager, dryRun: dryRun}}
}

// boundWriters are Writers bound to one action's request.
type boundWriters struct {
	ws   *Writers
	base actionContext
}

func (b boundWriters) Writer(t reflect.Type) any {
	src, ok := b.ws.byType[t]
	if !ok {
		return nil
	}
	return src.writer(b.base)
}

// objectType implements writerSource.
func (h *handler[O]) objectType() reflect.Type { return reflect.TypeFor[O]() }

// writer implements writerSource.
func (h *handler[O]) writer(base actionContext) any {
	return &objectWriter[O]{h: h, base: base}
}

// objectWriter is a hook.Writer[O] for one action's request.
type objectWriter[O resource.Object] struct {
	h    *handler[O]
	base actionContext
}

var _ hook.Writer[resource.Object] = (*objectWriter[resource.Object])(nil)

func (ow *objectWriter[O]) Create(ctx context.Context, obj O, _ hook.WriteOptions) (O, error) {
	return ow.do(ctx, http.MethodPost, route{namespace: obj.GetNamespace()}, obj)
}

func (ow *objectWriter[O]) Update(ctx context.Context, obj O, opts hook.WriteOptions) (O, error) {
	return ow.do(ctx, http.MethodPut, route{namespace: obj.GetNamespace(), name: obj.GetName(), status: opts.Status && ow.h.def.HasStatus}, obj)
}

func (ow *objectWriter[O]) Delete(ctx context.Context, namespace, name string, _ hook.WriteOptions) error {
	var zero O
	_, err := ow.do(ctx, http.MethodDelete, route{namespace: namespace, name: name}, zero)
	return err
}

// do serves one write to the kind's handler in-process and decodes its
// answer: the stored object, or the Status of a failure as its API error.
func (ow *objectWriter[O]) do(ctx context.Context, method string, rt route, obj O) (O, error) {
	var zero O
	var body []byte
	if method != http.MethodDelete {
		var err error
		if body, err = json.Marshal(obj); err != nil {
			return zero, err
		}
	}
	q := url.Values{}
	if ow.base.dryRun {
		q.Set("dryRun", metav1.DryRunAll)
	}
	if ow.base.fieldManager != "" {
		q.Set("fieldManager", ow.base.fieldManager)
	}
	u := &url.URL{Path: ow.h.path(rt), RawQuery: q.Encode()}
	// The action's audit event records the action, not its writes.
	req, err := http.NewRequestWithContext(audit.WithAuditContext(ctx), method, u.String(), bytes.NewReader(body))
	if err != nil {
		return zero, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if ow.base.userAgent != "" {
		req.Header.Set("User-Agent", ow.base.userAgent)
	}
	rec := &recorder{header: http.Header{}}
	ow.h.serve(rec, req, rt)
	// The write's warnings are the action's client's.
	if hs, _ := utilnet.ParseWarningHeaders(rec.header.Values("Warning")); len(hs) > 0 {
		for _, w := range hs {
			warning.AddWarning(ctx, "", w.Text)
		}
	}
	if rec.code == 0 {
		rec.code = http.StatusOK
	}
	if rec.code >= 300 {
		var st metav1.Status
		if err := json.Unmarshal(rec.body.Bytes(), &st); err != nil || st.Kind != "Status" {
			return zero, apierrors.NewInternalError(fmt.Errorf("%s %s: %d: %s", method, u.Path, rec.code, rec.body.Bytes()))
		}
		return zero, &apierrors.StatusError{ErrStatus: st}
	}
	if method == http.MethodDelete {
		return zero, nil
	}
	out := ow.h.def.New()
	if err := json.Unmarshal(rec.body.Bytes(), out); err != nil {
		return zero, err
	}
	return out, nil
}

// path is the URL path of rt in the handler's resource.
func (h *handler[O]) path(rt route) string {
	p := h.def.PathPrefix()
	if rt.namespace != "" {
		p += "/namespaces/" + rt.namespace
	}
	p += "/" + h.gr.Resource
	if rt.name != "" {
		p += "/" + rt.name
	}
	if rt.status {
		p += "/status"
	}
	return p
}

// recorder is the in-process write's response: its code, headers and
// body, which is one object or Status.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}
func (r *recorder) Write(p []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.body.Write(p)
}
