package rbacescalation

import (
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// simpleRule is what a rule of one API group, one resource, at most one
// resource name and verbs grants, besides its verbs.
type simpleRule struct {
	group, resource string
	hasName         bool
	name            string
}

// compactRules merges the rules that differ only by their verbs and name
// one API group, one resource and at most one resource name (what Covers
// reports missing is one such rule per verb), as upstream does before it
// lists what a user lacks. Other rules are kept as they are, first.
func compactRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	out := make([]rbacv1.PolicyRule, 0, len(rules))
	merged := map[simpleRule]*rbacv1.PolicyRule{}
	var order []simpleRule
	for _, r := range rules {
		key, ok := simple(&r)
		if !ok {
			out = append(out, r)
			continue
		}
		if m, seen := merged[key]; seen {
			m.Verbs = append(m.Verbs, r.Verbs...)
			continue
		}
		merged[key] = r.DeepCopy()
		order = append(order, key)
	}
	for _, key := range order {
		out = append(out, *merged[key])
	}
	return out
}

// simple is r's simpleRule, when it is one.
func simple(r *rbacv1.PolicyRule) (simpleRule, bool) {
	if len(r.APIGroups) != 1 || len(r.Resources) != 1 || len(r.ResourceNames) > 1 || len(r.NonResourceURLs) > 0 {
		return simpleRule{}, false
	}
	s := simpleRule{group: r.APIGroups[0], resource: r.Resources[0]}
	if len(r.ResourceNames) == 1 {
		s.hasName, s.name = true, r.ResourceNames[0]
	}
	return s, true
}

// compactString is r as upstream's escalation message shows it: its
// non-empty fields, each a Go-quoted list, in braces:
// {APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}.
func compactString(r rbacv1.PolicyRule) string {
	var parts []string
	for _, f := range []struct {
		name   string
		values []string
	}{
		{"APIGroups", r.APIGroups}, {"Resources", r.Resources}, {"NonResourceURLs", r.NonResourceURLs},
		{"ResourceNames", r.ResourceNames}, {"Verbs", r.Verbs},
	} {
		if len(f.values) > 0 {
			parts = append(parts, fmt.Sprintf("%s:%q", f.name, f.values))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
