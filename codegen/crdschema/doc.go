// Package crdschema computes each served kind's structural schema exactly as
// controller-gen (sigs.k8s.io/controller-tools) writes it into a CRD
// version's openAPIV3Schema, using controller-tools' own loader, marker
// registry and crd.Parser, so apiloom validates what a CRD made from the
// same Go types would validate.
//
// The registry is controller-tools' CRD markers plus Kubernetes' declarative
// validation tags that controller-tools does not know yet (k8stags.go).
// Every comment marker in an API package that neither the registry nor the
// code generators' own tags (generatortags.go) know is an error with its
// file and line, so a typo never drops validation silently; so is a marker
// whose value does not fit its field (controller-tools reports those).
package crdschema
