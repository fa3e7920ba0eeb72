package generators

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode"

	"k8s.io/gengo/v2/types"
)

// fieldGetter reads one selectable field of an object as the string a field
// selector compares against: plain Go member access found by walking JSON
// names through the struct, with a nil check for every pointer on the way.
type fieldGetter struct {
	// Key is the field-selector key, the JSONPath without its leading dot.
	Key string
	// Access is the Go expression of the field relative to "o",
	// e.g. "o.Spec.Replicas".
	Access string
	// NilChecks are the pointer expressions that must be non-nil before
	// Access can be read; the field is "" when one is nil.
	NilChecks []string
	// Deref is true when Access is itself a pointer to the value.
	Deref bool
	// Format is how the value becomes a string.
	Format valueFormat
	// Named is true when the value's type is a named type (type Phase
	// string), so it must be converted to its builtin type first.
	Named bool
	// Builtin is the value's builtin type name, e.g. "int32".
	Builtin string
	// Func, when set, computes the value: a func(*T) string of a built-in
	// kind's `fields` (builtin/apis.yaml); the other fields are unused.
	Func *types.Type
}

// valueFormat is how a selectable value is turned into a string.
type valueFormat int

const (
	formatString valueFormat = iota
	formatBool
	formatInt
	formatUint
)

// errUnsupportedField is wrapped by errors about fields a selector cannot use.
var errUnsupportedField = errors.New("unsupported selectable field")

// newFieldGetter resolves jsonPath (".spec.engine") against the struct t.
func newFieldGetter(t *types.Type, jsonPath string) (*fieldGetter, error) {
	segs, err := splitJSONPath(jsonPath)
	if err != nil {
		return nil, err
	}
	if segs[0] == "metadata" {
		return nil, fmt.Errorf("%w: metadata fields are not selectable through markers (metadata.name and metadata.namespace always are)", errUnsupportedField)
	}
	g := &fieldGetter{Key: strings.Join(segs, "."), Access: "o"}
	cur := t
	for i, seg := range segs {
		if i > 0 {
			// Reading a member of a pointer needs the pointer set.
			var ptr bool
			cur, ptr = derefAlias(cur)
			if ptr {
				g.NilChecks = append(g.NilChecks, g.Access)
			}
		}
		if cur.Kind != types.Struct {
			return nil, fmt.Errorf("%w: %s is a %s, not a struct", errUnsupportedField, "."+strings.Join(segs[:i], "."), describe(cur))
		}
		access, next, checks, err := findJSONMember(cur, seg, g.Access)
		if err != nil {
			return nil, err
		}
		g.NilChecks = append(g.NilChecks, checks...)
		g.Access, cur = access, next
	}

	if cur.Kind == types.Pointer {
		g.Deref = true
		cur = cur.Elem
	}
	if cur.Kind == types.Alias {
		g.Named = true
		cur = cur.Underlying
	}
	if cur.Kind != types.Builtin {
		return nil, fmt.Errorf("%w: %s is a %s; only strings, booleans and integers (or pointers to them) can be selected", errUnsupportedField, jsonPath, describe(cur))
	}
	g.Builtin = cur.Name.Name
	switch g.Builtin {
	case "string":
		g.Format = formatString
	case "bool":
		g.Format = formatBool
	case "int", "int8", "int16", "int32", "int64":
		g.Format = formatInt
	case "uint", "uint8", "uint16", "uint32", "uint64":
		g.Format = formatUint
	default:
		return nil, fmt.Errorf("%w: %s is a %s; only strings, booleans and integers (or pointers to them) can be selected", errUnsupportedField, jsonPath, g.Builtin)
	}
	return g, nil
}

// splitJSONPath splits ".spec.engine" into its names.
func splitJSONPath(p string) ([]string, error) {
	if !strings.HasPrefix(p, ".") {
		return nil, fmt.Errorf("%w: JSONPath must start with '.'", errUnsupportedField)
	}
	segs := strings.Split(p[1:], ".")
	for _, s := range segs {
		if s == "" || strings.ContainsAny(s, "[]*@$()?' \"") {
			return nil, fmt.Errorf("%w: JSONPath must be a plain .a.b.c path of field names", errUnsupportedField)
		}
	}
	return segs, nil
}

// findJSONMember finds the member of struct t whose JSON name is name,
// looking through inlined embedded structs the way encoding/json does. It
// returns the Go access expression from base, the member's type and the
// nil checks that embedded pointers on the way need.
func findJSONMember(t *types.Type, name, base string) (string, *types.Type, []string, error) {
	var inline []types.Member
	for _, m := range t.Members {
		jsonName, skip := jsonName(m)
		if skip {
			continue
		}
		if jsonName == "" && m.Embedded {
			inline = append(inline, m)
			continue
		}
		if jsonName == name {
			if !isExported(m.Name) {
				return "", nil, nil, fmt.Errorf("%w: %s is unexported", errUnsupportedField, m.Name)
			}
			return base + "." + m.Name, m.Type, nil, nil
		}
	}
	for _, m := range inline {
		inner, ptr := derefAlias(m.Type)
		if inner.Kind != types.Struct {
			continue
		}
		embBase := base + "." + m.Name
		access, typ, checks, err := findJSONMember(inner, name, embBase)
		if err != nil {
			continue
		}
		if ptr {
			checks = append([]string{embBase}, checks...)
		}
		return access, typ, checks, nil
	}
	return "", nil, nil, fmt.Errorf("%w: %s has no field with JSON name %q", errUnsupportedField, t.Name.Name, name)
}

// jsonName returns the member's JSON name ("" for an untagged embedded
// struct, which encoding/json inlines) and whether JSON skips it.
func jsonName(m types.Member) (string, bool) {
	tag, ok := reflect.StructTag(m.Tags).Lookup("json")
	if !ok {
		if m.Embedded {
			return "", false
		}
		return m.Name, false
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "-" && !strings.Contains(tag, ",") {
		return "", true
	}
	if name == "" && !m.Embedded {
		return m.Name, false
	}
	return name, false
}

// derefAlias strips one pointer and any named-type indirection from t.
func derefAlias(t *types.Type) (*types.Type, bool) {
	ptr := false
	if t.Kind == types.Pointer {
		ptr, t = true, t.Elem
	}
	for t.Kind == types.Alias && t.Underlying != nil && t.Underlying.Kind != types.Builtin {
		t = t.Underlying
	}
	return t, ptr
}

func describe(t *types.Type) string {
	if t.Kind == types.Builtin {
		return t.Name.Name
	}
	return strings.ToLower(string(t.Kind))
}

func isExported(name string) bool {
	for _, r := range name {
		return unicode.IsUpper(r)
	}
	return false
}

// needsFunc reports whether reading the field needs statements (nil
// checks), so it gets its own getter function rather than an expression.
func (g *fieldGetter) needsFunc() bool {
	return g.Deref || len(g.NilChecks) > 0
}

// funcName is the getter's name, e.g. orderFieldSpecPriority.
func (g *fieldGetter) funcName(r *resourceModel) string {
	var b strings.Builder
	b.WriteString(lowerFirst(r.Kind))
	b.WriteString("Field")
	for _, seg := range strings.Split(g.Key, ".") {
		b.WriteString(upperFirst(identifier(seg)))
	}
	return b.String()
}

// identifier drops the characters of s that cannot appear in a Go name.
func identifier(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
			return r
		}
		return -1
	}, s)
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
