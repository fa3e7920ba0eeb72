package validation

import (
	"fmt"
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/apiserver/pkg/util/shufflesharding"
)

// The rules of kube-apiserver's flowcontrol validation
// (k8s.io/kubernetes pkg/apis/flowcontrol/validation), on the v1 types:
// the APF controller trusts what it reads, so what it could not act on is
// refused at the door, and the mandatory objects' specs are fixed, since
// the server's own requests depend on them.

var (
	flowcontrolVerbs     = []string{"create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"}
	distinguisherMethods = []string{string(flowcontrolv1.FlowDistinguisherMethodByNamespaceType), string(flowcontrolv1.FlowDistinguisherMethodByUserType)}
	subjectKinds         = []string{string(flowcontrolv1.SubjectKindGroup), string(flowcontrolv1.SubjectKindServiceAccount), string(flowcontrolv1.SubjectKindUser)}
	enablements          = []string{string(flowcontrolv1.PriorityLevelEnablementExempt), string(flowcontrolv1.PriorityLevelEnablementLimited)}
	limitResponseTypes   = []string{string(flowcontrolv1.LimitResponseTypeQueue), string(flowcontrolv1.LimitResponseTypeReject)}
)

// maxQueues is upstream's bound on a priority level's queues (10^7).
const maxQueues = 10 * 1000 * 1000

// FlowSchema is ValidateFlowSchema (create and update alike): a
// precedence in 1..10000 (1 only for "exempt"), a known distinguisher, a
// referenced priority level, well-formed rules and subjects, the fixed
// spec of a mandatory schema, and distinct condition types.
func FlowSchema(obj, _ *flowcontrolv1.FlowSchema) field.ErrorList {
	spec, path := &obj.Spec, field.NewPath("spec")
	var errs field.ErrorList
	if spec.MatchingPrecedence <= 0 {
		errs = append(errs, field.Invalid(path.Child("matchingPrecedence"), spec.MatchingPrecedence, "must be a positive value"))
	}
	if spec.MatchingPrecedence > flowcontrolv1.FlowSchemaMaxMatchingPrecedence {
		errs = append(errs, field.Invalid(path.Child("matchingPrecedence"), spec.MatchingPrecedence,
			fmt.Sprintf("must not be greater than %v", flowcontrolv1.FlowSchemaMaxMatchingPrecedence)))
	}
	if spec.MatchingPrecedence == 1 && obj.Name != flowcontrolv1.FlowSchemaNameExempt {
		errs = append(errs, field.Invalid(path.Child("matchingPrecedence"), spec.MatchingPrecedence, "only the schema named 'exempt' may have matchingPrecedence 1"))
	}
	if dm := spec.DistinguisherMethod; dm != nil && !slices.Contains(distinguisherMethods, string(dm.Type)) {
		errs = append(errs, field.NotSupported(path.Child("distinguisherMethod", "type"), dm, distinguisherMethods))
	}
	plPath := path.Child("priorityLevelConfiguration", "name")
	if pl := spec.PriorityLevelConfiguration.Name; pl == "" {
		errs = append(errs, field.Required(plPath, "must reference a priority level"))
	} else {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(pl, false) {
			errs = append(errs, field.Invalid(plPath, pl, msg))
		}
	}
	for i := range spec.Rules {
		errs = append(errs, policyRulesWithSubjects(&spec.Rules[i], path.Child("rules").Index(i))...)
	}
	for _, m := range bootstrap.MandatoryFlowSchemas {
		if m.Name == obj.Name && !equality.Semantic.DeepEqual(obj.Spec, m.Spec) {
			errs = append(errs, field.Invalid(path, obj.Spec, fmt.Sprintf("spec of '%s' must equal the fixed value", obj.Name)))
		}
	}
	return append(errs, FlowSchemaStatus(obj, nil)...)
}

// FlowSchemaStatus is ValidateFlowSchemaStatusUpdate: every condition has
// a type, and no type twice.
func FlowSchemaStatus(obj, _ *flowcontrolv1.FlowSchema) field.ErrorList {
	types := make([]string, len(obj.Status.Conditions))
	for i, c := range obj.Status.Conditions {
		types[i] = string(c.Type)
	}
	return conditionTypes(types)
}

// conditionTypes is the status rule both kinds share.
func conditionTypes(types []string) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("status", "conditions")
	for i, t := range types {
		if slices.Contains(types[:i], t) {
			errs = append(errs, field.Duplicate(path.Index(i).Child("type"), t))
		}
		if t == "" {
			errs = append(errs, field.Required(path.Index(i).Child("type"), ""))
		}
	}
	return errs
}

