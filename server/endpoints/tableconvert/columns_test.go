package tableconvert

import (
	"bytes"
	"reflect"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apiloom/apiloom/server/resource"
)

// printed has a field of every shape a printer column meets.
type printed struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              printedSpec `json:"spec"`
}

type printedSpec struct {
	Name    string            `json:"name,omitempty"`
	Count   int32             `json:"count,omitempty"`
	Ratio   float64           `json:"ratio,omitempty"`
	Enabled *bool             `json:"enabled,omitempty"`
	Started *metav1.Time      `json:"started,omitempty"`
	When    string            `json:"when,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	Items   []string          `json:"items,omitempty"`
	Null    *string           `json:"null"`
}

func (p *printed) DeepCopyObject() runtime.Object {
	out := *p
	p.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

var columnsNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func printedInfo(cols ...resource.PrintColumn) *resource.Info {
	return &resource.Info{Group: "test.apiloom.dev", Version: "v1", Kind: "Printed", PrintColumns: cols}
}

func newPrinted() *printed {
	enabled := true
	started := metav1.NewTime(columnsNow.Add(-5 * time.Minute))
	return &printed{
		ObjectMeta: metav1.ObjectMeta{
			Name: "p", CreationTimestamp: metav1.NewTime(columnsNow.Add(-49 * time.Hour)),
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply,
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:name":{}}}`)}}},
		},
		Spec: printedSpec{
			Name: "alpha", Count: 3, Ratio: 1.5, Enabled: &enabled, Started: &started, When: "yesterday",
			Labels: map[string]string{"a": "b"}, Items: []string{"x", "y"},
		},
	}
}

func TestColumnsCells(t *testing.T) {
	tests := []struct {
		col  resource.PrintColumn
		want any
	}{
		{resource.PrintColumn{Name: "Name", Type: "string", JSONPath: ".spec.name"}, "alpha"},
		{resource.PrintColumn{Name: "Count", Type: "integer", JSONPath: ".spec.count"}, int64(3)},
		{resource.PrintColumn{Name: "CountNum", Type: "number", JSONPath: ".spec.count"}, float64(3)},
		{resource.PrintColumn{Name: "CountText", Type: "string", JSONPath: ".spec.count"}, "3"},
		{resource.PrintColumn{Name: "RatioInt", Type: "integer", JSONPath: ".spec.ratio"}, int64(1)},
		{resource.PrintColumn{Name: "Ratio", Type: "number", JSONPath: ".spec.ratio"}, 1.5},
		{resource.PrintColumn{Name: "Enabled", Type: "boolean", JSONPath: ".spec.enabled"}, true},
		{resource.PrintColumn{Name: "EnabledText", Type: "string", JSONPath: ".spec.enabled"}, "true"},
		{resource.PrintColumn{Name: "Started", Type: "date", JSONPath: ".spec.started"}, "5m"},
		{resource.PrintColumn{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}, "2d1h"},
		{resource.PrintColumn{Name: "When", Type: "date", JSONPath: ".spec.when"}, "<invalid>"},
		{resource.PrintColumn{Name: "Labels", Type: "string", JSONPath: ".spec.labels"}, `{"a":"b"}`},
		{resource.PrintColumn{Name: "Items", Type: "string", JSONPath: ".spec.items"}, `["x","y"]`},
		{resource.PrintColumn{Name: "Second", Type: "string", JSONPath: ".spec.items[1]"}, "y"},
		{resource.PrintColumn{Name: "Each", Type: "string", JSONPath: ".spec.items[*]"}, "x"},
		{resource.PrintColumn{Name: "Kind", Type: "string", JSONPath: ".kind"}, "Printed"},
		{resource.PrintColumn{Name: "API", Type: "string", JSONPath: ".apiVersion"}, "test.apiloom.dev/v1"},
		{resource.PrintColumn{Name: "Manager", Type: "string", JSONPath: ".metadata.managedFields[0].manager"}, "kubectl"},
		// What does not fit the column's type, or is not there, is empty.
		{resource.PrintColumn{Name: "NameInt", Type: "integer", JSONPath: ".spec.name"}, nil},
		{resource.PrintColumn{Name: "CountBool", Type: "boolean", JSONPath: ".spec.count"}, nil},
		{resource.PrintColumn{Name: "NameDate", Type: "date", JSONPath: ".spec.count"}, nil},
		{resource.PrintColumn{Name: "Missing", Type: "string", JSONPath: ".spec.nope"}, nil},
		{resource.PrintColumn{Name: "MissingDeep", Type: "integer", JSONPath: ".status.a.b"}, nil},
		{resource.PrintColumn{Name: "OutOfRange", Type: "string", JSONPath: ".spec.items[5]"}, nil},
		{resource.PrintColumn{Name: "NullInt", Type: "integer", JSONPath: ".spec.null"}, nil},
		// A null in a string column prints as JSONPath prints it.
		{resource.PrintColumn{Name: "NullText", Type: "string", JSONPath: ".spec.null"}, "<no value>"},
	}
	cols := make([]resource.PrintColumn, len(tests))
	for i, tt := range tests {
		cols[i] = tt.col
	}
	c, err := NewColumns(printedInfo(cols...))
	if err != nil {
		t.Fatal(err)
	}
	obj := newPrinted()
	before := obj.DeepCopyObject()
	var buf bytes.Buffer
	cells, err := c.Cells(obj, columnsNow, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 1+len(tests) || cells[0] != "p" {
		t.Fatalf("cells = %#v, want the name and %d more", cells, len(tests))
	}
	for i, tt := range tests {
		if got := cells[i+1]; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("column %s (%s %s) = %#v, want %#v", tt.col.Name, tt.col.Type, tt.col.JSONPath, got, tt.want)
		}
	}
	if !reflect.DeepEqual(obj, before) {
		t.Error("cells modified the object")
	}
}

