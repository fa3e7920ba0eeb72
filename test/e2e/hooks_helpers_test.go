package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"

	crdconfv1 "github.com/apiloom/apiloom/apis/crdconf/v1"
	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/apiserver"
	gencrdconf "github.com/apiloom/apiloom/generated/apiserver/crdconf/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	apiloomserver "github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/hook"
	"github.com/apiloom/apiloom/server/registry"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/testserver"
)

// hookCall is one call of a test hook, as it saw its request.
type hookCall struct {
	hook, op, sub string
	dryRun        bool
	// oldRV is the old object's resourceVersion, "" without one.
	oldRV string
}

// hookRecorder is the test-only hooks of crdconf's Widget: each records
// its calls by object name and acts on the object's "hook" label:
// refuse (422 from the validation hooks, 403 from ValidateDelete),
// panic, slow (blocks until its context ends), region (ValidateCreate
// reads the Region named by the "region" label through the cache).
type hookRecorder struct {
	mu    sync.Mutex // guards calls
	calls map[string][]hookCall
}

func (h *hookRecorder) record(name, hk string, req *hook.Request, old *crdconfv1.Widget) {
	c := hookCall{hook: hk, op: string(req.Operation), sub: req.Subresource, dryRun: req.DryRun}
	if old != nil {
		c.oldRV = old.ResourceVersion
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.calls == nil {
		h.calls = map[string][]hookCall{}
	}
	h.calls[name] = append(h.calls[name], c)
}

// take returns and forgets name's calls.
func (h *hookRecorder) take(name string) []hookCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.calls[name]
	delete(h.calls, name)
	return c
}

// act does what obj's "hook" label asks for at a validation hook.
func act(req *hook.Request, obj *crdconfv1.Widget, path *field.Path) (hook.Warnings, field.ErrorList) {
	switch obj.Labels["hook"] {
	case "refuse":
		return nil, field.ErrorList{field.Invalid(path, obj.Labels["hook"], "refused by the test hook")}
	case "panic":
		panic("test hook panics")
	case "slow":
		<-req.Context().Done()
		time.Sleep(50 * time.Millisecond) // returns after its deadline
	}
	return hook.Warnings{"widget " + obj.Name + " validated by the test hook"}, nil
}

func (h *hookRecorder) hooks() *hook.Hooks[*crdconfv1.Widget] {
	return &hook.Hooks[*crdconfv1.Widget]{
		Default: func(req *hook.Request, obj *crdconfv1.Widget) {
			h.record(obj.Name, "Default", req, nil)
			v := string(req.Operation)
			if req.Subresource != "" {
				v += "/" + req.Subresource // never stored: a /status write changes only the status
			}
			metav1.SetMetaDataAnnotation(&obj.ObjectMeta, "hooks.test/default", v)
		},
		PrepareForCreate: func(req *hook.Request, obj *crdconfv1.Widget) {
			h.record(obj.Name, "PrepareForCreate", req, nil)
			metav1.SetMetaDataLabel(&obj.ObjectMeta, "hooks.test/created", "yes")
		},
		PrepareForUpdate: func(req *hook.Request, obj, old *crdconfv1.Widget) {
			h.record(obj.Name, "PrepareForUpdate", req, old)
			metav1.SetMetaDataAnnotation(&obj.ObjectMeta, "hooks.test/old-rv", old.ResourceVersion)
		},
		PrepareForStatusUpdate: func(req *hook.Request, obj, old *crdconfv1.Widget) {
			h.record(obj.Name, "PrepareForStatusUpdate", req, old)
			g := obj.Generation
			obj.Status.ObservedGeneration = &g
		},
		ValidateCreate: func(req *hook.Request, obj *crdconfv1.Widget) (hook.Warnings, field.ErrorList) {
			h.record(obj.Name, "ValidateCreate", req, nil)
			if obj.Labels["hook"] == "region" {
				name := obj.Labels["region"]
				if _, err := hook.Get[*examplev1.Region](req, "", name); err != nil {
					return nil, field.ErrorList{field.Invalid(field.NewPath("metadata", "labels").Key("region"), name, err.Error())}
				}
			}
			return act(req, obj, field.NewPath("spec", "engine"))
		},
		ValidateUpdate: func(req *hook.Request, obj, old *crdconfv1.Widget) (hook.Warnings, field.ErrorList) {
			h.record(obj.Name, "ValidateUpdate", req, old)
			return act(req, obj, field.NewPath("spec", "owner"))
		},
		ValidateStatusUpdate: func(req *hook.Request, obj, old *crdconfv1.Widget) (hook.Warnings, field.ErrorList) {
			h.record(obj.Name, "ValidateStatusUpdate", req, old)
			if obj.Status.Phase != nil && *obj.Status.Phase == "Failed" {
				return nil, field.ErrorList{field.Forbidden(field.NewPath("status", "phase"), "refused by the test hook")}
			}
			return nil, nil
		},
		ValidateDelete: func(req *hook.Request, obj *crdconfv1.Widget) (hook.Warnings, field.ErrorList) {
			h.record(obj.Name, "ValidateDelete", req, nil)
			if obj.Labels["keep"] == "true" {
				return nil, field.ErrorList{field.Forbidden(field.NewPath("metadata", "labels").Key("keep"), "kept by the test hook")}
			}
			return hook.Warnings{"widget " + obj.Name + " deleted"}, nil
		},
	}
}

// startHookServer starts a server whose crdconf Widgets have rec's hooks,
// with hook timeout, and returns it with a clientset whose warnings go to
// warnings.
func startHookServer(t *testing.T, rec *hookRecorder, timeout time.Duration, warnings *warningRecorder) (*testserver.TestServer, versioned.Interface) {
	t.Helper()
	install := func(r *registry.Registry) {
		all := &registry.Registry{}
		apiserver.Install(all)
		widget := *gencrdconf.Widget
		widget.Hooks = rec.hooks()
		*r = *all.Select(func(i *resource.Info) bool { return i.GroupResource() != widget.GroupResource() })
		registry.Register(r, &widget)
	}
	ts := testserver.Start(t, install, testserver.WithHTTP2Server(http2Server(t)),
		func(o *apiloomserver.Options) { o.HookTimeout = timeout })
	cfg := rest.CopyConfig(ts.Config)
	cfg.WarningHandlerWithContext = warnings
	return ts, versioned.NewForConfigOrDie(cfg)
}

// warningRecorder collects the warnings client-go receives.
type warningRecorder struct {
	mu   sync.Mutex // guards msgs
	msgs []string
}

func (w *warningRecorder) HandleWarningHeaderWithContext(_ context.Context, code int, _ string, msg string) {
	if code != 299 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
}

// take returns and forgets the warnings received.
func (w *warningRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.msgs
	w.msgs = nil
	return m
}

// expectCalls fails t unless got are want, in order.
func expectCalls(t *testing.T, what string, got, want []hookCall) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: hook calls\n got %s\nwant %s", what, fmt.Sprint(got), fmt.Sprint(want))
	}
}
