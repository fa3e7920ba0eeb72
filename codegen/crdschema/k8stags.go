package crdschema

import "sigs.k8s.io/controller-tools/pkg/markers"

// k8sTagDefinitions are Kubernetes' declarative validation tags that
// controller-tools does not register itself.
func k8sTagDefinitions() []*markers.Definition { return nil }
