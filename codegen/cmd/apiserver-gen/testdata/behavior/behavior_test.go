// Package behavior runs the golden output: the generated Fields, CopyStatus
// and SpecEqual functions and printer columns must do what
// resource.Definition promises.
// TestGoldenCompiles runs it; it lives outside testdata/golden so -update
// can replace that directory whole.
package behavior

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	inventoryv1alpha1 "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/testdata/apis/inventory/v1alpha1"
	shopv1 "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/testdata/apis/shop/v1"
	"github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/testdata/golden"
	gadgetsgen "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/testdata/golden/gadgets/v1"
	inventorygen "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/testdata/golden/inventory/v1alpha1"
	shopgen "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/testdata/golden/shop/v1"
	"github.com/apiloom/apiloom/server/endpoints"
	"github.com/apiloom/apiloom/server/registry"
)

func TestOrderFields(t *testing.T) {
	prio, express := int64(-3), true
	o := &shopv1.Order{
		ObjectMeta: metav1.ObjectMeta{Name: "o1", Namespace: "ns"},
		Spec: shopv1.OrderSpec{
			Customer: "ada", Paid: true, Quantity: 7, WeightGrams: 1200,
			Priority: &prio, Shipping: &shopv1.Shipping{Carrier: "dhl", Express: &express},
			Location: shopv1.Location{Region: "eu"},
		},
		Status: shopv1.OrderStatus{Phase: "Shipped"},
	}
	want := fields.Set{
		"metadata.name": "o1", "metadata.namespace": "ns",
		"spec.customer": "ada", "spec.paid": "true", "spec.quantity": "7",
		"spec.priority": "-3", "spec.shipping.carrier": "dhl", "spec.shipping.express": "true",
		"spec.region": "eu", "status.phase": "Shipped",
	}
	if got := shopgen.Order.Fields(o); !reflect.DeepEqual(got, want) {
		t.Errorf("Fields = %v\nwant %v", got, want)
	}

	// Unset pointers give empty values, never a panic.
	empty := &shopv1.Order{ObjectMeta: metav1.ObjectMeta{Name: "o2", Namespace: "ns"}}
	got := shopgen.Order.Fields(empty)
	for _, k := range []string{"spec.priority", "spec.shipping.carrier", "spec.shipping.express"} {
		if v, ok := got[k]; !ok || v != "" {
			t.Errorf("Fields()[%q] = %q, %v; want empty and present", k, v, ok)
		}
	}
	if len(got) != len(shopgen.Order.SelectableFields)+2 {
		t.Errorf("Fields has %d keys, want every selectable field plus name and namespace", len(got))
	}

	w := &shopv1.Warehouse{ObjectMeta: metav1.ObjectMeta{Name: "w"}}
	if got, want := shopgen.Warehouse.Fields(w), (fields.Set{"metadata.name": "w"}); !reflect.DeepEqual(got, want) {
		t.Errorf("cluster-scoped Fields = %v, want %v", got, want)
	}
}

func TestCopyStatus(t *testing.T) {
	src := &shopv1.Order{Status: shopv1.OrderStatus{Phase: "Paid", Conditions: []metav1.Condition{{Type: "Ready"}}}}
	dst := &shopv1.Order{Spec: shopv1.OrderSpec{Customer: "kept"}}
	shopgen.Order.CopyStatus(dst, src)
	src.Status.Conditions[0].Type = "Changed"
	if dst.Status.Phase != "Paid" || dst.Status.Conditions[0].Type != "Ready" || dst.Spec.Customer != "kept" {
		t.Errorf("Order.CopyStatus: dst = %+v, want a deep copy of the status only", dst)
	}

	shelfSrc := &inventoryv1alpha1.Shelf{Status: &inventoryv1alpha1.ShelfStatus{Used: []string{"a"}}}
	shelfDst := &inventoryv1alpha1.Shelf{}
	inventorygen.Shelf.CopyStatus(shelfDst, shelfSrc)
	if shelfDst.Status == shelfSrc.Status || !reflect.DeepEqual(shelfDst.Status, shelfSrc.Status) {
		t.Errorf("Shelf.CopyStatus: got %+v, want an equal copy at a new address", shelfDst.Status)
	}

	cactusDst := &inventoryv1alpha1.Cactus{}
	inventorygen.Cactus.CopyStatus(cactusDst, &inventoryv1alpha1.Cactus{Status: inventoryv1alpha1.CactusStatus{Height: 3}})
	if cactusDst.Status.Height != 3 {
		t.Errorf("Cactus.CopyStatus: height = %d, want 3", cactusDst.Status.Height)
	}

	// Without a status subresource CopyStatus leaves dst alone.
	receipt := &shopv1.Receipt{Status: shopv1.ReceiptStatus{Printed: true}}
	shopgen.Receipt.CopyStatus(receipt, &shopv1.Receipt{})
	if !receipt.Status.Printed {
		t.Error("Receipt.CopyStatus changed the status of a type without a status subresource")
	}
}

