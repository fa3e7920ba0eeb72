package storage

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

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
