package strategy

import (
	"context"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/apiloom/apiloom/server/admission"
	"github.com/apiloom/apiloom/server/resource"
)

var _ admission.MutationObserver = (*Write[resource.Object])(nil)

// ObserveMutation implements admission.MutationObserver: what a policy
// or webhook changed in the object is applied to the form, as a kind's
// mutating hooks' changes are (hookedForm), so the schema validates the
// object as mutated. On /status only the status may change, as the
// status strategy keeps only the status of what admission returns; on
// /finalize nothing does. The object is copied only when a plugin is
// about to write into it.
func (w *Write[O]) ObserveMutation(_ context.Context, mutate func(before func()) error) error {
	var before O
	taken := false
	if err := mutate(func() {
		if !taken {
			before, taken = copyObject(w.obj), true
		}
	}); err != nil || !taken {
		return err
	}
	if equality.Semantic.DeepEqual(before, w.obj) {
		return nil
	}
	switch w.kind {
	case statusUpdating:
		keepOnlyStatus(w.k.def.CopyStatus, w.obj, before)
	case finalizing:
		reflect.ValueOf(w.obj).Elem().Set(reflect.ValueOf(before).Elem())
		return nil
	}
	if w.f == nil || w.f.DecodeError() != nil {
		return nil
	}
	b, err := w.k.toUnstructured(before)
	if err != nil {
		return err
	}
	a, err := w.k.toUnstructured(w.obj)
	if err != nil {
		return err
	}
	w.f = hookedForm(w.f, b, a)
	return nil
}
