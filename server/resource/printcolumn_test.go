package resource

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

func TestPrintColumnValidate(t *testing.T) {
	valid := []PrintColumn{
		{Name: "Engine", Type: ColumnString, JSONPath: ".spec.engine"},
		{Name: "Replicas", Type: ColumnInteger, Format: "int32", JSONPath: ".spec.replicas", Priority: 1},
		{Name: "Age", Type: ColumnDate, JSONPath: ".metadata.creationTimestamp"},
		{Name: "Ready", Type: ColumnString, JSONPath: `.status.conditions[?(@.type=="Ready")].status`},
		{Name: "Whole", Type: ColumnString, JSONPath: "."},
	}
	for _, c := range valid {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}

	invalid := []struct {
		col  PrintColumn
		want string
	}{
		{PrintColumn{Type: ColumnString, JSONPath: ".spec.x"}, "name is required"},
		{PrintColumn{Name: "X", Type: "int", JSONPath: ".spec.x"}, `type "int" must be one of boolean, date, integer, number, string`},
		{PrintColumn{Name: "X", JSONPath: ".spec.x"}, `type "" must be one of`},
		{PrintColumn{Name: "X", Type: ColumnString, Format: "uuid", JSONPath: ".spec.x"}, `format "uuid" must be one of`},
		{PrintColumn{Name: "X", Type: ColumnString, JSONPath: "spec.x"}, "must be a simple JSON path starting with '.'"},
		{PrintColumn{Name: "X", Type: ColumnString}, "must be a simple JSON path"},
		{PrintColumn{Name: "X", Type: ColumnString, JSONPath: ".spec[.x"}, "does not parse"},
		{PrintColumn{Name: "X", Type: ColumnString, JSONPath: ".spec}{range .items[*]}{.x}{end"}, "{range} is not supported"},
	}
	for _, tt := range invalid {
		err := tt.col.Validate()
		if !errors.Is(err, ErrInvalidPrintColumn) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: err = %v, want ErrInvalidPrintColumn mentioning %q", tt.col, err, tt.want)
		}
	}
}

// TestPrintColumnCompileConcurrent evaluates one compiled path from many
// goroutines, as concurrent Table requests do; run it with -race.
func TestPrintColumnCompileConcurrent(t *testing.T) {
	c := PrintColumn{Name: "Ready", Type: ColumnString, JSONPath: `.status.conditions[?(@.type=="Ready")].status`}
	p, err := c.Compile()
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"status": map[string]any{"conditions": []any{
		map[string]any{"type": "Synced", "status": "False"},
		map[string]any{"type": "Ready", "status": "True"},
	}}}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				res, err := p.FindResults(obj)
				if err != nil || len(res) != 1 || len(res[0]) != 1 || res[0][0].Interface() != "True" {
					t.Errorf("FindResults = %v, %v", res, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if res, err := p.FindResults(map[string]any{}); err != nil || len(res) != 1 || len(res[0]) != 0 {
		t.Errorf("missing keys: FindResults = %v, %v; want one empty result", res, err)
	}
}
