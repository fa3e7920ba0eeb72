package validation

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/util/webhook"
)

// The rules of admissionregistration.k8s.io/v1 (k8s.io/kubernetes
// pkg/apis/admissionregistration/validation), stated on the v1 types
// rather than the internal ones upstream validates: the fields and
// messages are the same. This file holds the webhook configurations and
// what the policies share with them (rules, enums, the reserved name
// suffix); admissionpolicy.go the policies and bindings, admissioncel.go
// their CEL expressions.

// The enum values upstream accepts, each listed sorted as its
// "supported values" message lists them.
var (
	failurePolicies        = sets.New(string(admissionregistrationv1.Ignore), string(admissionregistrationv1.Fail))
	matchPolicies          = sets.New(string(admissionregistrationv1.Exact), string(admissionregistrationv1.Equivalent))
	reinvocationPolicies   = sets.New(string(admissionregistrationv1.NeverReinvocationPolicy), string(admissionregistrationv1.IfNeededReinvocationPolicy))
	ruleScopes             = sets.New(string(admissionregistrationv1.ClusterScope), string(admissionregistrationv1.NamespacedScope), string(admissionregistrationv1.AllScopes))
	sideEffectClasses      = sets.New(string(admissionregistrationv1.SideEffectClassUnknown), string(admissionregistrationv1.SideEffectClassNone), string(admissionregistrationv1.SideEffectClassSome), string(admissionregistrationv1.SideEffectClassNoneOnDryRun))
	noSideEffectClasses    = sets.New(string(admissionregistrationv1.SideEffectClassNone), string(admissionregistrationv1.SideEffectClassNoneOnDryRun))
	webhookOperations      = sets.New(string(admissionregistrationv1.OperationAll), string(admissionregistrationv1.Create), string(admissionregistrationv1.Update), string(admissionregistrationv1.Delete), string(admissionregistrationv1.Connect))
	mutatingOperations     = sets.New(string(admissionregistrationv1.OperationAll), string(admissionregistrationv1.Create), string(admissionregistrationv1.Update), string(admissionregistrationv1.Connect))
	acceptedReviewVersions = []string{"v1", "v1beta1"} // the AdmissionReview versions the previous minor release understands
)

// staticSuffix ends the names kube-apiserver keeps for admission
// configurations loaded from manifests (ManifestBasedAdmissionControlConfig,
// on by default in v1.37): no object of these kinds may be written with
// such a name through the API.
const staticSuffix = ".static.k8s.io"

// staticSuffixErrors refuses a name with staticSuffix; upstream's strategies
// add it after the kind's own rules, on create only.
func staticSuffixErrors(name string) field.ErrorList {
	if !strings.HasSuffix(name, staticSuffix) {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), name,
		fmt.Sprintf("names ending with %q are reserved for static manifest-based configurations and cannot be managed via the API", staticSuffix))}
}

// webhookOptions are what upstream relaxes on an update for the sake of
// objects stored by older releases: each is the strict value on create.
type webhookOptions struct {
	skipMatchConditions   bool // the match conditions are unchanged: not compiled again
	sideEffectsAny        bool // some stored webhook has side effects: any class is accepted
	reviewVersionsAny     bool // some stored webhook names no known AdmissionReview version
	duplicateNamesAllowed bool // the stored webhooks repeat a name
	invalidLabelValues    bool // a stored selector has a label value the rules now refuse
	stored                storedExpressions
}

