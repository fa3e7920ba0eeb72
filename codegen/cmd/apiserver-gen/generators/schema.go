package generators

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/codegen/crdschema"
)

// addSchemas sets every resource's Schema to what controller-gen would
// write for it, loading patterns with controller-tools' loader. Unknown
// markers and marker values that do not fit their fields are errors here.
func addSchemas(patterns []string, gvs []*groupVersion) error {
	var kinds []schema.GroupVersionKind
	for _, gv := range gvs {
		for _, r := range gv.Resources {
			kinds = append(kinds, schema.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: r.Kind})
		}
	}
	schemas, err := crdschema.Generate(patterns, kinds)
	if err != nil {
		return err
	}
	for _, gv := range gvs {
		for _, r := range gv.Resources {
			r.Schema = schemas[schema.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: r.Kind}]
		}
	}
	return nil
}
