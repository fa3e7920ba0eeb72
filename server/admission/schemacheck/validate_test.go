package schemacheck

import (
	"context"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateCase is one write and the causes a CRD with widgetSchema
// answers it with (none: accepted). Their order is not compared: the
// OpenAPI validator, kube-apiserver's too, visits properties in map order.
type validateCase struct {
	name     string
	op       string // create, update, status
	obj, old string
	earlier  field.ErrorList
	want     []string
}

func runValidateCases(t *testing.T, c *Check, cases []validateCase) {
	t.Helper()
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := object(t, tc.obj)
			var errs field.ErrorList
			switch tc.op {
			case "create":
				errs = c.Create(ctx, obj, tc.earlier, nil)
			case "update":
				errs = c.Update(ctx, obj, object(t, tc.old), tc.earlier, nil)
			case "status":
				errs = c.StatusUpdate(ctx, obj, object(t, tc.old), tc.earlier, nil)
			default:
				t.Fatalf("op %q", tc.op)
			}
			got, want := messages(errs), slices.Clone(tc.want)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("causes:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
}

const (
	validWidget = `{"apiVersion":"test.apiloom.dev/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"name":"ok","size":2,"mode":"a","class":"x"},"status":{"phase":"Ready","count":1}}`
	// badSpecWidget breaks every marker of the spec.
	badSpecWidget = `{"apiVersion":"test.apiloom.dev/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"name":"much-too-long","size":10,"mode":"c","class":"x"},"status":{"phase":"Ready","count":1}}`
)

// TestCreate: a create is validated whole, by markers then CEL rules, as
// the CRD strategy's Validate does.
func TestCreate(t *testing.T) {
	c := newCheck(t, widgetSchema)
	runValidateCases(t, c, []validateCase{
		{name: "valid", op: "create", obj: validWidget},
		{name: "markers, and CEL rules not run", op: "create", obj: badSpecWidget, want: []string{
			`spec.mode: Unsupported value: "c": supported values: "a", "b"`,
			`spec.name: Too long: may not be more than 8 bytes`,
			`spec.size: Invalid value: 10: spec.size in body should be less than or equal to 9`,
			`<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
		}},
		{name: "required", op: "create", obj: `{"spec":{"size":1}}`, want: []string{
			`spec.name: Required value`,
			`<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
		}},
		{name: "wrong type", op: "create", obj: `{"spec":{"name":"a","size":"one"}}`, want: []string{
			`spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`,
			`<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
		}},
		{name: "CEL rule with messageExpression, reason and fieldPath", op: "create",
			obj: `{"spec":{"name":"a","size":7,"mode":"a"}}`, want: []string{
				`spec.mode: Forbidden: mode a allows no size above 5`,
			}},
		{name: "list map keys unique", op: "create",
			obj: `{"spec":{"name":"a","items":[{"key":"k","value":1},{"key":"k","value":2}]}}`, want: []string{
				`spec.items[1]: Duplicate value: {"key":"k"}`,
			}},
		{name: "earlier (metadata) violations come first and may block CEL", op: "create", obj: validWidget,
			earlier: field.ErrorList{field.TooLong(field.NewPath("metadata", "name"), "", 253)},
			want: []string{
				`metadata.name: Too long: may not be more than 253 bytes`,
				`<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
			}},
		{name: "earlier violation that does not block CEL", op: "create", obj: `{"spec":{"name":"a","size":7,"mode":"a"}}`,
			earlier: field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), "A", "bad")},
			want: []string{
				`metadata.name: Invalid value: "A": bad`,
				`spec.mode: Forbidden: mode a allows no size above 5`,
			}},
	})
}

// TestUpdate: an update ratchets, as CRDs do since 1.33: an invalid value
// the old object already had passes, a changed one does not; transition
// rules see oldSelf.
func TestUpdate(t *testing.T) {
	c := newCheck(t, widgetSchema)
	runValidateCases(t, c, []validateCase{
		{name: "valid", op: "update", obj: validWidget, old: validWidget},
		{name: "unchanged invalid values ratchet", op: "update", obj: badSpecWidget, old: badSpecWidget},
		// The markers of unchanged fields ratchet, but spec's CEL rule runs
		// again: spec itself changed.
		{name: "unchanged invalid values ratchet while others change", op: "update",
			obj: `{"spec":{"name":"much-too-long","size":10,"mode":"c","class":"x","items":[{"key":"a"}]}}`,
			old: badSpecWidget, want: []string{
				`spec.mode: Forbidden: mode c allows no size above 5`,
			}},
		{name: "a changed invalid value does not", op: "update",
			obj: `{"spec":{"name":"much-too-long","size":11,"mode":"c","class":"x"}}`, old: badSpecWidget, want: []string{
				`spec.size: Invalid value: 11: spec.size in body should be less than or equal to 9`,
				`spec.mode: Forbidden: mode c allows no size above 5`,
			}},
		{name: "transition rule", op: "update",
			obj: `{"spec":{"name":"ok","size":2,"mode":"a","class":"y"}}`, old: validWidget, want: []string{
				`spec.class: Invalid value: "y": Value is immutable`,
			}},
		{name: "transition rule not run when the value is new", op: "update",
			obj: `{"spec":{"name":"ok","size":2,"mode":"a","class":"y"}}`, old: `{"spec":{"name":"ok"}}`},
		{name: "an unchanged CEL violation ratchets", op: "update",
			obj: `{"spec":{"name":"a","size":7,"mode":"a"}}`, old: `{"spec":{"name":"a","size":7,"mode":"a"}}`},
		{name: "a changed CEL violation does not", op: "update",
			obj: `{"spec":{"name":"a","size":8,"mode":"a"}}`, old: `{"spec":{"name":"a","size":7,"mode":"a"}}`, want: []string{
				`spec.mode: Forbidden: mode a allows no size above 5`,
			}},
		{name: "list map duplicates ratchet when the old object had them", op: "update",
			obj: `{"spec":{"name":"a","items":[{"key":"k"},{"key":"k"},{"key":"j"}]}}`,
			old: `{"spec":{"name":"a","items":[{"key":"k"},{"key":"k"}]}}`},
		{name: "list map duplicates new", op: "update",
			obj: `{"spec":{"name":"a","items":[{"key":"k"},{"key":"k"}]}}`,
			old: `{"spec":{"name":"a","items":[{"key":"k"}]}}`, want: []string{
				`spec.items[1]: Duplicate value: {"key":"k"}`,
			}},
	})
}

