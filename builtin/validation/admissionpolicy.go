package validation

import (
	"fmt"
	"regexp"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/client-go/util/jsonpath"
)

// The admission policies and their bindings (see admissionregistration.go).

var (
	validationReasons    = sets.New(string(metav1.StatusReasonForbidden), string(metav1.StatusReasonInvalid), string(metav1.StatusReasonRequestEntityTooLarge))
	patchTypes           = sets.New(string(admissionregistrationv1.PatchTypeApplyConfiguration), string(admissionregistrationv1.PatchTypeJSONPatch))
	validationActions    = sets.New(string(admissionregistrationv1.Deny), string(admissionregistrationv1.Warn), string(admissionregistrationv1.Audit))
	paramNotFoundActions = []string{string(admissionregistrationv1.DenyAction), string(admissionregistrationv1.AllowAction)}
	newlines             = regexp.MustCompile(`[\n\r]+`)
)

const (
	maxAuditAnnotations         = 20
	maxAuditAnnotationValueSize = 5 * 1024 // below the 10 KiB an annotation's value may have
)

// policyOptions are what an update relaxes: match conditions kept with the
// same paramKind are not compiled again, and expressions kept compile as
// stored ones.
type policyOptions struct {
	skipMatchConditions bool
	stored              storedExpressions
}

// ValidatingAdmissionPolicy: a failurePolicy, a valid paramKind,
// matchConstraints with at least one resource rule, match conditions,
// variables, validations and audit annotations whose expressions compile
// (at least one validation or annotation), as upstream's
// ValidateValidatingAdmissionPolicy(Update).
func ValidatingAdmissionPolicy(obj, old *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	var opts policyOptions
	if old != nil {
		opts.skipMatchConditions = equality.Semantic.DeepEqual(obj.Spec.ParamKind, old.Spec.ParamKind) &&
			equality.Semantic.DeepEqual(obj.Spec.MatchConditions, old.Spec.MatchConditions)
		opts.stored = newStoredExpressions()
		for _, c := range old.Spec.MatchConditions {
			opts.stored.matchConditions.Insert(c.Expression)
		}
		for _, v := range old.Spec.Validations {
			opts.stored.validations.Insert(v.Expression)
			if v.MessageExpression != "" {
				opts.stored.messageExpressions.Insert(v.MessageExpression)
			}
		}
		for _, a := range old.Spec.AuditAnnotations {
			opts.stored.auditAnnotations.Insert(a.ValueExpression)
		}
	}
	spec, path := &obj.Spec, field.NewPath("spec")
	var compiler plugincel.Compiler // a composited one is stateful: one per policy, made when needed
	getCompiler := func() plugincel.Compiler {
		if compiler == nil {
			compiler = newCompiler(len(spec.Variables) > 0)
		}
		return compiler
	}
	params := spec.ParamKind != nil
	errs := policyCommonErrors(spec.FailurePolicy, spec.ParamKind, spec.MatchConstraints, path)
	if !opts.skipMatchConditions {
		errs = append(errs, matchConditionErrors(spec.MatchConditions, params, opts.stored, path.Child("matchConditions"))...)
	}
	for i := range spec.Variables {
		errs = append(errs, variableErrors(getCompiler(), &spec.Variables[i], params, opts.stored, path.Child("variables").Index(i))...)
	}
	if len(spec.Validations) == 0 && len(spec.AuditAnnotations) == 0 {
		errs = append(errs, field.Required(path.Child("validations"), "validations or auditAnnotations must contain at least one item"),
			field.Required(path.Child("auditAnnotations"), "validations or auditAnnotations must contain at least one item"))
	} else {
		for i := range spec.Validations {
			errs = append(errs, validationErrors(getCompiler(), &spec.Validations[i], params, opts.stored, path.Child("validations").Index(i))...)
		}
		errs = append(errs, auditAnnotationErrors(getCompiler(), obj.Name, spec.AuditAnnotations, params, opts.stored, path.Child("auditAnnotations"))...)
	}
	if old == nil {
		errs = append(errs, staticSuffixErrors(obj.Name)...)
	}
	return errs
}

