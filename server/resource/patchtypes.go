package resource

import "k8s.io/apimachinery/pkg/types"

// PatchTypes returns the media types of a PATCH body that every resource
// and its status subresource accept, in the order kube-apiserver lists them
// for its built-in types. It is the one list both sides of the contract
// read: the endpoints answer any other Content-Type with a 415 that lists
// these, and discovery advertises exactly these in OpenAPI, where kubectl
// looks (finding strategic merge patch there, `kubectl apply` computes one
// instead of a JSON merge patch). Server-side apply takes YAML (or JSON,
// which is YAML); kube-apiserver v1.37 takes application/apply-patch+cbor
// only behind its alpha CBORServingAndStorage feature gate, off by
// default, so it is 415 here as there. A new patch type is added here and in the
// endpoints' dispatch, nowhere else.
func PatchTypes() []string {
	return []string{
		string(types.JSONPatchType),
		string(types.MergePatchType),
		string(types.StrategicMergePatchType),
		string(types.ApplyYAMLPatchType),
	}
}

// ScalePatchTypes returns the media types a PATCH of a /scale subresource
// accepts: those kube-apiserver accepts on a custom resource's scale, where
// a Scale has no strategic merge patch metadata. The endpoints and OpenAPI
// read this one list, as for PatchTypes.
func ScalePatchTypes() []string {
	return []string{
		string(types.JSONPatchType),
		string(types.MergePatchType),
		string(types.ApplyYAMLPatchType),
	}
}
