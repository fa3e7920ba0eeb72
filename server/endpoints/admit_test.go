package endpoints

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/admission"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// plugin is an admission plugin for tests, mutating and validating every
// operation: it records what it validated, and refuses with 403 an object
// labelled deny=yes.
type plugin struct {
	mu   sync.Mutex // guards seen
	seen []string
}

func (p *plugin) Handles(k8sadmission.Operation) bool { return true }

func (p *plugin) Admit(context.Context, k8sadmission.Attributes, k8sadmission.ObjectInterfaces) error {
	return nil
}

// mutator and validator are plugins of one phase, for ops.
type mutator struct{}

func (mutator) Handles(k8sadmission.Operation) bool { return true }
func (mutator) Admit(context.Context, k8sadmission.Attributes, k8sadmission.ObjectInterfaces) error {
	return nil
}

type validator struct{ ops []k8sadmission.Operation }

func (v validator) Handles(op k8sadmission.Operation) bool { return slices.Contains(v.ops, op) }
func (validator) Validate(context.Context, k8sadmission.Attributes, k8sadmission.ObjectInterfaces) error {
	return nil
}

func (p *plugin) Validate(_ context.Context, a k8sadmission.Attributes, _ k8sadmission.ObjectInterfaces) error {
	p.mu.Lock()
	p.seen = append(p.seen, fmt.Sprintf("%s %s/%s %s dryRun=%t new=%t old=%t", a.GetOperation(), a.GetResource().Resource, a.GetSubresource(),
		a.GetName(), a.IsDryRun(), a.GetObject() != nil, a.GetOldObject() != nil))
	p.mu.Unlock()
	if a.GetObject() == nil {
		return nil
	}
	if m, err := meta.Accessor(a.GetObject()); err == nil && m.GetLabels()["deny"] == "yes" {
		return apierrors.NewForbidden(a.GetResource().GroupResource(), a.GetName(), errRefused)
	}
	return nil
}

func (p *plugin) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.seen
	p.seen = nil
	return s
}

var errRefused = errors.New("refused")

// trace records the order in which a chain's plugins ran.
type trace struct {
	mu    sync.Mutex
	calls []string
}

func (t *trace) add(plugin, phase string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls = append(t.calls, phase[:1]+":"+plugin)
}

func (t *trace) take() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.Join(t.calls, " ")
	t.calls = nil
	return s
}

// The order of the server's chain on a create or an update (of the main
// resource or of a subresource), and on a delete, with a plugin, Extra,
// added at its end.
const (
	writeOrder  = "m:NamespaceLifecycle m:KindMutatingHooks m:OwnerReferences m:KindPrepare m:Extra v:RBACEscalation v:KindValidation v:KindValidatingHooks v:Extra"
	deleteOrder = "m:NamespaceLifecycle m:KindMutatingHooks m:KindPrepare m:Extra v:KindValidation v:KindValidatingHooks v:Extra"
)

