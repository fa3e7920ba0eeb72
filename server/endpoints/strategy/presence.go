package strategy

import (
	"fmt"
	"maps"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
)

// A CRD validates the fields a request wrote, so a required field left out
// is missing. A typed object cannot say that: decoded into Go, a field
// without omitempty left out holds its zero value, and its conversion to
// unstructured content writes that value ("title": ""), present. So the
// schema validates the request's content (a form, form.go) and never
// a typed object's conversion where the request's content exists, and the
// two writes that change an object past its request's body keep to it:
//
//   - A kind's mutating hooks work on the typed object. What they changed
//     (the object's conversion after them against before them) is applied
//     to the form, so a field a hook sets counts as present and a field
//     it leaves alone is as the request wrote it (hookedForm).
//   - Server-side apply merges a configuration into the stored object as
//     typed objects. Its result's conversion holds a zero for every field
//     without omitempty; such a zero is present only where the
//     configuration wrote the field or the stored object already held that
//     same value (ApplyForm), as in the CRD's merged object. A field the
//     configuration no longer writes and structured-merge-diff removed is
//     missing, as with a CRD.

// hookedForm is f with the changes of a kind's mutating hooks applied:
// before and after are the typed object's conversions around the hooks.
// f's content is not modified (a retried update uses it again).
func hookedForm(f *Form, before, after map[string]any) *Form {
	if reflect.DeepEqual(before, after) {
		return f
	}
	return &Form{content: withChanges(f.content, before, after), typedErr: f.typedErr}
}

// withChanges returns content with what changed from before to after:
// a field after sets to another value than before is set, a field before
// has and after lacks is removed, maps are followed field by field and a
// list of objects of unchanged length item by item; anything else is left
// as content has it. Maps on a changed path are copies.
func withChanges(content, before, after map[string]any) map[string]any {
	out := maps.Clone(content)
	if out == nil {
		out = map[string]any{}
	}
	for k, a := range after {
		b, had := before[k]
		if had && reflect.DeepEqual(a, b) {
			continue
		}
		out[k] = changedValue(content[k], b, a, had)
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			delete(out, k)
		}
	}
	return out
}

// changedValue is the value content takes where before's b became a.
func changedValue(c, b, a any, had bool) any {
	if !had {
		return a
	}
	switch a := a.(type) {
	case map[string]any:
		// A map the request left out gets only the fields changed in it.
		bm, ok1 := b.(map[string]any)
		cm, ok2 := c.(map[string]any)
		if ok1 && (ok2 || c == nil) {
			return withChanges(cm, bm, a)
		}
	case []any:
		bl, ok1 := b.([]any)
		cl, ok2 := c.([]any)
		if ok1 && ok2 && len(bl) == len(a) && len(cl) == len(a) {
			out := make([]any, len(a))
			for i := range a {
				if reflect.DeepEqual(a[i], bl[i]) {
					out[i] = cl[i]
					continue
				}
				out[i] = changedValue(cl[i], bl[i], a[i], true)
			}
			return out
		}
	}
	return a
}

// ApplyForm is the form of merged, the object a server-side apply of
// config made over live (nil for a create): merged's conversion with the
// zeros the request did not write removed (dropUnwritten), pruned and
// defaulted as a CRD's merged object is, and merged then takes the
// defaults. Without a schema there is no form.
func (k *Kind[O]) ApplyForm(config map[string]any, merged, live O, creating bool) (O, *Form, error) {
	if k.check == nil {
		return merged, nil, nil
	}
	u, err := k.toUnstructured(merged)
	if err != nil {
		return merged, nil, err
	}
	var old map[string]any
	if !creating {
		if old, err = k.toUnstructured(live); err != nil {
			return merged, nil, err
		}
	}
	dropUnwrittenFields(u, config, old)
	k.check.Decoded(u)
	if k.check.HasDefaults() {
		defaulted := k.def.New()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, defaulted); err != nil {
			return merged, nil, apierrors.NewInternalError(fmt.Errorf("converting defaulted %s: %w", k.gvk.Kind, err))
		}
		defaulted.GetObjectKind().SetGroupVersionKind(k.gvk)
		merged = defaulted
	}
	return merged, &Form{content: u}, nil
}

// dropUnwrittenFields removes from u, an apply's merged object, the
// zeros neither config nor old (nil for a create) explains
// (dropUnwritten); its metadata, kind and apiVersion are the server's
// (formContent) and stay.
func dropUnwrittenFields(u, config, old map[string]any) {
	for k, v := range u {
		if k == "metadata" || k == "apiVersion" || k == "kind" {
			continue
		}
		c, inConfig := config[k]
		o, inOld := old[k]
		if !dropUnwritten(v, c, o, inConfig, inOld) {
			delete(u, k)
		}
	}
}

// dropUnwritten removes from v, a value of an apply's merged object, the
// zero values that neither c, the configuration's value at the same path
// (inConfig: it has one), nor o, the stored object's (inOld), explains,
// and reports whether v itself stays: it does unless it is a zero (or
// became an empty map) that the configuration does not write and the
// stored object does not hold as it is.
func dropUnwritten(v, c, o any, inConfig, inOld bool) bool {
	switch v := v.(type) {
	case map[string]any:
		cm, _ := c.(map[string]any)
		om, _ := o.(map[string]any)
		for k, fv := range v {
			fc, inC := cm[k]
			fo, inO := om[k]
			if !dropUnwritten(fv, fc, fo, inC, inO) {
				delete(v, k)
			}
		}
	case []any:
		cl, _ := c.([]any)
		ol, _ := o.([]any)
		if len(cl) == len(v) {
			for i, item := range v {
				var oi any
				if len(ol) == len(v) {
					oi = ol[i]
				}
				// An item stays: dropping it would change the list.
				dropUnwritten(item, cl[i], oi, true, oi != nil)
			}
		}
	}
	if inConfig || !isZero(v) {
		return true
	}
	return inOld && reflect.DeepEqual(v, o)
}

// isZero reports whether v is what a Go zero value converts to: null,
// false, 0, "", or an empty list or map.
func isZero(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool:
		return !v
	case string:
		return v == ""
	case int64:
		return v == 0
	case float64:
		return v == 0
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}
