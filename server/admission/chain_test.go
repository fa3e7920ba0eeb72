package admission

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
)

var (
	gvk = schema.GroupVersionKind{Group: "g", Version: "v1", Kind: "Widget"}
	gvr = schema.GroupVersionResource{Group: "g", Version: "v1", Resource: "widgets"}
)

// step is a plugin that records its calls in log, and fails when told to.
type step struct {
	name string
	log  *[]string
	ops  []admission.Operation
	err  error
}

func (s step) Handles(op admission.Operation) bool {
	if len(s.ops) == 0 {
		return true
	}
	for _, o := range s.ops {
		if o == op {
			return true
		}
	}
	return false
}

type mutating struct{ step }

func (m mutating) Admit(context.Context, admission.Attributes, admission.ObjectInterfaces) error {
	*m.log = append(*m.log, "m:"+m.name)
	return m.err
}

type validating struct{ step }

func (v validating) Validate(context.Context, admission.Attributes, admission.ObjectInterfaces) error {
	*v.log = append(*v.log, "v:"+v.name)
	return v.err
}

type both struct{ step }

func (b both) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	return mutating(b).Admit(ctx, a, o)
}

func (b both) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	return validating(b).Validate(ctx, a, o)
}

func attrs(op admission.Operation) admission.Attributes {
	return admission.NewAttributesRecord(nil, nil, gvk, "", "n", gvr, "", op, nil, false, nil)
}