// ValidatingWebhookConfiguration: each webhook by a fully qualified,
// unique name, with valid rules, enums, timeout, selectors, exactly one
// of a URL or a service, match conditions that compile, and the
// AdmissionReview versions it understands.
func ValidatingWebhookConfiguration(obj, old *admissionregistrationv1.ValidatingWebhookConfiguration) field.ErrorList {
	var opts webhookOptions
	if old != nil {
		opts = webhookOptions{
			skipMatchConditions: len(obj.Webhooks) == len(old.Webhooks) && !slices.ContainsFunc(indexes(old.Webhooks), func(i int) bool {
				return !reflect.DeepEqual(obj.Webhooks[i].MatchConditions, old.Webhooks[i].MatchConditions)
			}),
			stored: newStoredExpressions(),
		}
		names := sets.New[string]()
		for _, w := range old.Webhooks {
			opts.noteStored(names, w.Name, w.SideEffects, w.AdmissionReviewVersions, w.NamespaceSelector, w.ObjectSelector, w.MatchConditions)
		}
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range obj.Webhooks {
		w, path := &obj.Webhooks[i], field.NewPath("webhooks").Index(i)
		errs = append(errs, webhookErrors(path, &webhookFields{w.Name, w.Rules, w.FailurePolicy, w.MatchPolicy, w.SideEffects, w.TimeoutSeconds,
			w.NamespaceSelector, w.ObjectSelector, nil, w.ClientConfig, w.MatchConditions}, opts)...)
		errs = append(errs, admissionReviewVersionErrors(w.AdmissionReviewVersions, !opts.reviewVersionsAny, path.Child("admissionReviewVersions"))...)
		errs = append(errs, duplicateName(names, w.Name, opts, path)...)
	}
	if old == nil {
		errs = append(errs, staticSuffixErrors(obj.Name)...)
	}
	return errs
}

// MutatingWebhookConfiguration: as a ValidatingWebhookConfiguration, and
// each webhook's reinvocationPolicy.
func MutatingWebhookConfiguration(obj, old *admissionregistrationv1.MutatingWebhookConfiguration) field.ErrorList {
	var opts webhookOptions
	if old != nil {
		opts = webhookOptions{
			skipMatchConditions: len(obj.Webhooks) == len(old.Webhooks) && !slices.ContainsFunc(indexes(old.Webhooks), func(i int) bool {
				return !reflect.DeepEqual(obj.Webhooks[i].MatchConditions, old.Webhooks[i].MatchConditions)
			}),
			stored: newStoredExpressions(),
		}
		names := sets.New[string]()
		for _, w := range old.Webhooks {
			opts.noteStored(names, w.Name, w.SideEffects, w.AdmissionReviewVersions, w.NamespaceSelector, w.ObjectSelector, w.MatchConditions)
		}
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range obj.Webhooks {
		w, path := &obj.Webhooks[i], field.NewPath("webhooks").Index(i)
		errs = append(errs, webhookErrors(path, &webhookFields{w.Name, w.Rules, w.FailurePolicy, w.MatchPolicy, w.SideEffects, w.TimeoutSeconds,
			w.NamespaceSelector, w.ObjectSelector, &w.ReinvocationPolicy, w.ClientConfig, w.MatchConditions}, opts)...)
		errs = append(errs, admissionReviewVersionErrors(w.AdmissionReviewVersions, !opts.reviewVersionsAny, path.Child("admissionReviewVersions"))...)
		errs = append(errs, duplicateName(names, w.Name, opts, path)...)
	}
	if old == nil {
		errs = append(errs, staticSuffixErrors(obj.Name)...)
	}
	return errs
}

// indexes are the indexes of s.
func indexes[T any](s []T) []int {
	out := make([]int, len(s))
	for i := range out {
		out[i] = i
	}
	return out
}

// noteStored records what a stored webhook allows its update to keep
// (names holds the stored webhooks' names so far): upstream relaxes a rule
// for the whole configuration when any stored webhook breaks it.
func (o *webhookOptions) noteStored(names sets.Set[string], name string, sideEffects *admissionregistrationv1.SideEffectClass, versions []string,
	namespaces, objects *metav1.LabelSelector, conditions []admissionregistrationv1.MatchCondition) {
	if sideEffects == nil || !noSideEffectClasses.Has(string(*sideEffects)) {
		o.sideEffectsAny = true
	}
	if len(versions) > 0 && !slices.ContainsFunc(versions, func(v string) bool { return slices.Contains(acceptedReviewVersions, v) }) {
		o.reviewVersionsAny = true
	}
	if names.Has(name) {
		o.duplicateNamesAllowed = true
	}
	names.Insert(name)
	strict := metav1validation.LabelSelectorValidationOptions{}
	for _, sel := range []*metav1.LabelSelector{namespaces, objects} {
		if sel != nil && len(metav1validation.ValidateLabelSelector(sel, strict, nil)) > 0 {
			o.invalidLabelValues = true
		}
	}
	for _, c := range conditions {
		o.stored.matchConditions.Insert(c.Expression)
	}
}

// duplicateName reports a webhook name seen before in names (and adds it),
// unless the stored configuration repeated names already.
func duplicateName(names sets.Set[string], name string, opts webhookOptions, path *field.Path) field.ErrorList {
	if opts.duplicateNamesAllowed || name == "" {
		return nil
	}
	if names.Has(name) {
		return field.ErrorList{field.Duplicate(path.Child("name"), name)}
	}
	names.Insert(name)
	return nil
}

// webhookFields are the fields a validating and a mutating webhook share,
// and the mutating one's reinvocationPolicy (nil for a validating one).
type webhookFields struct {
	name              string
	rules             []admissionregistrationv1.RuleWithOperations
	failurePolicy     *admissionregistrationv1.FailurePolicyType
	matchPolicy       *admissionregistrationv1.MatchPolicyType
	sideEffects       *admissionregistrationv1.SideEffectClass
	timeoutSeconds    *int32
	namespaceSelector *metav1.LabelSelector
	objectSelector    *metav1.LabelSelector
	reinvocation      **admissionregistrationv1.ReinvocationPolicyType
	clientConfig      admissionregistrationv1.WebhookClientConfig
	matchConditions   []admissionregistrationv1.MatchCondition
}

// webhookErrors are upstream's validateValidatingWebhook and
// validateMutatingWebhook, in their order.
func webhookErrors(path *field.Path, w *webhookFields, opts webhookOptions) field.ErrorList {
	errs := utilvalidation.IsFullyQualifiedName(path.Child("name"), w.name)
	for i := range w.rules {
		errs = append(errs, ruleWithOperationsErrors(&w.rules[i], path.Child("rules").Index(i))...)
	}
	if w.failurePolicy != nil && !failurePolicies.Has(string(*w.failurePolicy)) {
		errs = append(errs, field.NotSupported(path.Child("failurePolicy"), *w.failurePolicy, sets.List(failurePolicies)))
	}
	if w.matchPolicy != nil && !matchPolicies.Has(string(*w.matchPolicy)) {
		errs = append(errs, field.NotSupported(path.Child("matchPolicy"), *w.matchPolicy, sets.List(matchPolicies)))
	}
	allowed := noSideEffectClasses
	if opts.sideEffectsAny {
		allowed = sideEffectClasses
	}
	if w.sideEffects == nil {
		errs = append(errs, field.Required(path.Child("sideEffects"), fmt.Sprintf("must specify one of %v", strings.Join(sets.List(allowed), ", "))))
	} else if !allowed.Has(string(*w.sideEffects)) {
		errs = append(errs, field.NotSupported(path.Child("sideEffects"), *w.sideEffects, sets.List(allowed)))
	}
	if t := w.timeoutSeconds; t != nil && (*t > 30 || *t < 1) {
		errs = append(errs, field.Invalid(path.Child("timeoutSeconds"), *t, "the timeout value must be between 1 and 30 seconds"))
	}
	selectorOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.invalidLabelValues}
	if w.namespaceSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(w.namespaceSelector, selectorOpts, path.Child("namespaceSelector"))...)
	}
	if w.objectSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(w.objectSelector, selectorOpts, path.Child("objectSelector"))...)
	}
	if w.reinvocation != nil && *w.reinvocation != nil && !reinvocationPolicies.Has(string(**w.reinvocation)) {
		errs = append(errs, field.NotSupported(path.Child("reinvocationPolicy"), **w.reinvocation, sets.List(reinvocationPolicies)))
	}
	cc := w.clientConfig
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		errs = append(errs, field.Required(path.Child("clientConfig"), "exactly one of url or service is required"))
	case cc.URL != nil:
		errs = append(errs, webhook.ValidateWebhookURL(path.Child("clientConfig", "url"), *cc.URL, true)...)
	default:
		port := int32(443) // the default, which the internal type upstream validates always has
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		errs = append(errs, webhook.ValidateWebhookService(path.Child("clientConfig", "service"), cc.Service.Name, cc.Service.Namespace, cc.Service.Path, port)...)
	}
	if !opts.skipMatchConditions {
		errs = append(errs, matchConditionErrors(w.matchConditions, false, opts.stored, path.Child("matchConditions"))...)
	}
	return errs
}

