package apiserver

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apiloom/apiloom/server/registry"
	"github.com/apiloom/apiloom/server/resource"
)

// selectBuiltins returns reg without the built-in kinds (resource.Info.
// BuiltIn) that names, the --builtin-apis flag, does not choose: each name
// is a resource ("configmaps") or resource.group
// ("leases.coordination.k8s.io"), and "*" chooses all of them. A name that
// chooses no built-in kind is an error, so a typo does not silently serve
// nothing. Kinds that are not built-in are always kept.
func selectBuiltins(reg *registry.Registry, names []string) (*registry.Registry, error) {
	if slices.Contains(names, "*") {
		return reg, nil
	}
	matches := func(name string, info *resource.Info) bool {
		res, group, qualified := strings.Cut(name, ".")
		return res == info.Plural && (!qualified || group == info.Group)
	}
	for _, name := range names {
		if !slices.ContainsFunc(reg.Infos(), func(i *resource.Info) bool { return i.BuiltIn && matches(name, i) }) {
			return nil, fmt.Errorf("--builtin-apis: %q is not a built-in resource", name)
		}
	}
	return reg.Select(func(info *resource.Info) bool {
		return !info.BuiltIn || slices.ContainsFunc(names, func(n string) bool { return matches(n, info) })
	}), nil
}
