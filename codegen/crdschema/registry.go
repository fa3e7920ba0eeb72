package crdschema

import (
	"fmt"
	"sort"

	crdmarkers "sigs.k8s.io/controller-tools/pkg/crd/markers"
	"sigs.k8s.io/controller-tools/pkg/markers"
)

// Registry returns the markers the schema is built from: controller-gen's
// CRD markers (crdmarkers.Register, exactly what `controller-gen crd`
// registers) plus the Kubernetes declarative validation tags of
// k8stags.go.
func Registry() (*markers.Registry, error) {
	reg := &markers.Registry{}
	if err := crdmarkers.Register(reg); err != nil {
		return nil, fmt.Errorf("crdschema: registering controller-tools' markers: %w", err)
	}
	for _, def := range k8sTagDefinitions() {
		if err := reg.Register(def); err != nil {
			return nil, fmt.Errorf("crdschema: registering +%s: %w", def.Name, err)
		}
	}
	return reg, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
