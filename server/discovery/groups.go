package discovery

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/apiloom/apiloom/server/resource"
)

// apiGroup is one API group and its versions, most preferred first.
type apiGroup struct {
	name     string
	versions []*groupVersion
}

// groupVersion is one served group-version and its resources, by plural.
type groupVersion struct {
	gv        schema.GroupVersion
	resources []*resource.Info
}

// path is the URL path of the group-version, without a leading slash, as the
// OpenAPI v3 index names it ("apis/example.apiloom.dev/v1").
func (v *groupVersion) path() string { return resource.GroupVersionPath(v.gv)[1:] }

// groupInfos validates infos and arranges them for discovery: groups by
// name, versions by Kubernetes version priority (v2 > v1 > v1beta1 >
// v1alpha1, the first being the preferred version), resources by plural.
// The order is a pure function of the set of resources, so every replica
// renders identical documents and identical hashes.
func groupInfos(infos []*resource.Info) ([]*apiGroup, error) {
	byGV := map[schema.GroupVersion]*groupVersion{}
	for _, info := range infos {
		if err := checkInfo(info); err != nil {
			return nil, err
		}
		gv := byGV[info.GroupVersion()]
		if gv == nil {
			gv = &groupVersion{gv: info.GroupVersion()}
			byGV[gv.gv] = gv
		}
		for _, other := range gv.resources {
			if other.Plural == info.Plural {
				return nil, fmt.Errorf("%w: %s is registered twice", ErrInvalidResource, info.GroupVersionResource())
			}
			if other.Kind == info.Kind {
				return nil, fmt.Errorf("%w: kind %s is served by both %s and %s",
					ErrInvalidResource, info.GroupVersionKind(), other.Plural, info.Plural)
			}
		}
		gv.resources = append(gv.resources, info)
	}

	byGroup := map[string]*apiGroup{}
	for _, gv := range byGV {
		slices.SortFunc(gv.resources, func(a, b *resource.Info) int { return cmp.Compare(a.Plural, b.Plural) })
		g := byGroup[gv.gv.Group]
		if g == nil {
			g = &apiGroup{name: gv.gv.Group}
			byGroup[g.name] = g
		}
		g.versions = append(g.versions, gv)
	}
	groups := make([]*apiGroup, 0, len(byGroup))
	for _, g := range byGroup {
		slices.SortFunc(g.versions, func(a, b *groupVersion) int {
			return version.CompareKubeAwareVersionStrings(b.gv.Version, a.gv.Version)
		})
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(a, b *apiGroup) int { return cmp.Compare(a.name, b.name) })
	return groups, nil
}

// splitCore separates the core group ("", served under /api) from the
// others (under /apis); core is nil when no core resource is served.
func splitCore(groups []*apiGroup) (core *apiGroup, named []*apiGroup) {
	for _, g := range groups {
		if g.name == "" {
			core = g
			continue
		}
		named = append(named, g)
	}
	return core, named
}

// checkInfo rejects an Info that discovery cannot describe. The core group
// ("") is described under /api, every other under /apis.
func checkInfo(info *resource.Info) error {
	if info == nil {
		return fmt.Errorf("%w: nil resource.Info", ErrInvalidResource)
	}
	missing := func(field string) error {
		return fmt.Errorf("%w: %s/%s %s has no %s", ErrInvalidResource, info.Group, info.Version, info.Kind, field)
	}
	switch {
	case info.Version == "":
		return missing("version")
	case info.Kind == "":
		return missing("kind")
	case info.ListKind == "" && !info.CreateOnly:
		return missing("list kind")
	case info.Plural == "":
		return missing("plural")
	case info.OpenAPIName == "":
		return missing("OpenAPI definition name")
	case strings.Contains(info.Plural, "/"):
		return fmt.Errorf("%w: plural %q contains '/'", ErrInvalidResource, info.Plural)
	}
	return checkSubresources(info)
}
