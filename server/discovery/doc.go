// Package discovery serves what clients read before they touch a resource:
// API discovery (/api, /apis, /apis/{group}, /apis/{group}/{version}) in both
// the aggregated apidiscovery.k8s.io/v2 form and the legacy APIGroupList and
// APIResourceList form, OpenAPI v3 per group-version (/openapi/v3), OpenAPI v2
// (/openapi/v2) and /version.
//
// The set of resources is fixed for a server's life, so New renders every
// document once: a request only picks a representation and writes bytes that
// already exist. Every document carries a strong ETag (a hash of its bytes),
// so clients that cache discovery or OpenAPI (kubectl does, on disk) get 304s.
//
// Discovery facts come from resource.Info and nothing else. The OpenAPI
// documents are shaped like those kube-apiserver serves for a
// CustomResourceDefinition, because that is what kubectl knows how to use:
// `kubectl apply` and `kubectl create -f` look for a PATCH operation that
// carries the kind's x-kubernetes-group-version-kind and a fieldValidation
// parameter and then rely on server-side validation, and `kubectl explain`
// walks components.schemas. Unlike a CRD's, the PATCH operations advertise
// strategic merge patch (exactly resource.PatchTypes, what the handlers
// accept), as kube-apiserver's do for its built-in kinds: kubectl then
// computes a client-side apply as a strategic merge patch from the schemas'
// x-kubernetes-patch-strategy and x-kubernetes-patch-merge-key, and
// `kubectl patch` without --type sends one.
//
// Each kind's schema (resource.Info.Schema) is laid over openapi-gen's
// definitions as kube-apiserver publishes a CRD's (constraints.go), so
// `kubectl explain` shows enums and schema-driven tools see every
// constraint the server enforces.
package discovery
