package validation

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The resource names kube-apiserver knows for quota without a prefix
// (k8s.io/kubernetes pkg/apis/core/helper's standardQuotaResources); a
// name with a "/" (count/<resource>.<group>, an extended resource) is
// checked only for its form.
var standardQuotaResources = sets.New[corev1.ResourceName](
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsStorage,
	corev1.ResourceRequestsEphemeralStorage, corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory,
	corev1.ResourceLimitsEphemeralStorage, corev1.ResourcePods, corev1.ResourceQuotas,
	corev1.ResourceServices, corev1.ResourceReplicationControllers, corev1.ResourceSecrets,
	corev1.ResourcePersistentVolumeClaims, corev1.ResourceConfigMaps,
	corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
)

// integerQuotaResources are counted in whole units (upstream's
// integerResources); extended resources are too.
var integerQuotaResources = sets.New[corev1.ResourceName](
	corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices,
	corev1.ResourceReplicationControllers, corev1.ResourceSecrets, corev1.ResourceConfigMaps,
	corev1.ResourcePersistentVolumeClaims, corev1.ResourceServicesNodePorts,
	corev1.ResourceServicesLoadBalancers,
)

// The scopes kube-apiserver knows (IsStandardResourceQuotaScope).
var quotaScopes = sets.New[corev1.ResourceQuotaScope](
	corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating,
	corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort,
	corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeVolumeAttributesClass,
	corev1.ResourceQuotaScopeCrossNamespacePodAffinity,
)

// Pods' and persistent volume claims' resources, the only ones the
// pod and claim scopes may limit (IsResourceQuotaScopeValidForResource).
var (
	podCountResources   = sets.New[corev1.ResourceName](corev1.ResourcePods)
	podComputeResources = sets.New[corev1.ResourceName](corev1.ResourceCPU, corev1.ResourceMemory,
		corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory)
	pvcResources = sets.New[corev1.ResourceName](corev1.ResourcePersistentVolumeClaims, corev1.ResourceRequestsStorage)
)

// ResourceQuota is kube-apiserver's ValidateResourceQuota (and, on
// update, ValidateResourceQuotaUpdate): every resource name of
// spec.hard is a quota resource and its quantity non-negative (whole for
// counted resources), the scopes are known, apply to the resources
// limited and do not conflict, a scope selector is well-formed, and the
// scopes never change after create. The status is checked as a status
// write is.
func ResourceQuota(obj, old *corev1.ResourceQuota) field.ErrorList {
	spec := field.NewPath("spec")
	errs := quotaResources(obj.Spec.Hard, spec.Child("hard"))
	errs = append(errs, quotaScopesValid(&obj.Spec, spec)...)
	if obj.Spec.ScopeSelector != nil {
		errs = append(errs, quotaScopeSelector(&obj.Spec, spec.Child("scopeSelector"))...)
	}
	if old == nil {
		return append(errs, quotaStatus(obj)...)
	}
	if !sets.New(obj.Spec.Scopes...).Equal(sets.New(old.Spec.Scopes...)) {
		errs = append(errs, field.Invalid(spec.Child("scopes"), obj.Spec.Scopes, apivalidation.FieldImmutableErrorMsg))
	}
	return errs
}

// ResourceQuotaStatus is kube-apiserver's rule for a write to
// resourcequotas/NAME/status (ValidateResourceQuotaStatusUpdate):
// status.hard and status.used hold quota resources and non-negative
// quantities.
func ResourceQuotaStatus(obj, _ *corev1.ResourceQuota) field.ErrorList {
	return quotaStatus(obj)
}

func quotaStatus(obj *corev1.ResourceQuota) field.ErrorList {
	status := field.NewPath("status")
	return append(quotaResources(obj.Status.Hard, status.Child("hard")), quotaResources(obj.Status.Used, status.Child("used"))...)
}

// quotaResources checks each name and quantity of a resource list.
func quotaResources(list corev1.ResourceList, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for name, q := range list {
		p := path.Key(string(name))
		errs = append(errs, quotaResourceName(name, p)...)
		if q.Cmp(resource.Quantity{}) < 0 {
			errs = append(errs, field.Invalid(p, q.String(), apivalidation.IsNegativeErrorMsg))
		}
		if isIntegerQuotaResource(name) && q.MilliValue()%1000 != 0 {
			errs = append(errs, field.Invalid(p, q, "must be an integer"))
		}
	}
	return errs
}