// policyCommonErrors are the checks a validating and a mutating policy
// begin with: failurePolicy, paramKind and matchConstraints.
func policyCommonErrors(failure *admissionregistrationv1.FailurePolicyType, paramKind *admissionregistrationv1.ParamKind,
	match *admissionregistrationv1.MatchResources, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if failure == nil {
		errs = append(errs, field.Required(path.Child("failurePolicy"), ""))
	} else if !failurePolicies.Has(string(*failure)) {
		errs = append(errs, field.NotSupported(path.Child("failurePolicy"), *failure, sets.List(failurePolicies)))
	}
	if paramKind != nil {
		errs = append(errs, paramKindErrors(paramKind, path.Child("paramKind"))...)
	}
	if match == nil {
		errs = append(errs, field.Required(path.Child("matchConstraints"), ""))
	} else {
		errs = append(errs, matchResourcesErrors(match, path.Child("matchConstraints"))...)
		if len(match.ResourceRules) == 0 { // the rules give the expressions their types
			errs = append(errs, field.Required(path.Child("matchConstraints", "resourceRules"), ""))
		}
	}
	return errs
}

// variableErrors: a name that is a CEL identifier, and an expression that
// compiles.
func variableErrors(c plugincel.Compiler, v *admissionregistrationv1.Variable, params bool, stored storedExpressions, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if strings.TrimSpace(v.Name) == "" {
		errs = append(errs, field.Required(path.Child("name"), "name is not specified"))
	} else if !isCELIdentifier(v.Name) {
		errs = append(errs, field.Invalid(path.Child("name"), v.Name, "must be a valid CEL identifier"))
	}
	if strings.TrimSpace(v.Expression) == "" {
		errs = append(errs, field.Required(path.Child("expression"), "expression is not specified"))
	} else {
		// Upstream looks a variable up among the stored validations' expressions.
		errs = append(errs, compileVariable(c, v.Name, v.Expression, params, stored.validations.Has(v.Expression), path)...)
	}
	return errs
}

// validationErrors: an expression that compiles to a bool, a
// messageExpression that compiles to a string, a message on one line, a
// supported reason.
func validationErrors(c plugincel.Compiler, v *admissionregistrationv1.Validation, params bool, stored storedExpressions, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if strings.TrimSpace(v.Expression) == "" {
		errs = append(errs, field.Required(path.Child("expression"), "expression is not specified"))
	} else {
		errs = append(errs, compileValidation(c, v.Expression, params, stored.validations.Has(v.Expression), path.Child("expression"))...)
	}
	if msgExpr := strings.TrimSpace(v.MessageExpression); v.MessageExpression != "" && msgExpr == "" {
		errs = append(errs, field.Invalid(path.Child("messageExpression"), v.MessageExpression, "must be non-empty if specified"))
	} else if msgExpr != "" {
		// As sent, not trimmed, so that the compiler's columns are right.
		errs = append(errs, compileMessage(c, v.MessageExpression, params, stored.messageExpressions.Has(v.MessageExpression), path.Child("messageExpression"))...)
	}
	if msg := strings.TrimSpace(v.Message); v.Message != "" && msg == "" {
		errs = append(errs, field.Invalid(path.Child("message"), v.Message, "must be non-empty if specified"))
	} else if newlines.MatchString(msg) {
		errs = append(errs, field.Invalid(path.Child("message"), v.Message, "must not contain line breaks"))
	}
	if v.Reason != nil && !validationReasons.Has(string(*v.Reason)) {
		errs = append(errs, field.NotSupported(path.Child("reason"), *v.Reason, sets.List(validationReasons)))
	}
	return errs
}

// auditAnnotationValue is an audit annotation as upstream's internal type
// has it, without JSON names: the "too many" error shows the list so.
type auditAnnotationValue struct{ Key, ValueExpression string }