// TestAdmissionChainOnEveryWritePath: every write path (create, update,
// each patch type, server-side apply creating and updating, /status,
// /scale, /finalize, delete, each item of a deletecollection, dry run or
// not) goes through the one chain, its plugins in the server's order,
// and a plugin added to the chain sees each with the operation,
// subresource, objects and dryRun upstream's admission.Attributes carry;
// its 403 is the answer and nothing is stored.
func TestAdmissionChainOnEveryWritePath(t *testing.T) {
	root := etcdtest.Start(t)
	c := storagetest.NewClient(t, root, "/admit-test")
	wdef := validatedWidgets(storagetest.Definition())
	wdef.Scale = &resource.ScaleInfo{SpecReplicasPath: ".spec.size", StatusReplicasPath: ".spec.size"}
	gdef := gadgetDefinition()
	gdef.HasFinalize = true
	gdef.Finalize = &resource.Finalize[*gadget]{
		Copy:         func(_, _ *gadget) {},
		Pending:      func(*gadget) bool { return false },
		MarkDeleting: func(*gadget) {},
	}
	extra := &plugin{}
	tr := &trace{}
	chain := admission.New(admission.ServerPlugins{
		NamespaceLifecycle: mutator{},
		RBACEscalation:     validator{ops: []k8sadmission.Operation{k8sadmission.Create, k8sadmission.Update}},
	}).With(admission.Plugin{Name: "Extra", Interface: extra}).Traced(tr.add)
	opts := []Option{WithTypeConverter(testTypeConverter(t)), WithAuthorizer(authorizerfactory.NewAlwaysAllowAuthorizer()), WithAdmission(chain)}
	widgets := storage.New(c, storage.ResourcePrefix("/registry", &wdef.Info), wdef)
	gadgets := storage.New(c, storage.ResourcePrefix("/registry", &gdef.Info), gdef)
	srv := httptest.NewServer(NewHandler(NewResource(wdef, widgets, opts...), NewResource(gdef, gadgets, opts...)))
	t.Cleanup(srv.Close)
	e := &env{t: t, ctx: t.Context(), srv: srv}
	base := widgetsPath + "adm/widgets"
	gbase := "/apis/storagetest.apiloom.dev/v1/gadgets"
	apply := func(labels string) string {
		return `{"apiVersion":"storagetest.apiloom.dev/v1","kind":"Widget","metadata":{"name":"a"` + labels + `},"spec":{"size":1}}`
	}
	rv := func(path string) string {
		var w metav1.PartialObjectMetadata
		decodeJSON(t, e.do("GET", path, "", "").body, &w)
		return w.ResourceVersion
	}

	for _, step := range []struct {
		name, method, path, contentType, body string
		code                                  int
		order                                 string
		seen                                  []string // Extra's validating calls
	}{
		{"create refused", "POST", base, "application/json", `{"metadata":{"name":"a","labels":{"deny":"yes"}}}`, 403, writeOrder,
			[]string{"CREATE widgets/ a dryRun=false new=true old=false"}},
		{"dry-run create", "POST", base + "?dryRun=All", "application/json", `{"metadata":{"name":"a"}}`, 201, writeOrder,
			[]string{"CREATE widgets/ a dryRun=true new=true old=false"}},
		{"apply refused", "PATCH", base + "/a?fieldManager=m", mediaApply, apply(`,"labels":{"deny":"yes"}`), 403, writeOrder,
			[]string{"CREATE widgets/ a dryRun=false new=true old=false"}},
		{"apply creating", "PATCH", base + "/a?fieldManager=m", mediaApply, apply(""), 201, writeOrder,
			[]string{"CREATE widgets/ a dryRun=false new=true old=false"}},
		{"apply updating", "PATCH", base + "/a?fieldManager=m", mediaApply, apply(`,"labels":{"x":"y"}`), 200, writeOrder,
			[]string{"UPDATE widgets/ a dryRun=false new=true old=true"}},
		{"merge patch refused", "PATCH", base + "/a", "application/merge-patch+json", `{"metadata":{"labels":{"deny":"yes"}}}`, 403, writeOrder,
			[]string{"UPDATE widgets/ a dryRun=false new=true old=true"}},
		{"JSON patch", "PATCH", base + "/a", "application/json-patch+json", `[{"op":"add","path":"/spec/color","value":"red"}]`, 200, writeOrder,
			[]string{"UPDATE widgets/ a dryRun=false new=true old=true"}},
		{"strategic merge patch", "PATCH", base + "/a", "application/strategic-merge-patch+json", `{"spec":{"color":"blue"}}`, 200, writeOrder,
			[]string{"UPDATE widgets/ a dryRun=false new=true old=true"}},
		{"status merge patch", "PATCH", base + "/a/status", "application/merge-patch+json", `{"status":{"phase":"Up"}}`, 200, writeOrder,
			[]string{"UPDATE widgets/status a dryRun=false new=true old=true"}},
		{"scale", "PATCH", base + "/a/scale", "application/merge-patch+json", `{"spec":{"replicas":3}}`, 200, writeOrder,
			[]string{"UPDATE widgets/scale a dryRun=false new=true old=true"}},
		{"dry-run delete", "DELETE", base + "/a?dryRun=All", "", "", 200, deleteOrder,
			[]string{"DELETE widgets/ a dryRun=true new=false old=true"}},
		{"create b", "POST", base, "application/json", `{"metadata":{"name":"b"}}`, 201, writeOrder,
			[]string{"CREATE widgets/ b dryRun=false new=true old=false"}},
		{"deletecollection", "DELETE", base, "", "", 200, deleteOrder + " " + deleteOrder,
			[]string{"DELETE widgets/ a dryRun=false new=false old=true", "DELETE widgets/ b dryRun=false new=false old=true"}},
		{"create gadget", "POST", gbase, "application/json", `{"metadata":{"name":"g"}}`, 201, writeOrder,
			[]string{"CREATE gadgets/ g dryRun=false new=true old=false"}},
	} {
		got := e.do(step.method, step.path, step.contentType, step.body)
		if got.code != step.code {
			t.Fatalf("%s: got %d: %s", step.name, got.code, got.body)
		}
		if order := tr.take(); order != step.order {
			t.Errorf("%s: plugins ran\n  %s\nwant\n  %s", step.name, order, step.order)
		}
		if seen := extra.take(); !slices.Equal(seen, step.seen) {
			t.Errorf("%s: the added plugin saw %q, want %q", step.name, seen, step.seen)
		}
	}

	// PUT of the object and of /finalize, with the resourceVersion stored.
	body := `{"metadata":{"name":"g","resourceVersion":"` + rv(gbase+"/g") + `"}}`
	for _, path := range []string{gbase + "/g", gbase + "/g/finalize"} {
		sub := strings.TrimPrefix(strings.TrimPrefix(path, gbase+"/g"), "/")
		if got := e.do("PUT", path, "application/json", body); got.code != 200 {
			t.Fatalf("PUT %s: %d %s", path, got.code, got.body)
		}
		if order := tr.take(); order != writeOrder {
			t.Errorf("PUT %s: plugins ran\n  %s\nwant\n  %s", path, order, writeOrder)
		}
		want := []string{"UPDATE gadgets/" + sub + " g dryRun=false new=true old=true"}
		if seen := extra.take(); !slices.Equal(seen, want) {
			t.Errorf("PUT %s: the added plugin saw %q, want %q", path, seen, want)
		}
		body = `{"metadata":{"name":"g","resourceVersion":"` + rv(gbase+"/g") + `"}}`
	}
	if got := e.do("GET", base+"/a", "", ""); got.code != 404 {
		t.Fatalf("deleted: %d %s", got.code, got.body)
	}
}