// quotaResourceName is ValidateResourceQuotaResourceName: a qualified
// name, and a standard quota resource unless it has a prefix.
func quotaResourceName(name corev1.ResourceName, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	if len(errs) > 0 || strings.Contains(string(name), "/") {
		return errs
	}
	if !isStandardQuotaResource(name) {
		if name == corev1.ResourceStorage {
			// A standard resource, but not one for quota.
			return append(errs, field.Invalid(path, name, "must be a standard resource for quota"))
		}
		return append(errs, field.Invalid(path, name, "must be a standard resource type or fully qualified"))
	}
	return errs
}

func isStandardQuotaResource(name corev1.ResourceName) bool {
	return standardQuotaResources.Has(name) || strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) ||
		strings.HasPrefix(string(name), corev1.ResourceRequestsHugePagesPrefix)
}

// isIntegerQuotaResource is upstream's IsIntegerResourceName: the counted
// resources and the extended resources (with a prefix that is not
// kubernetes.io/ nor requests.).
func isIntegerQuotaResource(name corev1.ResourceName) bool {
	if integerQuotaResources.Has(name) {
		return true
	}
	s := string(name)
	if !strings.Contains(s, "/") || strings.Contains(s, corev1.ResourceDefaultNamespacePrefix) ||
		strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+s)) == 0
}

// scopeValidFor is IsResourceQuotaScopeValidForResource: the pod scopes
// limit only pods' resources, the claim scope only claims'.
func scopeValidFor(scope corev1.ResourceQuotaScope, name corev1.ResourceName) bool {
	switch scope {
	case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeNotBestEffort,
		corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return podCountResources.Has(name) || podComputeResources.Has(name)
	case corev1.ResourceQuotaScopeBestEffort:
		return podCountResources.Has(name)
	case corev1.ResourceQuotaScopeVolumeAttributesClass:
		return pvcResources.Has(name)
	}
	return true
}

// conflictingScopes are the pairs no quota may have both of.
var conflictingScopes = [][2]corev1.ResourceQuotaScope{
	{corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort},
	{corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating},
}

// quotaScopesValid is validateResourceQuotaScopes.
func quotaScopesValid(spec *corev1.ResourceQuotaSpec, path *field.Path) field.ErrorList {
	if len(spec.Scopes) == 0 {
		return nil
	}
	var errs field.ErrorList
	p := path.Child("scopes")
	names := sets.KeySet(spec.Hard)
	for _, scope := range spec.Scopes {
		if !quotaScopes.Has(scope) {
			errs = append(errs, field.Invalid(p, spec.Scopes, "unsupported scope"))
		}
		for _, name := range sets.List(names) {
			if isStandardQuotaResource(name) && !scopeValidFor(scope, name) {
				errs = append(errs, field.Invalid(p, spec.Scopes, "unsupported scope applied to resource"))
			}
		}
	}
	have := sets.New(spec.Scopes...)
	for _, pair := range conflictingScopes {
		if have.HasAll(pair[0], pair[1]) {
			errs = append(errs, field.Invalid(p, spec.Scopes, "conflicting scopes"))
		}
	}
	return errs
}

// quotaScopeSelector is validateScopedResourceSelectorRequirement.
func quotaScopeSelector(spec *corev1.ResourceQuotaSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	p := path.Child("matchExpressions")
	names := sets.KeySet(spec.Hard)
	have := sets.New[corev1.ResourceQuotaScope]()
	for _, req := range spec.ScopeSelector.MatchExpressions {
		if !quotaScopes.Has(req.ScopeName) {
			errs = append(errs, field.Invalid(p.Child("scopeName"), req.ScopeName, "unsupported scope"))
		}
		for _, name := range sets.List(names) {
			if isStandardQuotaResource(name) && !scopeValidFor(req.ScopeName, name) {
				errs = append(errs, field.Invalid(p, spec.ScopeSelector, "unsupported scope applied to resource"))
			}
		}
		switch req.ScopeName {
		case corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopeTerminating,
			corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
			if req.Operator != corev1.ScopeSelectorOpExists {
				errs = append(errs, field.Invalid(p.Child("operator"), req.Operator,
					"must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"))
			}
		}
		switch req.Operator {
		case corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn:
			if len(req.Values) == 0 {
				errs = append(errs, field.Required(p.Child("values"), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
			}
		case corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist:
			if len(req.Values) != 0 {
				errs = append(errs, field.Invalid(p.Child("values"), req.Values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
			}
		default:
			errs = append(errs, field.Invalid(p.Child("operator"), req.Operator, "not a valid selector operator"))
		}
		have.Insert(req.ScopeName)
	}
	for _, pair := range conflictingScopes {
		if have.HasAll(pair[0], pair[1]) {
			errs = append(errs, field.Invalid(p, spec.Scopes, "conflicting scopes"))
		}
	}
	return errs
}
