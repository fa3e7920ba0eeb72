package main

import (
	"regexp"
	"strings"

	"golang.org/x/mod/module"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The rules loom enforces on its input, each error naming the rule.

func checkModulePath(p string) error {
	if p == "" {
		return usageErrorf("--module is required: the new module's path, e.g. example.com/shop")
	}
	if err := module.CheckPath(p); err != nil {
		return usageErrorf("invalid --module %q: a module path must be a valid Go module path (%v)", p, err)
	}
	return nil
}

// groupLabel is the first label of a group, which names its directory
// under apis/ and its clientset accessor (ShopV1 for shop.example.com).
var groupLabel = regexp.MustCompile(`^[a-z][a-z0-9]*$`)

func checkGroup(g string) error {
	const rule = "a group must be a DNS subdomain (lowercase letters, digits, '-' and '.') with at least one dot, e.g. shop.example.com"
	if g == "" {
		return usageErrorf("--group is required: %s", rule)
	}
	if errs := validation.IsDNS1123Subdomain(g); len(errs) > 0 || !strings.Contains(g, ".") {
		return usageErrorf("invalid --group %q: %s", g, rule)
	}
	if first, _, _ := strings.Cut(g, "."); !groupLabel.MatchString(first) {
		return usageErrorf("invalid --group %q: its first label names the directory apis/%s and the client's accessor, so it must be a lowercase letter followed by lowercase letters and digits", g, first)
	}
	return nil
}

// kubeVersion is Kubernetes' form of an API version: v1, v2beta1, v1alpha3.
var kubeVersion = regexp.MustCompile(`^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$`)

func checkVersion(v string) error {
	const rule = "a version must have Kubernetes' form v<N>, v<N>alpha<M> or v<N>beta<M> without leading zeros, e.g. v1, v1beta2"
	if v == "" {
		return usageErrorf("--version is required: %s", rule)
	}
	if !kubeVersion.MatchString(v) {
		return usageErrorf("invalid --version %q: %s", v, rule)
	}
	return nil
}

// upperCamel is a kind's form: UpperCamelCase ASCII, as Go exports it and
// Kubernetes names kinds.
var upperCamel = regexp.MustCompile(`^[A-Z][a-zA-Z0-9]*$`)

func checkKind(k string) error {
	const rule = "a kind must be UpperCamelCase: an uppercase ASCII letter, then letters and digits, e.g. Order, BackupPolicy"
	if k == "" {
		return usageErrorf("--kind is required: %s", rule)
	}
	if !upperCamel.MatchString(k) {
		return usageErrorf("invalid --kind %q: %s", k, rule)
	}
	if strings.HasSuffix(k, "List") {
		return usageErrorf("invalid --kind %q: a kind may not end in List, the suffix of every kind's list type (%s's would be %sList)", k, k, k)
	}
	return nil
}