// TestStatusUpdate: a /status write validates the status by the schema and
// the whole object by the CEL rules, ratcheting; a spec that a tightened
// schema no longer accepts does not stop it.
func TestStatusUpdate(t *testing.T) {
	c := newCheck(t, widgetSchema)
	runValidateCases(t, c, []validateCase{
		{name: "valid", op: "status", obj: validWidget, old: validWidget},
		{name: "invalid unchanged spec", op: "status",
			obj: strings.Replace(badSpecWidget, `"phase":"Ready"`, `"phase":"Pending"`, 1), old: badSpecWidget},
		{name: "invalid status", op: "status",
			obj: strings.Replace(validWidget, `"phase":"Ready","count":1`, `"phase":"Done","count":-1`, 1), old: validWidget, want: []string{
				`status.phase: Unsupported value: "Done": supported values: "Pending", "Ready"`,
				// The status schema is validated alone, so its messages
				// name the field from status down, as kube-apiserver's.
				`status.count: Invalid value: -1: count in body should be greater than or equal to 0`,
				`<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
			}},
		{name: "unchanged invalid status ratchets", op: "status",
			obj: `{"spec":{"name":"a"},"status":{"phase":"Done","count":-1}}`,
			old: `{"spec":{"name":"a"},"status":{"phase":"Done","count":-1}}`},
		{name: "no status", op: "status", obj: `{"spec":{"name":"a"}}`, old: `{"spec":{"name":"a"},"status":{"count":-1}}`},
	})
}

// TestDefault: defaults apply to absent fields whose parent is present, as
// a CRD defaults a decoded body.
func TestDefault(t *testing.T) {
	c := newCheck(t, widgetSchema)
	obj := object(t, `{"spec":{"name":"a","mode":"b"},"status":{}}`)
	c.Default(obj)
	want := object(t, `{"spec":{"name":"a","mode":"b","size":1},"status":{}}`)
	if got, w := mustJSON(t, obj), mustJSON(t, want); got != w {
		t.Errorf("defaulted %s, want %s", got, w)
	}
	noSpec := object(t, `{"metadata":{"name":"a"}}`)
	c.Default(noSpec)
	if got := mustJSON(t, noSpec); got != `{"metadata":{"name":"a"}}` {
		t.Errorf("defaulted %s; an absent parent gets no defaults", got)
	}
}

// TestAfterSchema: the violations a caller finds right after the schema's
// (a scale subresource's replicas) come after them, in that order, and do
// not keep the CEL rules from running, as in kube-apiserver, whose
// custom resource validator checks the scale fields after the schema and
// before the strategy runs the rules.
func TestAfterSchema(t *testing.T) {
	c := newCheck(t, widgetSchema)
	ctx := context.Background()
	scale := field.ErrorList{field.Invalid(field.NewPath(".spec.size"), -1, "should be a non-negative integer")}
	// Size 10 with mode a breaks the schema's maximum of 9, which lets
	// the rules run, and a CEL rule: schema, then scale, then CEL.
	obj := `{"apiVersion":"test.apiloom.dev/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"name":"ok","size":10,"mode":"a"}}`
	want := []string{
		`spec.size: Invalid value: 10: spec.size in body should be less than or equal to 9`,
		`.spec.size: Invalid value: -1: should be a non-negative integer`,
		`spec.mode: Forbidden: mode a allows no size above 5`,
	}
	for name, errs := range map[string]field.ErrorList{
		"create": c.Create(ctx, object(t, obj), nil, scale),
		"update": c.Update(ctx, object(t, obj), object(t, validWidget), nil, scale),
	} {
		if got := messages(errs); !slices.Equal(got, want) {
			t.Errorf("%s: causes\n  %s\nwant\n  %s", name, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	}
}