// admissionReviewVersionErrors: at least one version, each a DNS-1035
// label named once, and (unless the stored object had none) one this
// server's previous release understands.
func admissionReviewVersionErrors(versions []string, requireKnown bool, path *field.Path) field.ErrorList {
	if len(versions) == 0 {
		return field.ErrorList{field.Required(path, fmt.Sprintf("must specify one of %v", strings.Join(acceptedReviewVersions, ", ")))}
	}
	var errs field.ErrorList
	seen, known := sets.New[string](), false
	for i, v := range versions {
		if seen.Has(v) {
			errs = append(errs, field.Invalid(path.Index(i), v, "duplicate version"))
			continue
		}
		seen.Insert(v)
		for _, msg := range utilvalidation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(path.Index(i), v, msg))
		}
		known = known || slices.Contains(acceptedReviewVersions, v)
	}
	if requireKnown && !known {
		errs = append(errs, field.Invalid(path, versions, fmt.Sprintf("must include at least one of %v", strings.Join(acceptedReviewVersions, ", "))))
	}
	return errs
}

// ruleWithOperationsErrors: at least one operation, "*" alone, each
// supported; then the rule.
func ruleWithOperationsErrors(r *admissionregistrationv1.RuleWithOperations, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.Operations) == 0 {
		errs = append(errs, field.Required(path.Child("operations"), ""))
	}
	if len(r.Operations) > 1 && slices.Contains(r.Operations, admissionregistrationv1.OperationAll) {
		errs = append(errs, field.Invalid(path.Child("operations"), r.Operations, "if '*' is present, must not specify other operations"))
	}
	for i, op := range r.Operations {
		if !webhookOperations.Has(string(op)) {
			errs = append(errs, field.NotSupported(path.Child("operations").Index(i), op, sets.List(webhookOperations)))
		}
	}
	return append(errs, ruleErrors(&r.Rule, path)...)
}