// TestChainRunsEachPhaseInOrder: the mutating phase calls every plugin
// that mutates and handles the operation, in order, the validating phase
// likewise, and each stops at the first error.
func TestChainRunsEachPhaseInOrder(t *testing.T) {
	var log []string
	refused := errors.New("refused")
	c := NewChain(
		Plugin{"a", mutating{step{name: "a", log: &log}}},
		Plugin{"b", both{step{name: "b", log: &log}}},
		Plugin{"c", validating{step{name: "c", log: &log, ops: []admission.Operation{admission.Delete}}}},
		Plugin{"d", validating{step{name: "d", log: &log}}},
	)
	ctx := t.Context()
	if err := c.Admit(ctx, attrs(admission.Create), nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(ctx, attrs(admission.Create), nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(log, " "); got != "m:a m:b v:b v:d" {
		t.Fatalf("create ran %q", got)
	}
	log = nil
	if err := c.Validate(ctx, attrs(admission.Delete), nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(log, " "); got != "v:b v:c v:d" {
		t.Fatalf("delete ran %q", got)
	}

	log = nil
	failing := NewChain(Plugin{"a", mutating{step{name: "a", log: &log, err: refused}}}, Plugin{"b", both{step{name: "b", log: &log}}})
	if err := failing.Admit(ctx, attrs(admission.Update), nil); !errors.Is(err, refused) {
		t.Fatalf("got %v", err)
	}
	if got := strings.Join(log, " "); got != "m:a" {
		t.Fatalf("a failing chain ran %q", got)
	}

	var nilChain *Chain
	if nilChain.Admit(ctx, attrs(admission.Create), nil) != nil || nilChain.Validate(ctx, attrs(admission.Create), nil) != nil {
		t.Fatal("a nil chain refused")
	}
}

// TestServerOrder: the server's chain runs its plugins in one order, the
// kind's own stages between the server's, and Traced reports each plugin
// of each phase as it runs.
func TestServerOrder(t *testing.T) {
	var log []string
	c := New(ServerPlugins{
		NamespaceLifecycle: mutating{step{name: "ns", log: &log}},
		RBACEscalation:     validating{step{name: "rbac", log: &log}},
	})
	want := []string{NamespaceLifecycle, KindMutatingHooks, OwnerReferences, KindPrepare, RBACEscalation, KindValidation, KindValidatingHooks}
	if got := c.Names(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("names %v, want %v", got, want)
	}
	if got := New(ServerPlugins{}).Names(); strings.Join(got, ",") != "KindMutatingHooks,OwnerReferences,KindPrepare,KindValidation,KindValidatingHooks" {
		t.Fatalf("without server plugins: %v", got)
	}
	var traced []string
	tc := c.Traced(func(p, phase string) { traced = append(traced, phase[:1]+":"+p) })
	stages := &recordingStages{log: &log}
	a := &Attributes{Attributes: attrs(admission.Create), Stages: stages}
	if err := tc.Admit(t.Context(), a, nil); err != nil {
		t.Fatal(err)
	}
	if err := tc.Validate(t.Context(), a, nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(log, " "); got != "m:ns hooks prepare v:rbac validate validateHooks" {
		t.Fatalf("ran %q", got)
	}
	if got := strings.Join(traced, " "); got != "m:NamespaceLifecycle m:KindMutatingHooks m:OwnerReferences m:KindPrepare v:RBACEscalation v:KindValidation v:KindValidatingHooks" {
		t.Fatalf("traced %q", got)
	}
}

type recordingStages struct{ log *[]string }

func (s *recordingStages) add(what string) error { *s.log = append(*s.log, what); return nil }

func (s *recordingStages) MutateHooks(context.Context) error   { return s.add("hooks") }
func (s *recordingStages) Prepare(context.Context) error       { return s.add("prepare") }
func (s *recordingStages) Validate(context.Context) error      { return s.add("validate") }
func (s *recordingStages) ValidateHooks(context.Context) error { return s.add("validateHooks") }

// reinvoking asks, once, for the mutating plugins to run again, as a
// webhook with reinvocationPolicy IfNeeded does after a later change.
type reinvoking struct{ step }

func (r reinvoking) Admit(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	*r.log = append(*r.log, "m:"+r.name)
	if rc := a.GetReinvocationContext(); !rc.IsReinvoke() {
		rc.SetShouldReinvoke()
	}
	return nil
}

// writing writes into the request's object through the convertor, as
// upstream's policy and webhook plugins write back what they changed.
type writing struct{ step }

func (w writing) Admit(_ context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	*w.log = append(*w.log, "m:"+w.name)
	return o.GetObjectConvertor().Convert(&metav1.Status{}, a.GetObject(), nil)
}

// copyingObjects are ObjectInterfaces whose convertor copies a Status.
type copyingObjects struct{ admission.ObjectInterfaces }

func (copyingObjects) GetObjectConvertor() runtime.ObjectConvertor { return copyingConvertor{} }

type copyingConvertor struct{ runtime.ObjectConvertor }

func (copyingConvertor) Convert(in, out, _ any) error {
	*out.(*metav1.Status) = *in.(*metav1.Status)
	return nil
}

// observingStages records the mutations it observes.
type observingStages struct{ recordingStages }

func (s *observingStages) ObserveMutation(_ context.Context, mutate func(before func()) error) error {
	_ = s.add("observe(")
	err := mutate(func() { _ = s.add("before") })
	_ = s.add(")")
	return err
}

// TestDynamicPluginsOrderAndReinvocation: the policies and webhooks sit
// where kube-apiserver has them, the stages observe the mutating ones, and
// a plugin asking to be reinvoked gets every mutating plugin run once more.
func TestDynamicPluginsOrderAndReinvocation(t *testing.T) {
	var log []string
	c := New(ServerPlugins{Dynamic: Dynamic{
		MutatingPolicy:    writing{step{name: "map", log: &log}},
		MutatingWebhook:   reinvoking{step{name: "mwh", log: &log}},
		ValidatingPolicy:  validating{step{name: "vap", log: &log}},
		ValidatingWebhook: validating{step{name: "vwh", log: &log}},
	}})
	want := "KindMutatingHooks,MutatingAdmissionPolicy,MutatingAdmissionWebhook,OwnerReferences,KindPrepare," +
		"KindValidation,KindValidatingHooks,ValidatingAdmissionPolicy,ValidatingAdmissionWebhook"
	if got := strings.Join(c.Names(), ","); got != want {
		t.Fatalf("names %s, want %s", got, want)
	}
	c = c.WithObjects(copyingObjects{})
	rec := admission.NewAttributesRecord(&metav1.Status{}, nil, gvk, "", "n", gvr, "", admission.Create, nil, false, nil)
	a := &Attributes{Attributes: rec, Stages: &observingStages{recordingStages{log: &log}}}
	if err := c.Admit(t.Context(), a, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(t.Context(), a, nil); err != nil {
		t.Fatal(err)
	}
	// The stages copy the object before the policy writes into it, not
	// for the webhook, which writes nothing.
	once := "hooks observe( m:map before ) observe( m:mwh ) prepare"
	if got := strings.Join(log, " "); got != once+" "+once+" validate validateHooks v:vap v:vwh" {
		t.Fatalf("ran %q", got)
	}
}

// TestAnnotations: the annotations plugins add are kept, by level, and
// the record's rules (a key "plugin/name") still hold.
func TestAnnotations(t *testing.T) {
	a := &Attributes{Attributes: attrs(admission.Create)}
	if a.GetAnnotations(auditinternal.LevelMetadata) != nil {
		t.Fatal("annotations of a fresh write")
	}
	if err := a.AddAnnotation("policy/key", "v"); err != nil {
		t.Fatal(err)
	}
	if err := a.AddAnnotationWithLevel("policy/body", "b", auditinternal.LevelRequest); err != nil {
		t.Fatal(err)
	}
	if err := a.AddAnnotation("no-slash", "v"); err == nil {
		t.Fatal("a key without a plugin name was accepted")
	}
	if got := a.GetAnnotations(auditinternal.LevelMetadata); len(got) != 1 || got["policy/key"] != "v" {
		t.Fatalf("at Metadata: %v", got)
	}
	if got := a.GetAnnotations(auditinternal.LevelRequestResponse); len(got) != 2 {
		t.Fatalf("at RequestResponse: %v", got)
	}
}