func TestColumnsDefinitions(t *testing.T) {
	c, err := NewColumns(printedInfo(
		resource.PrintColumn{Name: "Name", Type: "string", JSONPath: ".spec.name", Description: "The name."},
		resource.PrintColumn{Name: "Count", Type: "integer", Format: "int32", JSONPath: ".spec.count", Priority: 1},
	))
	if err != nil {
		t.Fatal(err)
	}
	want := []metav1.TableColumnDefinition{
		defaultColumns[0],
		{Name: "Name", Type: "string", Description: "The name."},
		{Name: "Count", Type: "integer", Format: "int32", Priority: 1, Description: "Printer column (in JSONPath format): .spec.count"},
	}
	if !reflect.DeepEqual(c.defs, want) {
		t.Fatalf("defs = %+v\nwant %+v", c.defs, want)
	}

	// Without printer columns: the name and the age.
	c, err = NewColumns(printedInfo())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.defs, defaultColumns) {
		t.Fatalf("default defs = %+v", c.defs)
	}
	var buf bytes.Buffer
	cells, err := c.Cells(newPrinted(), columnsNow, &buf)
	if err != nil || !reflect.DeepEqual(cells, []any{"p", "2d1h"}) {
		t.Fatalf("default cells = %#v, %v", cells, err)
	}
	cells, err = c.Cells(&printed{ObjectMeta: metav1.ObjectMeta{Name: "new"}}, columnsNow, &buf)
	if err != nil || !reflect.DeepEqual(cells, []any{"new", "<unknown>"}) {
		t.Fatalf("cells without a creation time = %#v, %v", cells, err)
	}

	if _, err := NewColumns(printedInfo(resource.PrintColumn{Name: "Bad", Type: "text", JSONPath: ".spec.name"})); err == nil {
		t.Fatal("newColumns accepted an invalid column")
	}
}

func TestMayReadManagedFields(t *testing.T) {
	for p, want := range map[string]bool{
		".spec.a":                         false,
		".status.conditions[0].type":      false,
		".metadata.labels":                false,
		".metadata.creationTimestamp":     false,
		".metadata":                       true,
		".metadata['managedFields']":      true,
		".metadata.managedFields":         true,
		".":                               true,
		"..manager":                       true,
		".metadata.*":                     true,
		".spec.a}{.metadata":              true,
		"['metadata']":                    true,
		".data":                           false,
		".spec.items[?(@.name==\"x\")].v": false,
	} {
		if got := mayReadManagedFields(p); got != want {
			t.Errorf("mayReadManagedFields(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestColumnsConcurrent renders one shared object from many goroutines, as
// concurrent requests do (the watch cache hands out shared objects); run it
// with -race.
func TestColumnsConcurrent(t *testing.T) {
	c, err := NewColumns(printedInfo(
		resource.PrintColumn{Name: "Name", Type: "string", JSONPath: ".spec.name"},
		resource.PrintColumn{Name: "Second", Type: "string", JSONPath: ".spec.items[1]"},
		resource.PrintColumn{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
	))
	if err != nil {
		t.Fatal(err)
	}
	obj := newPrinted()
	want := []any{"p", "alpha", "y", "2d1h"}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			var buf bytes.Buffer
			for range 50 {
				cells, err := c.Cells(obj, columnsNow, &buf)
				if err != nil || !reflect.DeepEqual(cells, want) {
					t.Errorf("cells = %#v, %v; want %#v", cells, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
