package discovery

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/resource"
)

// Verbs every resource serves, and those of its status subresource. They are
// the same for every type: the generic handlers implement all of them.
var (
	resourceVerbs = metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	statusVerbs   = metav1.Verbs{"get", "patch", "update"}
	// finalizeVerbs are a finalize subresource's (a Namespace's).
	finalizeVerbs = metav1.Verbs{"update"}
	// createOnlyVerbs are a review's (resource.Info.CreateOnly).
	createOnlyVerbs = metav1.Verbs{"create"}
)

// verbs are the verbs info's resource serves.
func verbs(info *resource.Info) metav1.Verbs {
	if info.CreateOnly {
		return createOnlyVerbs
	}
	return resourceVerbs
}

// The subresources a type can have: its status and its scale, which is an
// autoscaling/v1 Scale.
const (
	statusSubresource = "status"
	scaleSubresource  = "scale"
	// finalizeSubresource is a kind's with finalizers of its own
	// (resource.Info.HasFinalize), namespaces/finalize.
	finalizeSubresource = "finalize"
)

// scaleKind is the kind the scale subresource serves.
var scaleKind = metav1.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}

// legacyAPIVersions is /api in the legacy form: the versions of the core
// group, none when it is not served (client-go tolerates the empty list),
// and the server's address for every client when it is known.
func legacyAPIVersions(core *apiGroup, serverAddress string) *metav1.APIVersions {
	out := &metav1.APIVersions{
		TypeMeta:                   metav1.TypeMeta{Kind: "APIVersions"},
		Versions:                   []string{},
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{},
	}
	if serverAddress != "" {
		out.ServerAddressByClientCIDRs = append(out.ServerAddressByClientCIDRs,
			metav1.ServerAddressByClientCIDR{ClientCIDR: "0.0.0.0/0", ServerAddress: serverAddress})
	}
	if core != nil {
		for _, v := range core.versions {
			out.Versions = append(out.Versions, v.gv.Version)
		}
	}
	return out
}

// legacyGroup is /apis/{group} and one entry of /apis in the legacy form.
func legacyGroup(g *apiGroup) *metav1.APIGroup {
	out := &metav1.APIGroup{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"},
		Name:     g.name,
		Versions: make([]metav1.GroupVersionForDiscovery, 0, len(g.versions)),
	}
	for _, v := range g.versions {
		out.Versions = append(out.Versions, metav1.GroupVersionForDiscovery{
			GroupVersion: v.gv.String(),
			Version:      v.gv.Version,
		})
	}
	out.PreferredVersion = out.Versions[0]
	return out
}

// legacyGroupList is /apis in the legacy form.
func legacyGroupList(groups []*apiGroup) *metav1.APIGroupList {
	out := &metav1.APIGroupList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
		Groups:   make([]metav1.APIGroup, 0, len(groups)),
	}
	for _, g := range groups {
		entry := legacyGroup(g)
		entry.TypeMeta = metav1.TypeMeta{} // only the list carries kind and apiVersion
		out.Groups = append(out.Groups, *entry)
	}
	return out
}

// legacyResourceList is /apis/{group}/{version}: each resource, then its
// status subresource as "plural/status" (which has no singular name, as in
// kube-apiserver), its scale subresource as "plural/scale", of kind
// autoscaling/v1 Scale, and those with handlers of their own
// (Info.Subresources).
func legacyResourceList(v *groupVersion) *metav1.APIResourceList {
	out := &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: v.gv.String(),
		APIResources: []metav1.APIResource{},
	}
	for _, info := range v.resources {
		r := metav1.APIResource{
			Name:         info.Plural,
			SingularName: singular(info),
			Namespaced:   info.Namespaced,
			Kind:         info.Kind,
			Verbs:        verbs(info),
			ShortNames:   info.ShortNames,
			Categories:   info.Categories,
		}
		if !info.CreateOnly {
			// As kube-apiserver for a CRD: the hash of the version objects
			// are stored in, the same in every version of the kind, so
			// that a storage migrator sees when it changes. A review is
			// not stored and has none, as in kube-apiserver.
			r.StorageVersionHash = storageVersionHash(info.StorageGroupVersion().Group, storageVersion(info), info.Kind)
		}
		out.APIResources = append(out.APIResources, r)
		if info.HasFinalize {
			out.APIResources = append(out.APIResources, metav1.APIResource{
				Name:       info.Plural + "/" + finalizeSubresource,
				Namespaced: info.Namespaced,
				Kind:       info.Kind,
				Verbs:      finalizeVerbs,
			})
		}
		if info.HasStatus {
			out.APIResources = append(out.APIResources, metav1.APIResource{
				Name:       info.Plural + "/" + statusSubresource,
				Namespaced: info.Namespaced,
				Kind:       info.Kind,
				Verbs:      statusVerbs,
			})
		}
		if info.Scale != nil {
			out.APIResources = append(out.APIResources, metav1.APIResource{
				Name:       info.Plural + "/" + scaleSubresource,
				Namespaced: info.Namespaced,
				Group:      scaleKind.Group,
				Version:    scaleKind.Version,
				Kind:       scaleKind.Kind,
				Verbs:      statusVerbs,
			})
		}
		for _, sub := range info.Subresources {
			r := metav1.APIResource{
				Name:       info.Plural + "/" + sub.Name,
				Namespaced: info.Namespaced,
				Kind:       sub.Kind.Kind,
				Verbs:      sub.Verbs,
			}
			// As kube-apiserver: group and version only for a kind of
			// another group-version (serviceaccounts/token's
			// authentication.k8s.io/v1 TokenRequest, pods/eviction's
			// policy/v1 Eviction); one of the list's own leaves them
			// empty (pods/binding's Binding, pods/log's Pod).
			if sub.Kind.Group != v.gv.Group || sub.Kind.Version != v.gv.Version {
				r.Group, r.Version = sub.Kind.Group, sub.Kind.Version
			}
			out.APIResources = append(out.APIResources, r)
		}
	}
	return out
}

// storageVersion is the version the resource's objects are stored in.
func storageVersion(info *resource.Info) string {
	return info.StorageGroupVersion().Version
}

// singular is the resource's singular name, defaulting as kube-apiserver
// does for CRDs to the lower-cased kind.
func singular(info *resource.Info) string {
	if info.Singular != "" {
		return info.Singular
	}
	return strings.ToLower(info.Kind)
}
