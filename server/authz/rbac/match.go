package rbac

import (
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// ruleAllows reports whether rule allows the request a. A resource
// request is matched on verb, API group, resource (with its subresource)
// and name; a non-resource request on verb and path.
func ruleAllows(a authorizer.Attributes, rule *rbacv1.PolicyRule) bool {
	if !verbMatches(rule, a.GetVerb()) {
		return false
	}
	if !a.IsResourceRequest() {
		return nonResourceURLMatches(rule, a.GetPath())
	}
	return apiGroupMatches(rule, a.GetAPIGroup()) &&
		resourceMatches(rule, a.GetResource(), a.GetSubresource()) &&
		resourceNameMatches(rule, a.GetName())
}

func verbMatches(rule *rbacv1.PolicyRule, verb string) bool {
	for _, v := range rule.Verbs {
		if v == rbacv1.VerbAll || v == verb {
			return true
		}
	}
	return false
}

func apiGroupMatches(rule *rbacv1.PolicyRule, group string) bool {
	for _, g := range rule.APIGroups {
		if g == rbacv1.APIGroupAll || g == group {
			return true
		}
	}
	return false
}

// resourceMatches matches "*", the resource itself when the request has
// no subresource, "resource/subresource" when it has one, and
// "*/subresource" (any resource's subresource). A rule's "resource" does
// not cover its subresources.
func resourceMatches(rule *rbacv1.PolicyRule, resource, subresource string) bool {
	for _, r := range rule.Resources {
		if r == rbacv1.ResourceAll {
			return true
		}
		if subresource == "" {
			if r == resource {
				return true
			}
			continue
		}
		// r is "resource/subresource" or "*/subresource", compared
		// without building the combined string.
		if len(r) == len(resource)+1+len(subresource) && strings.HasPrefix(r, resource) &&
			r[len(resource)] == '/' && strings.HasSuffix(r, subresource) {
			return true
		}
		if len(r) == len(subresource)+2 && strings.HasPrefix(r, "*/") && strings.HasSuffix(r, subresource) {
			return true
		}
	}
	return false
}

// resourceNameMatches: a rule without resourceNames covers every name
// (and requests without one, such as list and create); one with names
// covers only requests for one of them.
func resourceNameMatches(rule *rbacv1.PolicyRule, name string) bool {
	if len(rule.ResourceNames) == 0 {
		return true
	}
	for _, n := range rule.ResourceNames {
		if n == name {
			return true
		}
	}
	return false
}

// nonResourceURLMatches matches "*", the path itself, or a prefix of it
// written with a trailing "*" ("/apis/*"; every trailing "*" is dropped).
func nonResourceURLMatches(rule *rbacv1.PolicyRule, path string) bool {
	for _, u := range rule.NonResourceURLs {
		if u == rbacv1.NonResourceAll || u == path {
			return true
		}
		if strings.HasSuffix(u, "*") && strings.HasPrefix(path, strings.TrimRight(u, "*")) {
			return true
		}
	}
	return false
}