// ruleErrors: API groups and versions given, "*" alone, no empty version;
// resources (with subresources) as resourceErrors; a supported scope.
func ruleErrors(r *admissionregistrationv1.Rule, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(path.Child("apiGroups"), ""))
	}
	if len(r.APIGroups) > 1 && slices.Contains(r.APIGroups, "*") {
		errs = append(errs, field.Invalid(path.Child("apiGroups"), r.APIGroups, "if '*' is present, must not specify other API groups"))
	}
	if len(r.APIVersions) == 0 {
		errs = append(errs, field.Required(path.Child("apiVersions"), ""))
	}
	if len(r.APIVersions) > 1 && slices.Contains(r.APIVersions, "*") {
		errs = append(errs, field.Invalid(path.Child("apiVersions"), r.APIVersions, "if '*' is present, must not specify other API versions"))
	}
	for i, v := range r.APIVersions {
		if v == "" {
			errs = append(errs, field.Required(path.Child("apiVersions").Index(i), ""))
		}
	}
	errs = append(errs, resourceErrors(r.Resources, path.Child("resources"))...)
	if r.Scope != nil && !ruleScopes.Has(string(*r.Scope)) {
		errs = append(errs, field.NotSupported(path.Child("scope"), *r.Scope, sets.List(ruleScopes)))
	}
	return errs
}

// resourceErrors: at least one resource, none empty; "x/*" excludes other
// subresources of x, "*/y" other resources' y, "*/*" everything else, and
// "*" every resource without a subresource.
func resourceErrors(resources []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(resources) == 0 {
		errs = append(errs, field.Required(path, ""))
	}
	allSubs, allRes := sets.New[string](), sets.New[string]() // x of "x/*", y of "*/y"
	doubleWildcard, wildcard, plain := false, false, false
	for i, rs := range resources {
		if rs == "" {
			errs = append(errs, field.Required(path.Index(i), ""))
			continue
		}
		doubleWildcard = doubleWildcard || rs == "*/*"
		wildcard = wildcard || rs == "*"
		res, sub, ok := strings.Cut(rs, "/")
		if !ok {
			plain = rs != "*" // as upstream: the last one without a subresource decides
			continue
		}
		if allSubs.Has(res) {
			errs = append(errs, field.Invalid(path.Index(i), rs, fmt.Sprintf("if '%s/*' is present, must not specify %s", res, rs)))
		}
		if allRes.Has(sub) {
			errs = append(errs, field.Invalid(path.Index(i), rs, fmt.Sprintf("if '*/%s' is present, must not specify %s", sub, rs)))
		}
		if sub == "*" {
			allSubs.Insert(res)
		}
		if res == "*" {
			allRes.Insert(sub)
		}
	}
	if len(resources) > 1 && doubleWildcard {
		errs = append(errs, field.Invalid(path, resources, "if '*/*' is present, must not specify other resources"))
	}
	if wildcard && plain {
		errs = append(errs, field.Invalid(path, resources, "if '*' is present, must not specify other resources without subresources"))
	}
	return errs
}

// matchConditionErrors: at most 64 conditions, each with an expression
// that compiles to a bool (params only for a policy with a paramKind)
// and a qualified name used once.
func matchConditionErrors(conds []admissionregistrationv1.MatchCondition, params bool, stored storedExpressions, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(conds) > 64 {
		errs = append(errs, field.TooMany(path, len(conds), 64))
	}
	names := sets.New[string]()
	for i := range conds {
		c, p := &conds[i], path.Index(i)
		if expr := strings.TrimSpace(c.Expression); expr == "" {
			errs = append(errs, field.Required(p.Child("expression"), ""))
		} else {
			errs = append(errs, compileMatchCondition(expr, params, stored.matchConditions.Has(expr), p.Child("expression"))...)
		}
		if c.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else {
			errs = append(errs, qualifiedName(c.Name, p.Child("name"))...)
		}
		if c.Name != "" {
			if names.Has(c.Name) {
				errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
			} else {
				names.Insert(c.Name)
			}
		}
	}
	return errs
}

// qualifiedName is upstream's ValidateQualifiedName.
func qualifiedName(value string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsQualifiedName(value) {
		errs = append(errs, field.Invalid(path, value, msg))
	}
	return errs
}
