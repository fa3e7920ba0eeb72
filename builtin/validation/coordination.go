package validation

import (
	"slices"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// leaseStrategies are the strategies without a "/" upstream knows.
var leaseStrategies = []coordinationv1.CoordinatedLeaseStrategy{coordinationv1.OldestEmulationVersion}

// Lease: a positive duration, no negative transition count, a known (or
// domain-qualified) strategy, and a preferred holder only with a strategy.
func Lease(obj, _ *coordinationv1.Lease) field.ErrorList {
	var errs field.ErrorList
	spec := &obj.Spec
	path := field.NewPath("spec")
	if spec.LeaseDurationSeconds != nil && *spec.LeaseDurationSeconds <= 0 {
		errs = append(errs, field.Invalid(path.Child("leaseDurationSeconds"), spec.LeaseDurationSeconds, "must be greater than 0"))
	}
	if spec.LeaseTransitions != nil && *spec.LeaseTransitions < 0 {
		errs = append(errs, field.Invalid(path.Child("leaseTransitions"), spec.LeaseTransitions, "must be greater than or equal to 0"))
	}
	if spec.Strategy != nil {
		errs = append(errs, leaseStrategy(*spec.Strategy, path.Child("strategy"))...)
	}
	if spec.PreferredHolder != nil && *spec.PreferredHolder != "" && (spec.Strategy == nil || *spec.Strategy == "") {
		errs = append(errs, field.Forbidden(path.Child("preferredHolder"), "may only be specified if `strategy` is defined"))
	}
	return errs
}

// leaseStrategy is upstream's check of a coordinated lease strategy,
// including its path (".../strategy/strategy", as upstream words it).
func leaseStrategy(s coordinationv1.CoordinatedLeaseStrategy, path *field.Path) field.ErrorList {
	if !strings.Contains(string(s), "/") {
		if !slices.Contains(leaseStrategies, s) {
			return field.ErrorList{field.NotSupported(path.Child("strategy"), s, leaseStrategies)}
		}
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(s)) {
		errs = append(errs, field.Invalid(path.Child("strategy"), s, msg))
	}
	return errs
}
