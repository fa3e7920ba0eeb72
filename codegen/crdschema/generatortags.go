package crdschema

import "strings"

// generatorTagNames are the markers the other generators of `make
// generate` read (client-gen, deepcopy-gen, register-gen, openapi-gen,
// apiserver-gen's own markers) and controller-gen generators
// other than the CRD one, which the schema does not depend on. A name
// ending in ":" stands for every marker under it.
var generatorTagNames = []string{
	// client-gen, lister-gen, informer-gen
	"genclient", "genclient:", "groupName", "groupGoName", "resourceName",
	// deepcopy-gen, conversion-gen, defaulter-gen, prerelease-lifecycle-gen
	"k8s:deepcopy-gen", "k8s:deepcopy-gen:", "k8s:conversion-gen", "k8s:conversion-gen:",
	"k8s:conversion-gen-external-types", "k8s:defaulter-gen", "k8s:defaulter-gen-input",
	"k8s:prerelease-lifecycle-gen", "k8s:prerelease-lifecycle-gen:",
	// openapi-gen
	"k8s:openapi-gen", "k8s:openapi-model-package", "patchStrategy", "patchMergeKey", "enum",
	"listType", "listMapKey", "mapType", "structType", "optional", "required",
	// apiserver-gen's own (codegen/markers.StreamName)
	"apiloom:stream", "apiloom:stream:",
	// controller-gen's object (deepcopy) generator; kubebuilder's scaffolding
	"kubebuilder:object:", "kubebuilder:ac:",
	// legacy build constraints
	"build",
}

// generatorTag reports whether marker text ("+name", "+name=v",
// "+name:args") is one of generatorTagNames.
func generatorTag(text string) bool {
	name := strings.TrimPrefix(text, "+")
	if i := strings.IndexAny(name, "= \t"); i >= 0 {
		name = name[:i]
	}
	for _, t := range generatorTagNames {
		if name == t || (strings.HasSuffix(t, ":") && strings.HasPrefix(name, t)) {
			return true
		}
	}
	return false
}
