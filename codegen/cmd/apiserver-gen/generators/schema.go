package generators

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/codegen/crdschema"
	"github.com/apiloom/apiloom/server/resource"
)

// addSchemas sets every resource's Schema to what controller-gen would
// write for it, loading patterns with controller-tools' loader. Unknown
// markers and marker values that do not fit their fields are errors here.
// An action's input of the same package gets its schema the same way, so
// the server defaults and validates it as it does a kind (one of another
// package gets none).
func addSchemas(patterns []string, gvs []*groupVersion) error {
	var kinds []schema.GroupVersionKind
	for _, gv := range gvs {
		for _, r := range gv.Resources {
			kinds = append(kinds, schema.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: r.Kind})
			for _, c := range r.Custom {
				if in := actionInput(gv, c); in != "" {
					kinds = append(kinds, schema.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: in})
				}
			}
		}
	}
	schemas, err := crdschema.Generate(patterns, kinds)
	if err != nil {
		return err
	}
	for _, gv := range gvs {
		for _, r := range gv.Resources {
			r.Schema = schemas[schema.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: r.Kind}]
			for _, c := range r.Custom {
				if in := actionInput(gv, c); in != "" {
					c.InputSchema = schemas[schema.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: in}]
				}
			}
		}
	}
	return nil
}

// actionInput is the name of c's input type when c is an action whose
// input is a type of gv's package; "" otherwise.
func actionInput(gv *groupVersion, c *customModel) string {
	if c.Type != resource.Action || c.Input.Name.Package != gv.Pkg.Path {
		return ""
	}
	return c.Input.Name.Name
}