// auditAnnotationErrors: at most 20 annotations, each with a key that
// makes a qualified name after the policy's name and is used once, and a
// value expression that compiles to a string (or null) within 5 KiB.
func auditAnnotationErrors(c plugincel.Compiler, policy string, annotations []admissionregistrationv1.AuditAnnotation, params bool, stored storedExpressions, path *field.Path) field.ErrorList {
	if annotations == nil {
		return nil
	}
	var errs field.ErrorList
	if len(annotations) > maxAuditAnnotations {
		shown := make([]auditAnnotationValue, len(annotations))
		for i, a := range annotations {
			shown[i] = auditAnnotationValue{a.Key, a.ValueExpression}
		}
		errs = append(errs, field.Invalid(path, shown, fmt.Sprintf("must not have more than %d auditAnnotations", maxAuditAnnotations)))
	}
	keys := sets.New[string]()
	for i := range annotations {
		a, p := &annotations[i], path.Index(i)
		if policy != "" {
			errs = append(errs, qualifiedName(policy+"/"+a.Key, p.Child("key"))...)
		} else {
			errs = append(errs, field.Invalid(p.Child("key"), a.Key, "requires metadata.name be non-empty"))
		}
		switch expr := strings.TrimSpace(a.ValueExpression); {
		case expr == "":
			errs = append(errs, field.Required(p.Child("valueExpression"), "valueExpression is not specified"))
		case len(expr) > maxAuditAnnotationValueSize:
			errs = append(errs, field.Required(p.Child("valueExpression"), fmt.Sprintf("must not exceed %d bytes in length", maxAuditAnnotationValueSize)))
		default:
			errs = append(errs, compileAuditAnnotation(c, expr, a.ValueExpression, params, stored.auditAnnotations.Has(a.ValueExpression), p.Child("valueExpression"))...)
		}
		if keys.Has(a.Key) {
			errs = append(errs, field.Duplicate(p.Child("key"), a.Key))
		}
		keys.Insert(a.Key)
	}
	return errs
}

// paramKindErrors: an apiVersion that parses as group/version, its group
// a DNS subdomain and its version a DNS-1035 label, and a kind that is
// one in lower case.
func paramKindErrors(pk *admissionregistrationv1.ParamKind, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if pk.APIVersion == "" {
		errs = append(errs, field.Required(path.Child("apiVersion"), ""))
	} else if group, version, err := parseGroupVersion(pk.APIVersion); err != nil {
		errs = append(errs, field.Invalid(path.Child("apiVersion"), pk.APIVersion, err.Error()))
	} else {
		if group != "" {
			if msgs := utilvalidation.IsDNS1123Subdomain(group); len(msgs) > 0 {
				errs = append(errs, field.Invalid(path.Child("apiVersion"), group, strings.Join(msgs, ",")))
			}
		}
		if version == "" {
			errs = append(errs, field.Invalid(path.Child("apiVersion"), pk.APIVersion, "version must be specified"))
		} else if msgs := utilvalidation.IsDNS1035Label(version); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Child("apiVersion"), version, strings.Join(msgs, ",")))
		}
	}
	if pk.Kind == "" {
		errs = append(errs, field.Required(path.Child("kind"), ""))
	} else if msgs := utilvalidation.IsDNS1035Label(strings.ToLower(pk.Kind)); len(msgs) > 0 {
		errs = append(errs, field.Invalid(path.Child("kind"), pk.Kind, "may have mixed case, but should otherwise match: "+strings.Join(msgs, ",")))
	}
	return errs
}

// parseGroupVersion splits "group/version" (or "version") as upstream's
// own parser does: "/" is empty, and more than one slash an error.
func parseGroupVersion(gv string) (group, version string, err error) {
	if gv == "" || gv == "/" {
		return "", "", nil
	}
	switch strings.Count(gv, "/") {
	case 0:
		return "", gv, nil
	case 1:
		group, version, _ = strings.Cut(gv, "/")
		return group, version, nil
	}
	return "", "", fmt.Errorf("unexpected GroupVersion string: %v", gv)
}

