package schemacheck

import (
	"context"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
)

// The three validations below are those of kube-apiserver's CRD strategy
// (create and update) and status strategy (update of /status), in the same
// order, so a write gets the same causes in the same order as from a CRD.
// Each takes the violations the metadata checks found before it (earlier):
// as in kube-apiserver, some of them (a required, too long, unsupported or
// wrongly typed value) keep the CEL rules from running, and the answer
// then says so. Each returns earlier followed by its own violations.
//
// Ratcheting is always on, as the CRDValidationRatcheting gate is in
// kube-apiserver since 1.33: on an update, a value that fails the schema
// but is unchanged from the old object (correlated by field name, map key
// and list-map key) is not an error, nor is a CEL rule whose value is
// unchanged (transition rules, with oldSelf, always run).

// Create validates obj, the object a create stores. afterSchema are the
// violations kube-apiserver lists right after the schema's (those of a
// scale subresource's replicas fields); they do not keep CEL rules from
// running.
func (c *Check) Create(ctx context.Context, obj map[string]any, earlier, afterSchema field.ErrorList) field.ErrorList {
	errs := earlier
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj, c.schema)...)
	errs = append(errs, afterSchema...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, obj, c.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, c.structural, obj)...)
	return c.validateCEL(ctx, errs, obj, nil)
}

// Update validates obj, the object an update of the object (not of its
// status) stores over old.
func (c *Check) Update(ctx context.Context, obj, old map[string]any, earlier, afterSchema field.ErrorList) field.ErrorList {
	correlated := common.NewCorrelatedObject(obj, old, &model.Structural{Structural: c.structural})
	errs := earlier
	errs = append(errs, apiservervalidation.ValidateCustomResourceUpdate(nil, obj, old, c.schema, apiservervalidation.WithRatcheting(correlated))...)
	errs = append(errs, afterSchema...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, obj, c.structural, false)...)
	// List sets and maps ratchet as a whole: checked only when old passes.
	if oldErrs := structurallisttype.ValidateListSetsAndMaps(nil, c.structural, old); len(oldErrs) == 0 {
		errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, c.structural, obj)...)
	}
	return c.validateCEL(ctx, errs, obj, old, cel.WithRatcheting(correlated))
}

// StatusUpdate validates obj, the object a write to /status stores over
// old (old with the new status). Only .status is validated by the OpenAPI
// schema, so a spec that a tightened schema no longer accepts does not
// stop status writes; CEL rules run on the whole object, ratcheting the
// unchanged spec.
func (c *Check) StatusUpdate(ctx context.Context, obj, old map[string]any, earlier, afterSchema field.ErrorList) field.ErrorList {
	correlated := common.NewCorrelatedObject(obj, old, &model.Structural{Structural: c.structural})
	errs := earlier
	if status, ok := obj["status"]; ok && c.status != nil {
		errs = append(errs, apiservervalidation.ValidateCustomResourceUpdate(field.NewPath("status"), status, old["status"], c.status, apiservervalidation.WithRatcheting(correlated.Key("status")))...)
	}
	errs = append(errs, afterSchema...)
	if newErrs := structurallisttype.ValidateListSetsAndMaps(nil, c.structural, obj); len(newErrs) > 0 {
		if oldErrs := structurallisttype.ValidateListSetsAndMaps(nil, c.structural, old); len(oldErrs) == 0 {
			errs = append(errs, newErrs...)
		}
	}
	return c.validateCEL(ctx, errs, obj, old, cel.WithRatcheting(correlated))
}

// validateCEL runs the CEL rules on obj (with old for transition rules)
// within kube-apiserver's runtime cost budget for one object, unless errs
// holds a violation that blocks them (blockingError).
func (c *Check) validateCEL(ctx context.Context, errs field.ErrorList, obj, old map[string]any, opts ...cel.Option) field.ErrorList {
	if c.cel == nil {
		return errs
	}
	if blocking(errs) {
		return append(errs, errRulesNotChecked())
	}
	var oldObj any
	if old != nil {
		oldObj = old
	}
	celErrs, _ := c.cel.Validate(ctx, nil, c.structural, obj, oldObj, celconfig.RuntimeCELCostBudget, opts...)
	return append(errs, celErrs...)
}

// blocking reports whether errs holds a violation after which
// kube-apiserver does not run CEL rules: a value of the wrong type,
// missing, unsupported, too long or with too many items, which rules
// could not be evaluated on.
func blocking(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

// errRulesNotChecked is the violation kube-apiserver adds when blocking
// violations kept the CEL rules from running.
func errRulesNotChecked() *field.Error {
	return field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")
}