func policyRulesWithSubjects(rule *flowcontrolv1.PolicyRulesWithSubjects, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(rule.Subjects) == 0 {
		errs = append(errs, field.Required(path.Child("subjects"), "subjects must contain at least one value"))
	}
	for i := range rule.Subjects {
		errs = append(errs, subject(&rule.Subjects[i], path.Child("subjects").Index(i))...)
	}
	if len(rule.ResourceRules) == 0 && len(rule.NonResourceRules) == 0 {
		errs = append(errs, field.Required(path, "at least one of resourceRules and nonResourceRules has to be non-empty"))
	}
	for i := range rule.ResourceRules {
		errs = append(errs, resourceRule(&rule.ResourceRules[i], path.Child("resourceRules").Index(i))...)
	}
	for i := range rule.NonResourceRules {
		errs = append(errs, nonResourceRule(&rule.NonResourceRules[i], path.Child("nonResourceRules").Index(i))...)
	}
	return errs
}

func subject(s *flowcontrolv1.Subject, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	forbid := func(present bool, name, kind string) {
		if present {
			errs = append(errs, field.Forbidden(path.Child(name), fmt.Sprintf("%s is forbidden when subject kind is not '%s'", name, kind)))
		}
	}
	switch s.Kind {
	case flowcontrolv1.SubjectKindServiceAccount:
		errs = append(errs, serviceAccountSubject(s.ServiceAccount, path.Child("serviceAccount"))...)
		forbid(s.User != nil, "user", "User")
		forbid(s.Group != nil, "group", "Group")
	case flowcontrolv1.SubjectKindUser:
		if s.User == nil {
			errs = append(errs, field.Required(path.Child("user"), "user is required when subject kind is 'User'"))
		} else if s.User.Name == "" {
			errs = append(errs, field.Required(path.Child("user", "name"), ""))
		}
		forbid(s.ServiceAccount != nil, "serviceAccount", "ServiceAccount")
		forbid(s.Group != nil, "group", "Group")
	case flowcontrolv1.SubjectKindGroup:
		if s.Group == nil {
			errs = append(errs, field.Required(path.Child("group"), "group is required when subject kind is 'Group'"))
		} else if s.Group.Name == "" {
			errs = append(errs, field.Required(path.Child("group", "name"), ""))
		}
		forbid(s.ServiceAccount != nil, "serviceAccount", "ServiceAccount")
		forbid(s.User != nil, "user", "User")
	default:
		errs = append(errs, field.NotSupported(path.Child("kind"), s.Kind, subjectKinds))
	}
	return errs
}

func serviceAccountSubject(s *flowcontrolv1.ServiceAccountSubject, path *field.Path) field.ErrorList {
	if s == nil {
		return field.ErrorList{field.Required(path, "serviceAccount is required when subject kind is 'ServiceAccount'")}
	}
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	} else if s.Name != flowcontrolv1.NameAll {
		for _, msg := range apimachineryvalidation.ValidateServiceAccountName(s.Name, false) {
			errs = append(errs, field.Invalid(path.Child("name"), s.Name, msg))
		}
	}
	if s.Namespace == "" {
		return append(errs, field.Required(path.Child("namespace"), "must specify namespace for service account"))
	}
	for _, msg := range apimachineryvalidation.ValidateNamespaceName(s.Namespace, false) {
		errs = append(errs, field.Invalid(path.Child("namespace"), s.Namespace, msg))
	}
	return errs
}

// verbs is the rule both kinds of policy rule have for their verbs.
func verbs(vs []string, path *field.Path) field.ErrorList {
	switch {
	case len(vs) == 0:
		return field.ErrorList{field.Required(path, "verbs must contain at least one value")}
	case slices.Contains(vs, flowcontrolv1.VerbAll):
		if len(vs) > 1 {
			return field.ErrorList{field.Invalid(path, vs, "if '*' is present, must not specify other verbs")}
		}
	default:
		for _, v := range vs {
			if !slices.Contains(flowcontrolVerbs, v) {
				return field.ErrorList{field.NotSupported(path, vs, flowcontrolVerbs)}
			}
		}
	}
	return nil
}

const nsErrIntro = "each member of this list must be '*' or a DNS-1123 label; "

