package admission

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"

	"k8s.io/apiserver/pkg/admission"
)

// KindStages are what one write's resource brings to admission, bound to
// that write: the handler builds them with the request's object, the
// stored one and what the request sent, and the Kind* plugins call them.
// Each returns the API error the client gets.
type KindStages interface {
	// MutateHooks runs the kind's mutating hooks (Default, PrepareFor*).
	MutateHooks(ctx context.Context) error
	// Prepare sets what the server owns (uid, creationTimestamp,
	// generation, the deletion fields, a subresource's fields) and applies
	// the kind's strategy and defaults: kube-apiserver's BeforeCreate and
	// BeforeUpdate, after mutating admission.
	Prepare(ctx context.Context) error
	// Validate checks the metadata rules, the kind's strategy and its
	// schema with CEL: 422 Invalid with every violation.
	Validate(ctx context.Context) error
	// ValidateHooks runs the kind's validating hooks.
	ValidateHooks(ctx context.Context) error
}

// Attributes are a write's admission.Attributes with its KindStages.
// They keep the audit annotations plugins add (a policy's
// auditAnnotations, its Audit action, a webhook's), which
// k8s.io/apiserver's record keeps only for its own audit layer, so the
// server can report them (admission.AnnotationsGetter).
type Attributes struct {
	admission.Attributes
	Stages KindStages

	mu          sync.Mutex // guards annotations: webhooks add them concurrently
	annotations map[string]annotation
}

// annotation is an audit annotation and the audit level it is for.
type annotation struct {
	value string
	level auditinternal.Level
}

var _ admission.AnnotationsGetter = (*Attributes)(nil)

// AddAnnotation adds an audit annotation at level Metadata.
func (a *Attributes) AddAnnotation(key, value string) error {
	return a.AddAnnotationWithLevel(key, value, auditinternal.LevelMetadata)
}

// AddAnnotationWithLevel adds an audit annotation, checked by the record
// it wraps (a key of the form "plugin/name", never overwritten).
func (a *Attributes) AddAnnotationWithLevel(key, value string, level auditinternal.Level) error {
	if err := a.Attributes.AddAnnotationWithLevel(key, value, level); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.annotations == nil {
		a.annotations = map[string]annotation{}
	}
	a.annotations[key] = annotation{value: value, level: level}
	return nil
}

// GetAnnotations returns the audit annotations for an audit event at
// maxLevel: those added at that level or below.
func (a *Attributes) GetAnnotations(maxLevel auditinternal.Level) map[string]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.annotations) == 0 {
		return nil
	}
	out := make(map[string]string, len(a.annotations))
	for k, v := range a.annotations {
		if !maxLevel.Less(v.level) {
			out[k] = v.value
		}
	}
	return out
}

// StagesOf is a's KindStages; nil when a carries none.
func StagesOf(a admission.Attributes) KindStages {
	if r, ok := a.(*Attributes); ok {
		return r.Stages
	}
	return nil
}

// kindPlugin calls one of a write's KindStages.
type kindPlugin struct {
	mutate   func(KindStages, context.Context) error
	validate func(KindStages, context.Context) error
}

func (kindPlugin) Handles(admission.Operation) bool { return true }

type kindMutating struct{ kindPlugin }

func (p kindMutating) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if s := StagesOf(a); s != nil {
		return p.mutate(s, ctx)
	}
	return nil
}

type kindValidating struct{ kindPlugin }

func (p kindValidating) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if s := StagesOf(a); s != nil {
		return p.validate(s, ctx)
	}
	return nil
}

// The plugins of the kind's own stages.
var (
	kindMutatingHooks   = kindMutating{kindPlugin{mutate: KindStages.MutateHooks}}
	kindPrepare         = kindMutating{kindPlugin{mutate: KindStages.Prepare}}
	kindValidation      = kindValidating{kindPlugin{validate: KindStages.Validate}}
	kindValidatingHooks = kindValidating{kindPlugin{validate: KindStages.ValidateHooks}}
)

// MutationObserver is implemented by KindStages that follow what the
// mutating plugins not of the kind (policies, webhooks) change in the
// write's object: a kind with a schema validates the request's content,
// which must then hold their changes too, as it holds its hooks'.
type MutationObserver interface {
	// ObserveMutation calls mutate, a plugin's Admit, which calls before
	// just before the plugin first writes into the write's object, and
	// takes in what it changed. Nothing is copied for a plugin that
	// changes nothing, the common case.
	ObserveMutation(ctx context.Context, mutate func(before func()) error) error
}

// observed is a mutating plugin whose changes the write's KindStages
// observe. k8s.io/apiserver's policy and webhook plugins mutate a copy of
// the object (in the version they match) and write it back into the
// request's object through the ObjectInterfaces' convertor, once, at the
// end; observed hands them a convertor that says when.
type observed struct {
	admission.MutationInterface
}

func (p observed) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	s, ok := StagesOf(a).(MutationObserver)
	if !ok || o == nil {
		return p.MutationInterface.Admit(ctx, a, o)
	}
	return s.ObserveMutation(ctx, func(before func()) error {
		return p.MutationInterface.Admit(ctx, a, writeBack{ObjectInterfaces: o, target: a.GetObject(), before: before})
	})
}

// writeBack are ObjectInterfaces whose convertor calls before when it is
// about to write into target.
type writeBack struct {
	admission.ObjectInterfaces
	target runtime.Object
	before func()
}

func (w writeBack) GetObjectConvertor() runtime.ObjectConvertor {
	return writeBackConvertor{ObjectConvertor: w.ObjectInterfaces.GetObjectConvertor(), target: w.target, before: w.before}
}

type writeBackConvertor struct {
	runtime.ObjectConvertor
	target runtime.Object
	before func()
}

func (c writeBackConvertor) Convert(in, out, context any) error {
	if o, ok := out.(runtime.Object); ok && c.target != nil && o == c.target {
		c.before()
	}
	return c.ObjectConvertor.Convert(in, out, context)
}
