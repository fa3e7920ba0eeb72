package generators

import (
	"fmt"
	"strings"

	"k8s.io/gengo/v2/types"

	"github.com/apiloom/apiloom/codegen/markers"
	"github.com/apiloom/apiloom/server/resource"
)

// printColumns validates the +kubebuilder:printcolumn markers of t with the
// check the server applies at start-up (resource.PrintColumn.Validate), so
// a column the server would refuse is never generated. A column that can
// only ever be empty (its plain path names no field of t, or the field
// cannot fit the column's type) is legal, as in a CRD, and only warned of.
func (a *analyzer) printColumns(t *types.Type, cols []markers.PrintColumn) ([]resource.PrintColumn, error) {
	out := make([]resource.PrintColumn, 0, len(cols))
	names := map[string]bool{}
	for _, m := range cols {
		c := resource.PrintColumn{
			Name: m.Name, Type: m.Type, Format: m.Format, Description: m.Description,
			Priority: m.Priority, JSONPath: m.JSONPath,
		}
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", m.Text, err)
		}
		if names[strings.ToUpper(c.Name)] || strings.EqualFold(c.Name, "Name") {
			a.warnf("%s: %s: kubectl will show two %s columns", t.Name, m.Text, strings.ToUpper(c.Name))
		}
		names[strings.ToUpper(c.Name)] = true
		if why := columnMismatch(t, c); why != "" {
			a.warnf("%s: %s: %s; the column will always be empty", t.Name, m.Text, why)
		}
		out = append(out, c)
	}
	return out, nil
}

// columnMismatch explains why column c can never show a value of t, or
// returns "". Only plain .a.b.c paths are checked; where the JSON shape is
// not the Go shape (maps, interfaces, types with their own JSON encoding)
// the check stops and trusts the path.
func columnMismatch(t *types.Type, c resource.PrintColumn) string {
	segs, err := splitJSONPath(c.JSONPath)
	if err != nil {
		return "" // filters, indexes, wildcards: not checked
	}
	cur := t
	for i, seg := range segs {
		cur = derefNamed(cur)
		if cur.Kind != types.Struct {
			if opaque(cur) {
				return ""
			}
			return fmt.Sprintf("%s is a %s, not an object", "."+strings.Join(segs[:i], "."), describe(cur))
		}
		if customJSON(cur) {
			return ""
		}
		_, next, _, err := findJSONMember(cur, seg, "o")
		if err != nil {
			return fmt.Sprintf("%s has no field %q", "."+strings.Join(segs[:i], "."), seg)
		}
		cur = next
	}
	return typeMismatch(derefNamed(cur), c.Type)
}

// typeMismatch explains why a value of Go type leaf never renders in a
// column of type typ (the server gives such cells no value), or returns "".
func typeMismatch(leaf *types.Type, typ string) string {
	if opaque(leaf) || customJSON(leaf) && !isTime(leaf) {
		return ""
	}
	var ok bool
	switch typ {
	case resource.ColumnString:
		return ""
	case resource.ColumnInteger, resource.ColumnNumber:
		ok = leaf.Kind == types.Builtin && isNumeric(leaf.Name.Name)
	case resource.ColumnBoolean:
		ok = leaf.Kind == types.Builtin && leaf.Name.Name == "bool"
	case resource.ColumnDate:
		ok = isTime(leaf) || leaf.Kind == types.Builtin && leaf.Name.Name == "string"
	}
	if ok {
		return ""
	}
	return fmt.Sprintf("type %s cannot show a %s value", typ, describe(leaf))
}

// derefNamed strips pointers and named types down to what JSON sees,
// stopping at named structs (whose methods matter).
func derefNamed(t *types.Type) *types.Type {
	for {
		switch {
		case t.Kind == types.Pointer:
			t = t.Elem
		case t.Kind == types.Alias && t.Underlying != nil:
			t = t.Underlying
		default:
			return t
		}
	}
}

// opaque reports whether JSON values of t can have any shape.
func opaque(t *types.Type) bool {
	return t.Kind == types.Map || t.Kind == types.Interface
}

// customJSON reports whether t encodes itself, so its Go fields say
// nothing about its JSON (metav1.Time, resource.Quantity, IntOrString).
func customJSON(t *types.Type) bool {
	_, ok := t.Methods["MarshalJSON"]
	return ok
}

func isTime(t *types.Type) bool {
	return t.Name.Package == metav1Pkg && (t.Name.Name == "Time" || t.Name.Name == "MicroTime")
}

func isNumeric(builtin string) bool {
	switch builtin {
	case "int", "int8", "int16", "int32", "int64",
		"uint", "uint8", "uint16", "uint32", "uint64",
		"float32", "float64":
		return true
	}
	return false
}
