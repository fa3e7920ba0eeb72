package endpoints

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/endpoints/tableconvert"
	"github.com/apiloom/apiloom/server/resource"
)

const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"

// TestTablePrintColumns serves Gadget, which has printer columns, as
// kubectl get asks for it: lists, single objects and watches.
func TestTablePrintColumns(t *testing.T) {
	e := newEnv(t, false)
	for _, body := range []string{
		`{"metadata":{"name":"g1"},"spec":{"zone":"eu","ports":[8080,9090],"tags":["a","b"]}}`,
		`{"metadata":{"name":"g2"}}`,
	} {
		if r := e.do("POST", gadgetsPath, "application/json", body); r.code != http.StatusCreated {
			t.Fatalf("create: %d %s", r.code, r.body)
		}
	}
	wantDefs := []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: tableconvert.MetadataDocs["name"]},
		{Name: "Zone", Type: "string", Description: "Printer column (in JSONPath format): .spec.zone"},
		{Name: "Port", Type: "integer", Description: "The first port."},
		{Name: "Tags", Type: "string", Priority: 1, Description: "Printer column (in JSONPath format): .spec.tags"},
		{Name: "Age", Type: "date", Description: "Printer column (in JSONPath format): .metadata.creationTimestamp"},
	}
	// checkRow checks a row's cells; the age, measured against the real
	// clock, only has to look like one.
	checkRow := func(t *testing.T, row metav1.TableRow, want ...any) {
		t.Helper()
		age, ok := row.Cells[len(row.Cells)-1].(string)
		if !ok || !strings.HasSuffix(age, "s") {
			t.Errorf("age cell %#v, want a few seconds", row.Cells[len(row.Cells)-1])
		}
		if got := row.Cells[:len(row.Cells)-1]; !reflect.DeepEqual(got, want) {
			t.Errorf("cells %#v, want %#v", got, want)
		}
	}

	t.Run("list", func(t *testing.T) {
		var tbl metav1.Table
		decodeJSON(t, e.do("GET", gadgetsPath, "", "", "Accept", tableAccept).body, &tbl)
		if !reflect.DeepEqual(tbl.ColumnDefinitions, wantDefs) {
			t.Fatalf("columns %+v\nwant %+v", tbl.ColumnDefinitions, wantDefs)
		}
		if len(tbl.Rows) != 2 || tbl.ResourceVersion == "" {
			t.Fatalf("table %+v", tbl)
		}
		// JSON numbers decode as float64; nil cells are JSON nulls.
		checkRow(t, tbl.Rows[0], "g1", "eu", float64(8080), `["a","b"]`)
		checkRow(t, tbl.Rows[1], "g2", nil, nil, nil)
		if !strings.Contains(string(tbl.Rows[0].Object.Raw), `"kind":"PartialObjectMetadata"`) {
			t.Errorf("row object %s", tbl.Rows[0].Object.Raw)
		}
	})

	t.Run("get", func(t *testing.T) {
		var tbl metav1.Table
		decodeJSON(t, e.do("GET", gadgetsPath+"/g1?includeObject=Object", "", "", "Accept", tableAccept).body, &tbl)
		if len(tbl.ColumnDefinitions) != len(wantDefs) || len(tbl.Rows) != 1 {
			t.Fatalf("table %+v", tbl)
		}
		checkRow(t, tbl.Rows[0], "g1", "eu", float64(8080), `["a","b"]`)
		if !strings.Contains(string(tbl.Rows[0].Object.Raw), `"kind":"Gadget"`) {
			t.Errorf("row object %s", tbl.Rows[0].Object.Raw)
		}
	})

	t.Run("watch", func(t *testing.T) {
		s := e.watch(gadgetsPath+"?watch=true&resourceVersion=0", "Accept", tableAccept)
		for i, name := range []string{"g1", "g2"} {
			var tbl metav1.Table
			decodeJSON(t, s.next().Object.Raw, &tbl)
			if (i == 0) != (len(tbl.ColumnDefinitions) == len(wantDefs)) || len(tbl.Rows) != 1 || tbl.Rows[0].Cells[0] != name {
				t.Fatalf("event %d: %+v", i, tbl)
			}
			if len(tbl.Rows[0].Cells) != len(wantDefs) {
				t.Fatalf("event %d: cells %#v", i, tbl.Rows[0].Cells)
			}
		}
	})
}

func TestNewResourcePanicsOnInvalidColumn(t *testing.T) {
	def := gadgetDefinition()
	def.PrintColumns = []resource.PrintColumn{{Name: "Zone", Type: "string", JSONPath: "spec.zone"}}
	defer func() {
		if recover() == nil {
			t.Fatal("NewResource accepted an invalid printer column")
		}
	}()
	NewResource(def, nil)
}