func resourceRule(rule *flowcontrolv1.ResourcePolicyRule, path *field.Path) field.ErrorList {
	errs := verbs(rule.Verbs, path.Child("verbs"))
	if len(rule.APIGroups) == 0 {
		errs = append(errs, field.Required(path.Child("apiGroups"), "resource rules must supply at least one api group"))
	} else if len(rule.APIGroups) > 1 && slices.Contains(rule.APIGroups, flowcontrolv1.APIGroupAll) {
		errs = append(errs, field.Invalid(path.Child("apiGroups"), rule.APIGroups, "if '*' is present, must not specify other api groups"))
	}
	if len(rule.Resources) == 0 {
		errs = append(errs, field.Required(path.Child("resources"), "resource rules must supply at least one resource"))
	} else if len(rule.Resources) > 1 && slices.Contains(rule.Resources, flowcontrolv1.ResourceAll) {
		errs = append(errs, field.Invalid(path.Child("resources"), rule.Resources, "if '*' is present, must not specify other resources"))
	}
	switch {
	case len(rule.Namespaces) == 0 && !rule.ClusterScope:
		errs = append(errs, field.Required(path.Child("namespaces"), "resource rules that are not cluster scoped must supply at least one namespace"))
	case slices.Contains(rule.Namespaces, flowcontrolv1.NamespaceEvery):
		if len(rule.Namespaces) > 1 {
			errs = append(errs, field.Invalid(path.Child("namespaces"), rule.Namespaces, "if '*' is present, must not specify other namespaces"))
		}
	default:
		for i, ns := range rule.Namespaces {
			for _, msg := range apimachineryvalidation.ValidateNamespaceName(ns, false) {
				errs = append(errs, field.Invalid(path.Child("namespaces").Index(i), ns, nsErrIntro+msg))
			}
		}
	}
	return errs
}

func nonResourceRule(rule *flowcontrolv1.NonResourcePolicyRule, path *field.Path) field.ErrorList {
	errs := verbs(rule.Verbs, path.Child("verbs"))
	urls := path.Child("nonResourceURLs")
	switch {
	case len(rule.NonResourceURLs) == 0:
		errs = append(errs, field.Required(urls, "nonResourceURLs must contain at least one value"))
	case slices.Contains(rule.NonResourceURLs, flowcontrolv1.NonResourceAll):
		if len(rule.NonResourceURLs) > 1 {
			errs = append(errs, field.Invalid(urls, rule.NonResourceURLs, "if '*' is present, must not specify other non-resource URLs"))
		}
	default:
		for i, u := range rule.NonResourceURLs {
			if msg := nonResourceURLProblem(u); msg != "" {
				errs = append(errs, field.Invalid(urls.Index(i), u, msg))
			}
		}
	}
	return errs
}

// nonResourceURLProblem is ValidateNonResourceURLPath: a path from the
// root, without spaces or double slashes, a wildcard only as its last
// segment.
func nonResourceURLProblem(p string) string {
	switch {
	case p == "":
		return "must not be empty"
	case p == "/":
		return ""
	case !strings.HasPrefix(p, "/"):
		return "must start with slash"
	case strings.Contains(p, " "):
		return "must not contain white-space"
	case strings.Contains(p, "//"):
		return "must not contain double slash"
	}
	if n := strings.Count(p, "*"); n > 1 || (n == 1 && !strings.HasSuffix(p, "/*")) {
		return "wildcard can only do suffix matching"
	}
	return ""
}

// PriorityLevelConfiguration is ValidatePriorityLevelConfiguration: type
// Exempt exactly for the level named "exempt", the matching half of the
// spec set and sound (shares, percentages, queues within shuffle
// sharding's entropy), a mandatory level's spec fixed (but for
// "exempt"'s spec.exempt, which admins may tune), and distinct
// condition types.
func PriorityLevelConfiguration(obj, _ *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	spec, path := &obj.Spec, field.NewPath("spec")
	var errs field.ErrorList
	if (obj.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt) != (spec.Type == flowcontrolv1.PriorityLevelEnablementExempt) {
		errs = append(errs, field.Invalid(path.Child("type"), spec.Type, "must be 'Exempt' if and only if `name` is 'exempt'"))
	}
	switch spec.Type {
	case flowcontrolv1.PriorityLevelEnablementExempt:
		if spec.Limited != nil {
			errs = append(errs, field.Forbidden(path.Child("limited"), "must be nil if the type is not Limited"))
		}
		if e := spec.Exempt; e != nil {
			errs = append(errs, shares(e.NominalConcurrencyShares, e.LendablePercent, path.Child("exempt"))...)
		}
	case flowcontrolv1.PriorityLevelEnablementLimited:
		if spec.Exempt != nil {
			errs = append(errs, field.Forbidden(path.Child("exempt"), "must be nil if the type is Limited"))
		}
		if spec.Limited == nil {
			errs = append(errs, field.Required(path.Child("limited"), "must not be empty when type is Limited"))
		} else {
			errs = append(errs, limited(spec.Limited, path.Child("limited"))...)
		}
	case "":
		errs = append(errs, field.Required(path.Child("type"), ""))
	default:
		errs = append(errs, field.NotSupported(path.Child("type"), spec.Type, enablements))
	}
	for _, m := range bootstrap.MandatoryPriorityLevelConfigurations {
		if m.Name != obj.Name {
			continue
		}
		have := obj.Spec.DeepCopy()
		msg := fmt.Sprintf("spec of '%s' must equal the fixed value", obj.Name)
		if obj.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
			have.Exempt = m.Spec.Exempt
			msg = fmt.Sprintf("spec of '%s' except the 'spec.exempt' field must equal the fixed value", obj.Name)
		}
		if !equality.Semantic.DeepEqual(*have, m.Spec) {
			errs = append(errs, field.Invalid(path, obj.Spec, msg))
		}
	}
	return append(errs, PriorityLevelConfigurationStatus(obj, nil)...)
}

