package behavior

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	inventorygen "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/testdata/golden/inventory/v1alpha1"
	shopgen "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/testdata/golden/shop/v1"

	inventoryv1alpha1 "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/testdata/apis/inventory/v1alpha1"
	shopv1 "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/testdata/apis/shop/v1"
)

// validOrder passes every marker of testdata/apis/shop/v1.
func validOrder() *shopv1.Order {
	return &shopv1.Order{
		ObjectMeta: metav1.ObjectMeta{Name: "o", Namespace: "ns"},
		Spec: shopv1.OrderSpec{
			Customer: "ada", Quantity: 5,
			Lines: []shopv1.OrderLine{{SKU: "ABC-1"}, {SKU: "XYZ-22", Count: 2}},
		},
	}
}

func TestDefault(t *testing.T) {
	o := validOrder()
	o.Spec.Gifts = map[string]shopv1.OrderLine{"bob": {SKU: "GFT-1"}}
	o.Spec.Lines[0].Next = &shopv1.OrderLine{SKU: "NXT-1"}
	shopgen.Order.Default(o)
	s := o.Spec
	switch {
	case s.WeightGrams != 500:
		t.Errorf("weightGrams = %d, want the default 500", s.WeightGrams)
	case s.Priority == nil || *s.Priority != 0:
		t.Errorf("priority = %v, want a pointer to 0", s.Priority)
	case s.Shipping == nil || s.Shipping.Carrier != "post" || s.Shipping.Express == nil || *s.Shipping.Express:
		t.Errorf("shipping = %+v, want {} defaulted, then its fields", s.Shipping)
	case s.Lines[0].Count != 1 || s.Lines[1].Count != 2 || s.Lines[0].Next.Count != 1:
		t.Errorf("lines = %+v, want counts defaulted to 1 where unset, also nested", s.Lines)
	case s.Gifts["bob"].Count != 1:
		t.Errorf("gifts = %+v, want map values defaulted", s.Gifts)
	}
	if errs := shopgen.Order.Validate(o); len(errs) != 0 {
		t.Errorf("defaulted valid order: Validate = %v", errs)
	}

	// Set values are kept.
	prio := int64(3)
	o = validOrder()
	o.Spec.WeightGrams, o.Spec.Priority = 7, &prio
	shopgen.Order.Default(o)
	if o.Spec.WeightGrams != 7 || *o.Spec.Priority != 3 {
		t.Errorf("Default overwrote set values: %+v", o.Spec)
	}

	// Types without markers get no-op functions.
	w := &shopv1.Warehouse{}
	shopgen.Warehouse.Default(w)
	if errs := shopgen.Warehouse.Validate(w); errs != nil {
		t.Errorf("Warehouse.Validate = %v", errs)
	}
	if errs := inventorygen.Shelf.Validate(&inventoryv1alpha1.Shelf{}); errs != nil {
		t.Errorf("Shelf.Validate = %v", errs)
	}
}

func TestValidate(t *testing.T) {
	type want struct {
		typ  field.ErrorType
		path string
	}
	prio := int64(2)
	tests := []struct {
		name   string
		modify func(o *shopv1.Order)
		want   []want
	}{
		{"valid", func(*shopv1.Order) {}, nil},
		{"required", func(o *shopv1.Order) { o.Spec.Customer = "" }, []want{{field.ErrorTypeRequired, "spec.customer"}}},
		{"min length", func(o *shopv1.Order) { o.Spec.Customer = "a" }, []want{{field.ErrorTypeInvalid, "spec.customer"}}},
		{"max length counts characters", func(o *shopv1.Order) { o.Spec.Customer = "ééééééééééééééééééé" }, nil},
		{"max length", func(o *shopv1.Order) { o.Spec.Customer = "abcdefghijklmnopqrstu" }, []want{{field.ErrorTypeTooLong, "spec.customer"}}},
		{"minimum without omitempty applies to zero", func(o *shopv1.Order) { o.Spec.Quantity = 0 }, []want{{field.ErrorTypeInvalid, "spec.quantity"}}},
		{"exclusive maximum", func(o *shopv1.Order) { o.Spec.Quantity = 100 }, []want{{field.ErrorTypeInvalid, "spec.quantity"}}},
		{"just below exclusive maximum", func(o *shopv1.Order) { o.Spec.Quantity = 99 }, nil},
		{"enum on a pointer", func(o *shopv1.Order) { o.Spec.Priority = &prio }, []want{{field.ErrorTypeNotSupported, "spec.priority"}}},
		{"enum through an inlined struct", func(o *shopv1.Order) { o.Spec.Region = "mars" }, []want{{field.ErrorTypeNotSupported, "spec.region"}}},
		{"omitted enum is absent", func(o *shopv1.Order) { o.Status.Phase = "" }, nil},
		{"enum on a named type", func(o *shopv1.Order) { o.Status.Phase = "Lost" }, []want{{field.ErrorTypeNotSupported, "status.phase"}}},
		{"max items", func(o *shopv1.Order) { o.Spec.Items = []string{"a", "b", "c", "d"} }, []want{{field.ErrorTypeTooMany, "spec.items"}}},
		{"min items", func(o *shopv1.Order) { o.Spec.Lines = o.Spec.Lines[:1] }, []want{{field.ErrorTypeInvalid, "spec.lines"}}},
		{"omitted list is absent", func(o *shopv1.Order) { o.Spec.Lines = nil }, nil},
		{"slice element", func(o *shopv1.Order) { o.Spec.Lines[1].SKU = "bad" }, []want{{field.ErrorTypeInvalid, "spec.lines[1].sku"}}},
		{"nested pointer", func(o *shopv1.Order) { o.Spec.Lines[0].Next = &shopv1.OrderLine{Count: -1} }, []want{
			{field.ErrorTypeRequired, "spec.lines[0].next.sku"}, {field.ErrorTypeInvalid, "spec.lines[0].next.count"},
		}},
		{"map values, in key order", func(o *shopv1.Order) {
			o.Spec.Gifts = map[string]shopv1.OrderLine{"z": {}, "a": {SKU: "x"}}
		}, []want{{field.ErrorTypeInvalid, "spec.gifts[a].sku"}, {field.ErrorTypeRequired, "spec.gifts[z].sku"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := validOrder()
			tc.modify(o)
			var got []want
			for _, e := range shopgen.Order.Validate(o) {
				got = append(got, want{e.Type, e.Field})
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Validate = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestValidateMessages checks the wording clients see in causes.
func TestValidateMessages(t *testing.T) {
	o := validOrder()
	o.Spec.Quantity, o.Spec.Lines[0].SKU = 0, "abc"
	errs := shopgen.Order.Validate(o)
	want := []string{
		`spec.quantity: Invalid value: 0: should be greater than or equal to 1`,
		`spec.lines[0].sku: Invalid value: "abc": should match '^[A-Z]{3}-[0-9]+$'`,
	}
	if len(errs) != len(want) {
		t.Fatalf("Validate = %v, want %d errors", errs, len(want))
	}
	for i, e := range errs {
		if e.Error() != want[i] {
			t.Errorf("error %d = %q, want %q", i, e.Error(), want[i])
		}
	}
}
