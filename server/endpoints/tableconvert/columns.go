package tableconvert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/util/jsonpath"

	"github.com/apiloom/apiloom/server/resource"
)

// MetadataDocs are ObjectMeta's field descriptions, which the name and
// age columns (and the Scale's Age) carry as kube-apiserver's do.
var MetadataDocs = metav1.ObjectMeta{}.SwaggerDoc()

// defaultColumns are the columns of a resource without printer columns, as
// a CRD without them has: the name and the age. kubectl prints a "date"
// column's cell as it comes, so the cell is already the human-readable age.
var defaultColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: MetadataDocs["name"]},
	{Name: "Age", Type: "date", Description: MetadataDocs["creationTimestamp"]},
}

// Columns renders a resource's Table cells. With printer columns it
// behaves like kube-apiserver's table convertor for a CRD's
// additionalPrinterColumns: the name, then each column's JSONPath
// evaluated on the object's unstructured form. Immutable after
// NewColumns and safe for concurrent use.
type Columns struct {
	// defs are the column definitions, the name first.
	defs []metav1.TableColumnDefinition
	// paths are the compiled JSONPaths of defs[1:]; nil for the default
	// columns. Compile guarantees that evaluating them changes nothing.
	paths []*jsonpath.JSONPath
	// gvk fills in kind and apiVersion, which stored objects leave empty,
	// so that columns on .kind or .apiVersion show what clients see.
	gvk schema.GroupVersionKind
	// keepManagedFields is true when a column reads metadata.managedFields;
	// otherwise they are left out of the conversion, which they would
	// dominate.
	keepManagedFields bool
	// custom, when set, renders the cells of the kind's own printer
	// (printer.go).
	custom func(obj resource.Object, now time.Time) []any
}

// NewColumns compiles the printer columns of info.
func NewColumns(info *resource.Info) (*Columns, error) {
	c := &Columns{gvk: info.GroupVersionKind()}
	if len(info.PrintColumns) == 0 {
		c.defs = defaultColumns
		return c, nil
	}
	c.defs = make([]metav1.TableColumnDefinition, 1, 1+len(info.PrintColumns))
	c.defs[0] = defaultColumns[0]
	for i := range info.PrintColumns {
		col := &info.PrintColumns[i]
		p, err := col.Compile()
		if err != nil {
			return nil, err
		}
		desc := col.Description
		if desc == "" {
			desc = "Printer column (in JSONPath format): " + col.JSONPath
		}
		c.paths = append(c.paths, p)
		c.defs = append(c.defs, metav1.TableColumnDefinition{
			Name: col.Name, Type: col.Type, Format: col.Format, Description: desc, Priority: col.Priority,
		})
		c.keepManagedFields = c.keepManagedFields || mayReadManagedFields(col.JSONPath)
	}
	return c, nil
}

// Definitions are the column definitions of a Table, the name first.
func (c *Columns) Definitions() []metav1.TableColumnDefinition { return c.defs }

// mayReadManagedFields reports whether the JSONPath p could find
// metadata.managedFields: it names them, or starts at the root or at
// metadata itself, or uses wildcards or recursive descent.
func mayReadManagedFields(p string) bool {
	if strings.Contains(p, "managedFields") || strings.Contains(p, "..") || strings.ContainsAny(p, "*}") {
		return true
	}
	rest := strings.TrimPrefix(p, ".")
	end := strings.IndexAny(rest, ".[")
	if end < 0 {
		return rest == "" || rest == "metadata"
	}
	switch rest[:end] {
	case "":
		return true
	case "metadata":
		return rest[end] == '['
	}
	return false
}

// Cells returns obj's row cells. now is the time ages are measured to; buf
// is scratch space a Table reuses across its rows.
func (c *Columns) Cells(obj resource.Object, now time.Time, buf *bytes.Buffer) ([]any, error) {
	if c.custom != nil {
		return c.custom(obj, now), nil
	}
	cells := make([]any, 1, len(c.defs))
	cells[0] = obj.GetName()
	if c.paths == nil {
		return append(cells, age(obj.GetCreationTimestamp(), now)), nil
	}
	content, err := c.unstructured(obj)
	if err != nil {
		return nil, err
	}
	for i, p := range c.paths {
		cells = append(cells, c.cell(p, c.defs[i+1].Type, content, now, buf))
	}
	return cells, nil
}

// cell evaluates one column. As upstream, a path that finds nothing, or a
// value that does not fit the column's type, is an empty (nil) cell; only
// the first value a path finds is shown.
func (c *Columns) cell(p *jsonpath.JSONPath, typ string, content map[string]any, now time.Time, buf *bytes.Buffer) any {
	results, err := p.FindResults(content)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return nil
	}
	value := results[0][0].Interface()
	if typ != resource.ColumnString {
		return typedCell(typ, value, now)
	}
	// A string column prints any value as kubectl's JSONPath output would:
	// scalars as text, maps and lists as JSON.
	buf.Reset()
	if err := p.PrintResults(buf, []reflect.Value{reflect.ValueOf(value)}); err != nil {
		return nil
	}
	return buf.String()
}

// typedCell converts a JSON value for a column of type typ, or returns nil
// when it does not fit.
func typedCell(typ string, value any, now time.Time) any {
	switch typ {
	case resource.ColumnInteger:
		switch v := value.(type) {
		case int64:
			return v
		case float64:
			return int64(v)
		case json.Number:
			if i, err := v.Int64(); err == nil {
				return i
			}
		}
	case resource.ColumnNumber:
		switch v := value.(type) {
		case int64:
			return float64(v)
		case float64:
			return v
		case json.Number:
			if f, err := v.Float64(); err == nil {
				return f
			}
		}
	case resource.ColumnBoolean:
		if b, ok := value.(bool); ok {
			return b
		}
	case resource.ColumnDate:
		if s, ok := value.(string); ok {
			var t metav1.Time
			if err := t.UnmarshalQueryParameter(s); err != nil {
				return "<invalid>"
			}
			return age(t, now)
		}
	}
	return nil
}

// age is the human-readable age of a timestamp, as kubectl shows it.
func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// unstructured is obj's content as JSON-shaped maps for JSONPath. Unless a
// column needs them, managedFields are left out: the converter would turn
// each entry's field set into maps, the most expensive part of most
// objects. obj itself is never modified.
func (c *Columns) unstructured(obj resource.Object) (map[string]any, error) {
	var target any = obj
	if !c.keepManagedFields && len(obj.GetManagedFields()) > 0 {
		v := reflect.ValueOf(obj).Elem()
		cp := reflect.New(v.Type())
		cp.Elem().Set(v) // a shallow copy: its ObjectMeta is its own
		cp.Interface().(metav1.Object).SetManagedFields(nil)
		target = cp.Interface()
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(target)
	if err != nil {
		return nil, fmt.Errorf("printer columns: %w", err)
	}
	content["apiVersion"], content["kind"] = c.gvk.GroupVersion().String(), c.gvk.Kind
	return content, nil
}
