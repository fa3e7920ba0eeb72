package registry

import (
	"maps"

	"k8s.io/kube-openapi/pkg/common"
)

// OpenAPI extensions openapi-gen writes from +listType/+listMapKey markers
// and from patchStrategy/patchMergeKey tags (which it requires to agree
// with the +patchStrategy/+patchMergeKey comment markers).
const (
	extListType      = "x-kubernetes-list-type"
	extListMapKeys   = "x-kubernetes-list-map-keys"
	extPatchStrategy = "x-kubernetes-patch-strategy"
	extPatchMergeKey = "x-kubernetes-patch-merge-key"
)

// withListMapMerge returns defs with the strategic-merge-patch strategy of
// every +listType=map list that has exactly one +listMapKey and no patch
// strategy of its own made explicit: x-kubernetes-patch-strategy "merge"
// and x-kubernetes-patch-merge-key its key.
//
// Strategic merge patch knows only those two extensions (and the struct
// tags they mirror), so without this a list that server-side apply merges
// by key would be replaced whole by a strategic merge patch, and kubectl's
// client-side apply would send it whole. Made explicit here, in the one set
// of definitions the server has, the rule reaches both places that must
// agree on it: the OpenAPI documents kubectl computes its patches from and
// the patch meta the endpoints apply them with. Lists with several keys
// stay atomic for strategic merge patch, as it supports one merge key only;
// an explicit patch strategy, and every other list, is left as it is.
func withListMapMerge(defs common.GetOpenAPIDefinitions) common.GetOpenAPIDefinitions {
	if defs == nil {
		return nil
	}
	return func(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
		out := defs(ref)
		for name, d := range out {
			changed := false
			for field, p := range d.Schema.Properties {
				key, ok := listMapMergeKey(p.Extensions)
				if !ok {
					continue
				}
				if !changed { // copy on write: the rest stays shared
					d.Schema.Properties = maps.Clone(d.Schema.Properties)
					changed = true
				}
				p.Extensions = maps.Clone(p.Extensions)
				p.Extensions[extPatchStrategy] = "merge"
				p.Extensions[extPatchMergeKey] = key
				d.Schema.Properties[field] = p
			}
			if changed {
				out[name] = d
			}
		}
		return out
	}
}

// listMapMergeKey is the merge key a list with these extensions gets: its
// only map key, when it is a +listType=map list without a patch strategy.
func listMapMergeKey(ext map[string]any) (string, bool) {
	if ext[extListType] != "map" {
		return "", false
	}
	if _, ok := ext[extPatchStrategy]; ok {
		return "", false
	}
	var keys []string
	switch k := ext[extListMapKeys].(type) {
	case []any:
		for _, v := range k {
			s, ok := v.(string)
			if !ok {
				return "", false
			}
			keys = append(keys, s)
		}
	case []string:
		keys = k
	}
	if len(keys) != 1 || keys[0] == "" {
		return "", false
	}
	return keys[0], true
}
