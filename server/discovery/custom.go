package discovery

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/kube-openapi/pkg/common"

	"github.com/apiloom/apiloom/server/resource"
)

// A kind's own subresources (resource.Info.Subresources with a Type: its
// actions, views and streams) are described as kube-apiserver describes
// pods/eviction and pods/log: discovery lists them (legacy.go,
// aggregated.go), routes.go gives each a path with one operation, and the
// definitions they read and answer join the documents' (rootKeys).

// contentTypeText is what a stream answers.
const contentTypeText = "text/plain"

// customSubresources are info's own subresources, those the server does not
// serve itself.
func customSubresources(info *resource.Info) []*resource.SubresourceInfo {
	var out []*resource.SubresourceInfo
	for i := range info.Subresources {
		if info.Subresources[i].Type != "" {
			out = append(out, &info.Subresources[i])
		}
	}
	return out
}

// customKeys are the definitions info's own subresources read and answer.
func customKeys(info *resource.Info) []string {
	var keys []string
	for _, sub := range customSubresources(info) {
		for _, k := range []string{sub.InputOpenAPIName, sub.ResultOpenAPIName} {
			if k != "" && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// checkSubresources rejects a subresource discovery cannot describe.
func checkSubresources(info *resource.Info) error {
	seen := map[string]bool{}
	for _, sub := range info.Subresources {
		bad := func(what string) error {
			return fmt.Errorf("%w: %s/%s %s subresource %q %s", ErrInvalidResource, info.Group, info.Version, info.Kind, sub.Name, what)
		}
		switch {
		case sub.Name == "" || strings.Contains(sub.Name, "/"):
			return bad("is not a path segment")
		case sub.Name == statusSubresource || sub.Name == scaleSubresource || sub.Name == finalizeSubresource:
			return bad("has the name of a generic subresource")
		case seen[sub.Name]:
			return bad("is listed twice")
		case sub.Type != "" && sub.Type != resource.Action && sub.Type != resource.View && sub.Type != resource.Stream:
			return bad(fmt.Sprintf("has unknown type %q", sub.Type))
		case sub.Type == resource.Action && sub.InputOpenAPIName == "":
			return bad("is an action without an input definition")
		case sub.Type == resource.View && sub.ResultOpenAPIName == "":
			return bad("is a view without a result definition")
		}
		seen[sub.Name] = true
	}
	return nil
}

// streamParams are the query parameters of each stream's options, by
// definition key: one per property of the definition but apiVersion and
// kind, by name, typed by the property (a list by its items' type), as
// kube-apiserver lists pods/log's from PodLogOptions. A property a query
// string cannot carry (an object, a reference) is left out, as upstream
// leaves out PodLogOptions' sinceTime.
func streamParams(all map[string]common.OpenAPIDefinition, groups []*apiGroup) map[string][]queryParam {
	out := map[string][]queryParam{}
	for _, g := range groups {
		for _, v := range g.versions {
			for _, info := range v.resources {
				for _, sub := range customSubresources(info) {
					if sub.Type != resource.Stream || sub.InputOpenAPIName == "" {
						continue
					}
					if _, done := out[sub.InputOpenAPIName]; done {
						continue
					}
					out[sub.InputOpenAPIName] = optionParams(all[sub.InputOpenAPIName])
				}
			}
		}
	}
	return out
}

// optionParams are def's properties as query parameters.
func optionParams(def common.OpenAPIDefinition) []queryParam {
	var out []queryParam
	for _, name := range slices.Sorted(maps.Keys(def.Schema.Properties)) {
		if name == "apiVersion" || name == "kind" {
			continue
		}
		p := def.Schema.Properties[name]
		typ := ""
		if len(p.Type) == 1 {
			typ = p.Type[0]
		}
		if typ == "array" && p.Items != nil && p.Items.Schema != nil && len(p.Items.Schema.Type) == 1 {
			typ = p.Items.Schema.Type[0]
		}
		switch typ {
		case "string", "integer", "number", "boolean":
			out = append(out, queryParam{name, typ, p.Description})
		}
	}
	return out
}
