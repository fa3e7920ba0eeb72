package admission

import (
	"context"

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
type Attributes struct {
	admission.Attributes
	Stages KindStages
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
	// ObserveMutation calls mutate, a plugin's Admit, and takes in what it
	// changed.
	ObserveMutation(ctx context.Context, mutate func() error) error
}

// observed is a mutating plugin whose changes the write's KindStages
// observe.
type observed struct {
	admission.MutationInterface
}

func (p observed) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	if s, ok := StagesOf(a).(MutationObserver); ok {
		return s.ObserveMutation(ctx, func() error { return p.MutationInterface.Admit(ctx, a, o) })
	}
	return p.MutationInterface.Admit(ctx, a, o)
}