func TestSpecEqual(t *testing.T) {
	base := func() *shopv1.Order {
		return &shopv1.Order{
			ObjectMeta: metav1.ObjectMeta{Name: "o", Labels: map[string]string{"a": "b"}},
			Spec:       shopv1.OrderSpec{Customer: "ada"},
			Notes:      []string{"n"},
			Status:     shopv1.OrderStatus{Phase: "Paid"},
		}
	}
	same := base()
	same.Labels = nil
	same.Status.Phase = "Other"
	if !shopgen.Order.SpecEqual(base(), same) {
		t.Error("Order: metadata and status changes count as spec changes")
	}
	spec := base()
	spec.Spec.Customer = "bob"
	notes := base()
	notes.Notes = nil
	for name, o := range map[string]*shopv1.Order{"spec": spec, "notes": notes} {
		if shopgen.Order.SpecEqual(base(), o) {
			t.Errorf("Order: a %s change is not a spec change", name)
		}
	}

	// Receipt's status is not a subresource, so it is compared.
	r1, r2 := &shopv1.Receipt{}, &shopv1.Receipt{Status: shopv1.ReceiptStatus{Printed: true}}
	if shopgen.Receipt.SpecEqual(r1, r2) {
		t.Error("Receipt: a status change without a status subresource is not a spec change")
	}
	if !inventorygen.Cactus.SpecEqual(&inventoryv1alpha1.Cactus{}, &inventoryv1alpha1.Cactus{Status: inventoryv1alpha1.CactusStatus{Height: 1}}) {
		t.Error("Cactus: has no spec, yet SpecEqual is false")
	}
}

func TestInstall(t *testing.T) {
	var r registry.Registry
	golden.Install(&r)
	var got []string
	for _, info := range r.Infos() {
		got = append(got, info.GroupResource().String())
	}
	want := []string{
		"gadgets.gadgets.test.apiloom.dev",
		"cacti.inventory.test.apiloom.dev", "shelves.inventory.test.apiloom.dev",
		"orders.shop.test.apiloom.dev", "receipts.shop.test.apiloom.dev", "warehouses.shop.test.apiloom.dev",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("installed %q, want %q", got, want)
	}
	if r.OpenAPIDefinitions() == nil {
		t.Error("Install did not set the OpenAPI definitions")
	}
	if o := shopgen.Order.New(); o == nil || o.Name != "" {
		t.Errorf("New() = %+v, want an empty Order", o)
	}
}

// TestPrintColumns checks that the generated columns are those written, in
// order, and that the server accepts them.
func TestPrintColumns(t *testing.T) {
	var names []string
	for _, c := range shopgen.Order.PrintColumns {
		if err := c.Validate(); err != nil {
			t.Errorf("column %s: %v", c.Name, err)
		}
		names = append(names, c.Name)
	}
	if want := []string{"Customer", "Qty", "Paid", "Phase", "Ready", "Carrier", "Age"}; !reflect.DeepEqual(names, want) {
		t.Errorf("columns %q, want %q", names, want)
	}
	endpoints.NewResource(shopgen.Order, nil) // panics on a column it refuses
	if shopgen.Warehouse.PrintColumns != nil {
		t.Errorf("Warehouse has columns %+v, but no markers", shopgen.Warehouse.PrintColumns)
	}
}

// TestSchemaLiteral checks that the Go literal of Info.Schema holds exactly
// the openAPIV3Schema controller-gen wrote, back quotes in descriptions
// included.
func TestSchemaLiteral(t *testing.T) {
	b, err := os.ReadFile("../controller-gen/gadgets.test.apiloom.dev_gadgets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(b, c); err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(c.Spec.Versions[0].Schema.OpenAPIV3Schema)
	if err != nil {
		t.Fatal(err)
	}
	if got := gadgetsgen.Gadget.Schema; got != string(want) {
		t.Errorf("Info.Schema = %s\nwant %s", got, want)
	}
	if !strings.Contains(gadgetsgen.Gadget.Schema, "`required`") {
		t.Error("the description with back quotes is not in Info.Schema")
	}
}
