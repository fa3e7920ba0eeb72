package discovery

import (
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// aggregatedGroupList is /apis (or, with no groups, /api) in the aggregated
// form: every group, version and resource in one document, which spares
// clients one request per group-version. apiVersion picks the wire version;
// apidiscovery.k8s.io/v2 and v2beta1 have the same shape.
func aggregatedGroupList(groups []*apiGroup, apiVersion string) *apidiscoveryv2.APIGroupDiscoveryList {
	out := &apidiscoveryv2.APIGroupDiscoveryList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: apiVersion},
		Items:    make([]apidiscoveryv2.APIGroupDiscovery, 0, len(groups)),
	}
	for _, g := range groups {
		entry := apidiscoveryv2.APIGroupDiscovery{
			ObjectMeta: metav1.ObjectMeta{Name: g.name},
			Versions:   make([]apidiscoveryv2.APIVersionDiscovery, 0, len(g.versions)),
		}
		for _, v := range g.versions {
			entry.Versions = append(entry.Versions, aggregatedVersion(v))
		}
		out.Items = append(out.Items, entry)
	}
	return out
}

// aggregatedVersion describes one group-version. Its resources always carry
// responseKind: client-go drops a resource without one.
func aggregatedVersion(v *groupVersion) apidiscoveryv2.APIVersionDiscovery {
	out := apidiscoveryv2.APIVersionDiscovery{
		Version:   v.gv.Version,
		Resources: make([]apidiscoveryv2.APIResourceDiscovery, 0, len(v.resources)),
		Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
	}
	for _, info := range v.resources {
		kind := &metav1.GroupVersionKind{Group: info.Group, Version: info.Version, Kind: info.Kind}
		r := apidiscoveryv2.APIResourceDiscovery{
			Resource:         info.Plural,
			ResponseKind:     kind,
			Scope:            apidiscoveryv2.ScopeCluster,
			SingularResource: singular(info),
			Verbs:            verbs(info),
			ShortNames:       info.ShortNames,
			Categories:       info.Categories,
		}
		if info.Namespaced {
			r.Scope = apidiscoveryv2.ScopeNamespace
		}
		if info.HasFinalize {
			r.Subresources = append(r.Subresources, apidiscoveryv2.APISubresourceDiscovery{
				Subresource:  finalizeSubresource,
				ResponseKind: kind,
				Verbs:        finalizeVerbs,
			})
		}
		if info.HasStatus {
			r.Subresources = append(r.Subresources, apidiscoveryv2.APISubresourceDiscovery{
				Subresource:  statusSubresource,
				ResponseKind: kind,
				Verbs:        statusVerbs,
			})
		}
		if info.Scale != nil {
			r.Subresources = append(r.Subresources, apidiscoveryv2.APISubresourceDiscovery{
				Subresource:  scaleSubresource,
				ResponseKind: &scaleKind,
				Verbs:        statusVerbs,
			})
		}
		for _, sub := range info.Subresources {
			kind := sub.Kind
			r.Subresources = append(r.Subresources, apidiscoveryv2.APISubresourceDiscovery{
				Subresource:  sub.Name,
				ResponseKind: &kind,
				Verbs:        sub.Verbs,
			})
		}
		out.Resources = append(out.Resources, r)
	}
	return out
}
