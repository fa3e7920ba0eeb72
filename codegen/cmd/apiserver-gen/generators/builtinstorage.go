package generators

import (
	"errors"
	"fmt"
	"slices"

	"k8s.io/gengo/v2/types"
)

// linkBuiltinStorage points each built-in kind that names a `storage` at
// the kind it is stored as, which the file must serve too: the same kind
// name in the named package, in another API group (events.k8s.io/v1 Event
// is stored as core/v1 Event). Field selectors are evaluated on stored
// objects, so every selectable field of the kind must be one of the stored
// kind's, under its own key or the one FieldLabels maps it to.
func linkBuiltinStorage(u types.Universe, f builtinFile, gvs []*groupVersion) error {
	find := func(pkg, kind string) (*groupVersion, *resourceModel) {
		for _, gv := range gvs {
			if gv.Pkg.Path != pkg {
				continue
			}
			for _, r := range gv.Resources {
				if r.Kind == kind {
					return gv, r
				}
			}
		}
		return nil, nil
	}
	var errs []error
	for _, bp := range f {
		for _, bk := range bp.Kinds {
			st := bk.Storage
			if st == nil {
				continue
			}
			name := bp.Package + "." + bk.Kind
			gv, r := find(bp.Package, bk.Kind)
			sgv, sr := find(st.Package, bk.Kind)
			if r == nil {
				continue // reported by builtins
			}
			if sr == nil {
				errs = append(errs, fmt.Errorf("built-in %s: storage %s.%s is not a kind of the file", name, st.Package, bk.Kind))
				continue
			}
			if sr.StoredAs != nil || sgv == gv {
				errs = append(errs, fmt.Errorf("built-in %s: storage %s.%s must be stored as itself, in another package", name, st.Package, bk.Kind))
				continue
			}
			link := &storedAs{GV: sgv, Resource: sr, FieldLabels: st.FieldLabels, OtherGroup: sgv.Group != gv.Group}
			var err error
			if link.ToStorageFunc, err = function(u, st.ToStorage); err != nil {
				errs = append(errs, fmt.Errorf("built-in %s: toStorage %w", name, err))
			}
			if link.FromStorageFunc, err = function(u, st.FromStorage); err != nil {
				errs = append(errs, fmt.Errorf("built-in %s: fromStorage %w", name, err))
			}
			for _, g := range r.SelectableFields {
				key := g.Key
				if to, ok := st.FieldLabels[key]; ok {
					key = to
				}
				if !slices.ContainsFunc(sr.SelectableFields, func(s *fieldGetter) bool { return s.Key == key }) {
					errs = append(errs, fmt.Errorf("built-in %s: selectable field %s is %s of the stored kind, which has no such selectable field", name, g.Key, key))
				}
			}
			for from := range st.FieldLabels {
				if !slices.ContainsFunc(r.SelectableFields, func(s *fieldGetter) bool { return s.Key == from }) {
					errs = append(errs, fmt.Errorf("built-in %s: fieldLabels names %s, which is not a selectable field of the kind", name, from))
				}
			}
			r.StoredAs = link
		}
	}
	return errors.Join(errs...)
}
