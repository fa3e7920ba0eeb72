// Package fields holds the field-selector values of built-in kinds that
// are not one field of the object (builtin/apis.yaml names them in a
// kind's `fields`), as kube-apiserver computes them in each kind's
// ToSelectableFields.
package fields