// matchResourcesErrors: a matchPolicy, both selectors (strictly
// validated, as this type came after upstream relaxed the webhooks'),
// and valid resource rules and excluded ones.
func matchResourcesErrors(m *admissionregistrationv1.MatchResources, path *field.Path) field.ErrorList {
	if m == nil {
		return nil
	}
	var errs field.ErrorList
	if m.MatchPolicy == nil {
		errs = append(errs, field.Required(path.Child("matchPolicy"), ""))
	} else if !matchPolicies.Has(string(*m.MatchPolicy)) {
		errs = append(errs, field.NotSupported(path.Child("matchPolicy"), *m.MatchPolicy, sets.List(matchPolicies)))
	}
	strict := metav1validation.LabelSelectorValidationOptions{}
	if m.NamespaceSelector == nil {
		errs = append(errs, field.Required(path.Child("namespaceSelector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(m.NamespaceSelector, strict, path.Child("namespaceSelector"))...)
	}
	if m.ObjectSelector == nil {
		errs = append(errs, field.Required(path.Child("objectSelector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(m.ObjectSelector, strict, path.Child("objectSelector"))...)
	}
	for i := range m.ResourceRules {
		errs = append(errs, namedRuleErrors(&m.ResourceRules[i], path.Child("resourceRules").Index(i))...)
	}
	for i := range m.ExcludeResourceRules {
		errs = append(errs, namedRuleErrors(&m.ExcludeResourceRules[i], path.Child("excludeResourceRules").Index(i))...)
	}
	return errs
}

// namedRuleErrors: resource names that are path segments, each once, and
// the rule with its operations.
func namedRuleErrors(r *admissionregistrationv1.NamedRuleWithOperations, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, name := range r.ResourceNames {
		for _, msg := range content.IsPathSegmentName(name) {
			errs = append(errs, field.Invalid(path.Child("resourceNames").Index(i), name, msg))
		}
		if names.Has(name) {
			errs = append(errs, field.Duplicate(path.Child("resourceNames").Index(i), name))
		} else {
			names.Insert(name)
		}
	}
	return append(errs, ruleWithOperationsErrors(&r.RuleWithOperations, path)...)
}

// ValidatingAdmissionPolicyStatus is the rule of writes to a policy's
// status: type-checking warnings with a message and a JSONPath fieldRef,
// and valid conditions.
func ValidatingAdmissionPolicyStatus(obj, _ *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("status")
	if tc := obj.Status.TypeChecking; tc != nil {
		for i, w := range tc.ExpressionWarnings {
			p := path.Child("typeChecking", "expressionWarnings").Index(i)
			if w.Warning == "" {
				errs = append(errs, field.Required(p.Child("warning"), ""))
			}
			errs = append(errs, fieldRefErrors(w.FieldRef, p.Child("fieldRef"))...)
		}
	}
	return append(errs, metav1validation.ValidateConditions(obj.Status.Conditions, path.Child("conditions"))...)
}

// fieldRefErrors: a fieldRef is given and parses as a JSONPath.
func fieldRefErrors(ref string, path *field.Path) field.ErrorList {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	if err := jsonpath.New("spec").Parse(fmt.Sprintf("{%s}", ref)); err != nil {
		return field.ErrorList{field.Invalid(path, ref, fmt.Sprintf("invalid JSONPath: %v", err))}
	}
	return nil
}

// ValidatingAdmissionPolicyBinding: a policyName that is a DNS subdomain,
// a valid paramRef and matchResources, and supported validationActions.
// Upstream checks that policyName and validationActions are given
// declaratively, and reports those last.
func ValidatingAdmissionPolicyBinding(obj, old *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	spec, path := &obj.Spec, field.NewPath("spec")
	var errs, required field.ErrorList
	if spec.PolicyName == "" {
		required = append(required, field.Required(path.Child("policyName"), ""))
	} else {
		errs = append(errs, policyNameErrors(spec.PolicyName, path.Child("policyName"))...)
	}
	errs = append(errs, paramRefErrors(spec.ParamRef, path.Child("paramRef"))...)
	errs = append(errs, matchResourcesErrors(spec.MatchResources, path.Child("matchResources"))...)
	actions, p := sets.New[string](), path.Child("validationActions")
	for i, a := range spec.ValidationActions {
		if !validationActions.Has(string(a)) {
			errs = append(errs, field.NotSupported(p.Index(i), a, sets.List(validationActions)))
		}
		if actions.Has(string(a)) {
			errs = append(errs, field.Duplicate(p.Index(i), a))
		}
		actions.Insert(string(a))
	}
	if actions.Has(string(admissionregistrationv1.Deny)) && actions.Has(string(admissionregistrationv1.Warn)) {
		errs = append(errs, field.Invalid(p, spec.ValidationActions, "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	if len(spec.ValidationActions) == 0 {
		required = append(required, field.Required(p, ""))
	}
	if old == nil {
		errs = append(errs, staticSuffixErrors(obj.Name)...)
	}
	return append(errs, required...)
}

// policyNameErrors: a binding's policyName is a DNS subdomain.
func policyNameErrors(name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range apivalidation.NameIsDNSSubdomain(name, false) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

// paramRefErrors: a name (a path segment) or a selector, not both, and a
// parameterNotFoundAction.
func paramRefErrors(pr *admissionregistrationv1.ParamRef, path *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	var errs field.ErrorList
	if pr.Name != "" {
		for _, msg := range content.IsPathSegmentName(pr.Name) {
			errs = append(errs, field.Invalid(path.Child("name"), pr.Name, msg))
		}
		if pr.Selector != nil {
			errs = append(errs, field.Forbidden(path.Child("name"), `name and selector are mutually exclusive`))
		}
	}
	if pr.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(pr.Selector, metav1validation.LabelSelectorValidationOptions{}, path.Child("selector"))...)
		if pr.Name != "" {
			errs = append(errs, field.Forbidden(path.Child("selector"), `name and selector are mutually exclusive`))
		}
	}
	if pr.Name == "" && pr.Selector == nil {
		errs = append(errs, field.Required(path, `one of name or selector must be specified`))
	}
	switch a := pr.ParameterNotFoundAction; {
	case a == nil || *a == "":
		errs = append(errs, field.Required(path.Child("parameterNotFoundAction"), ""))
	case *a != admissionregistrationv1.DenyAction && *a != admissionregistrationv1.AllowAction:
		errs = append(errs, field.NotSupported(path.Child("parameterNotFoundAction"), a, paramNotFoundActions))
	}
	return errs
}

// MutatingAdmissionPolicy: as a validating policy's failurePolicy,
// paramKind, matchConstraints (whose operations a mutation can act on:
// not DELETE), match conditions and variables; then at least one mutation
// of a supported patchType with its expression, and a reinvocationPolicy.
func MutatingAdmissionPolicy(obj, old *admissionregistrationv1.MutatingAdmissionPolicy) field.ErrorList {
	var opts policyOptions
	if old != nil {
		opts.skipMatchConditions = equality.Semantic.DeepEqual(obj.Spec.ParamKind, old.Spec.ParamKind) &&
			equality.Semantic.DeepEqual(obj.Spec.MatchConditions, old.Spec.MatchConditions)
		opts.stored = newStoredExpressions()
		for _, c := range old.Spec.MatchConditions {
			opts.stored.matchConditions.Insert(c.Expression)
		}
		for _, m := range old.Spec.Mutations {
			if m.ApplyConfiguration != nil {
				opts.stored.applyConfigurations.Insert(m.ApplyConfiguration.Expression)
			}
			// Upstream keeps JSON patches apart, and then looks them up
			// among the apply configurations: a stored JSON patch
			// compiles as a new one.
		}
	}
	spec, path := &obj.Spec, field.NewPath("spec")
	compiler := newCompiler(true)
	params := spec.ParamKind != nil
	errs := policyCommonErrors(spec.FailurePolicy, spec.ParamKind, spec.MatchConstraints, path)
	if spec.MatchConstraints != nil {
		errs = append(errs, mutatingOperationErrors(spec.MatchConstraints, path.Child("matchConstraints", "resourceRules", "operations"))...)
	}
	if !opts.skipMatchConditions {
		errs = append(errs, matchConditionErrors(spec.MatchConditions, params, opts.stored, path.Child("matchConditions"))...)
	}
	for i := range spec.Variables {
		errs = append(errs, variableErrors(compiler, &spec.Variables[i], params, opts.stored, path.Child("variables").Index(i))...)
	}
	if len(spec.Mutations) == 0 {
		errs = append(errs, field.Required(path.Child("mutations"), "mutations must contain at least one item"))
	}
	for i := range spec.Mutations {
		errs = append(errs, mutationErrors(compiler, &spec.Mutations[i], params, opts.stored, path.Child("mutations").Index(i))...)
	}
	if spec.ReinvocationPolicy == "" {
		errs = append(errs, field.Required(path.Child("reinvocationPolicy"), ""))
	} else if !reinvocationPolicies.Has(string(spec.ReinvocationPolicy)) {
		errs = append(errs, field.NotSupported(path.Child("reinvocationPolicy"), spec.ReinvocationPolicy, sets.List(reinvocationPolicies)))
	}
	if old == nil {
		errs = append(errs, staticSuffixErrors(obj.Name)...)
	}
	return errs
}

// mutatingOperationErrors refuses, at path (upstream names no index), each
// operation of m's resource rules a mutation cannot act on.
func mutatingOperationErrors(m *admissionregistrationv1.MatchResources, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, r := range m.ResourceRules {
		for _, op := range r.Operations {
			if !mutatingOperations.Has(string(op)) {
				errs = append(errs, field.NotSupported(path, op, sets.List(mutatingOperations)))
			}
		}
	}
	return errs
}

// mutationErrors: a patchType, and the expression of that type only.
func mutationErrors(c plugincel.Compiler, m *admissionregistrationv1.Mutation, params bool, stored storedExpressions, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	expression := func(raw string, accessor func(string) plugincel.ExpressionAccessor, p *field.Path) field.ErrorList {
		expr := strings.TrimSpace(raw)
		if expr == "" {
			return field.ErrorList{field.Required(p.Child("expression"), "")}
		}
		return compileMutation(c, accessor(expr), params, stored.applyConfigurations.Has(raw), p.Child("expression"))
	}
	switch m.PatchType {
	case "":
		errs = append(errs, field.Required(path.Child("patchType"), ""))
	case admissionregistrationv1.PatchTypeJSONPatch:
		if m.JSONPatch == nil {
			errs = append(errs, field.Required(path.Child("jsonPatch"), "must be specified when patchType is JSONPatch"))
		} else {
			errs = append(errs, expression(m.JSONPatch.Expression, jsonPatch, path.Child("jsonPatch"))...)
		}
		if m.ApplyConfiguration != nil {
			errs = append(errs, field.Invalid(path.Child("applyConfiguration"), "{applyConfiguration}", "must not be specified when patchType is JSONPatch"))
		}
	case admissionregistrationv1.PatchTypeApplyConfiguration:
		if m.ApplyConfiguration == nil {
			errs = append(errs, field.Required(path.Child("applyConfiguration"), "must be specified when patchType is ApplyConfiguration"))
		} else {
			errs = append(errs, expression(m.ApplyConfiguration.Expression, applyConfiguration, path.Child("applyConfiguration"))...)
		}
		if m.JSONPatch != nil {
			errs = append(errs, field.Invalid(path.Child("jsonPatch"), "{jsonPatch}", "must not be specified when patchType is ApplyConfiguration"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("patchType"), m.PatchType, sets.List(patchTypes)))
	}
	return errs
}

// MutatingAdmissionPolicyBinding: a policyName, a valid paramRef, and
// matchResources whose operations a mutation can act on.
func MutatingAdmissionPolicyBinding(obj, old *admissionregistrationv1.MutatingAdmissionPolicyBinding) field.ErrorList {
	spec, path := &obj.Spec, field.NewPath("spec")
	var errs field.ErrorList
	if spec.PolicyName == "" {
		errs = append(errs, field.Required(path.Child("policyName"), ""))
	} else {
		errs = append(errs, policyNameErrors(spec.PolicyName, path.Child("policyName"))...)
	}
	errs = append(errs, paramRefErrors(spec.ParamRef, path.Child("paramRef"))...)
	errs = append(errs, matchResourcesErrors(spec.MatchResources, path.Child("matchResources"))...)
	if spec.MatchResources != nil {
		errs = append(errs, mutatingOperationErrors(spec.MatchResources, path.Child("matchResources", "resourceRules", "operations"))...)
	}
	if old == nil {
		errs = append(errs, staticSuffixErrors(obj.Name)...)
	}
	return errs
}
