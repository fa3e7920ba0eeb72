package storage

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/apiloom/apiloom/server/resource"
)

// Matches reports whether obj satisfies p. fieldsOf is the resource's
// Definition.Fields; it is called only when p has a field selector, so
// label-only and empty predicates cost no field set.
func Matches[O resource.Object](p Predicate, obj O, fieldsOf func(O) fields.Set) bool {
	if p.Label != nil && !p.Label.Empty() && !p.Label.Matches(labels.Set(obj.GetLabels())) {
		return false
	}
	if p.Field != nil && !p.Field.Empty() && !p.Field.Matches(fieldsOf(obj)) {
		return false
	}
	return true
}

// matches reports whether obj satisfies p under this store's fields.
func (s *Store[O]) matches(p Predicate, obj O) bool {
	return Matches(p, obj, s.fields)
}

// MayMatchKey reports whether an object with only its namespace and name
// known could satisfy p: the DELETED built from the key of a value that
// does not decode. Requirements on metadata.name and metadata.namespace
// are checked; labels and other fields are unknown and assumed to match,
// since a client that may hold the object must hear of its deletion.
func (p Predicate) MayMatchKey(namespace, name string) bool {
	if p.Field == nil {
		return true
	}
	for _, r := range p.Field.Requirements() {
		var v string
		switch r.Field {
		case "metadata.name":
			v = name
		case "metadata.namespace":
			v = namespace
		default:
			continue
		}
		switch r.Operator {
		case selection.Equals, selection.DoubleEquals:
			if v != r.Value {
				return false
			}
		case selection.NotEquals:
			if v == r.Value {
				return false
			}
		}
	}
	return true
}