// PriorityLevelConfigurationStatus is
// ValidatePriorityLevelConfigurationStatusUpdate: every condition has a
// type, and no type twice.
func PriorityLevelConfigurationStatus(obj, _ *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	types := make([]string, len(obj.Status.Conditions))
	for i, c := range obj.Status.Conditions {
		types[i] = string(c.Type)
	}
	return conditionTypes(types)
}

func shares(nominal, lendable *int32, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if nominal != nil && *nominal < 0 {
		errs = append(errs, field.Invalid(path.Child("nominalConcurrencyShares"), *nominal, "must be a non-negative integer"))
	}
	if lendable != nil && (*lendable < 0 || *lendable > 100) {
		errs = append(errs, field.Invalid(path.Child("lendablePercent"), *lendable, "must be between 0 and 100, inclusive"))
	}
	return errs
}

func limited(l *flowcontrolv1.LimitedPriorityLevelConfiguration, path *field.Path) field.ErrorList {
	errs := shares(l.NominalConcurrencyShares, l.LendablePercent, path)
	if b := l.BorrowingLimitPercent; b != nil && *b < 0 {
		errs = append(errs, field.Invalid(path.Child("borrowingLimitPercent"), *b, "if specified, must be a non-negative integer"))
	}
	lr, lrPath := l.LimitResponse, path.Child("limitResponse")
	switch lr.Type {
	case flowcontrolv1.LimitResponseTypeReject:
		if lr.Queuing != nil {
			errs = append(errs, field.Forbidden(lrPath.Child("queuing"), "must be nil if limited.limitResponse.type is not Limited"))
		}
	case flowcontrolv1.LimitResponseTypeQueue:
		if lr.Queuing == nil {
			errs = append(errs, field.Required(lrPath.Child("queuing"), "must not be empty if limited.limitResponse.type is Limited"))
		} else {
			errs = append(errs, queuing(lr.Queuing, lrPath.Child("queuing"))...)
		}
	case "":
		errs = append(errs, field.Required(lrPath.Child("type"), ""))
	default:
		errs = append(errs, field.NotSupported(lrPath.Child("type"), lr.Type, limitResponseTypes))
	}
	return errs
}

func queuing(q *flowcontrolv1.QueuingConfiguration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.QueueLengthLimit <= 0 {
		errs = append(errs, field.Invalid(path.Child("queueLengthLimit"), q.QueueLengthLimit, "must be positive"))
	}
	if q.Queues <= 0 {
		errs = append(errs, field.Invalid(path.Child("queues"), q.Queues, "must be positive"))
	} else if q.Queues > maxQueues {
		errs = append(errs, field.Invalid(path.Child("queues"), q.Queues, fmt.Sprintf("must not be greater than %d", maxQueues)))
	}
	switch {
	case q.HandSize <= 0:
		errs = append(errs, field.Invalid(path.Child("handSize"), q.HandSize, "must be positive"))
	case q.HandSize > q.Queues:
		errs = append(errs, field.Invalid(path.Child("handSize"), q.HandSize, fmt.Sprintf("should not be greater than queues (%d)", q.Queues)))
	case shufflesharding.RequiredEntropyBits(int(q.Queues), int(q.HandSize)) > shufflesharding.MaxHashBits:
		errs = append(errs, field.Invalid(path.Child("handSize"), q.HandSize,
			fmt.Sprintf("required entropy bits of deckSize %d and handSize %d should not be greater than %d", q.Queues, q.HandSize, shufflesharding.MaxHashBits)))
	}
	return errs
}
