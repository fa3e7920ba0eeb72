package generators

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/gengo/v2/types"

	"github.com/apiloom/apiloom/codegen/markers"
)

// errBadFieldMarker is wrapped by errors about validation or default
// markers that do not fit the field they are written on.
var errBadFieldMarker = errors.New("bad field marker")

// shape is how a member is reached and checked.
type shape int

const (
	shapeSkip      shape = iota // nothing to check or descend into
	shapeScalar                 // string, bool or number (maybe named)
	shapePtrScalar              // pointer to one
	shapeStruct                 // struct of the API package
	shapePtrStruct              // pointer to one
	shapeSlice                  // slice (elements checked when Elem is set)
	shapeMap                    // map with string keys (values checked when Elem is set)
	shapeOpaque                 // anything else; only Required applies
)

// structRules are the checks and defaults of one struct type of the API
// package, shared by every resource that reaches it.
type structRules struct {
	Type    *types.Type
	Members []*memberRules
	// NeedsValidate and NeedsDefault say whether the generated function
	// would do anything; false ones are not generated.
	NeedsValidate, NeedsDefault bool
}

// memberRules are the checks of one member, with the marker values
// already turned into Go literals of the member's type.
type memberRules struct {
	Go        string // member name
	JSON      string // JSON name; "" for an inlined embedded struct
	OmitEmpty bool
	Shape     shape
	// Elem is the struct rules of the member (shapeStruct, shapePtrStruct)
	// or of its elements (shapeSlice, shapeMap); nil when there are none.
	Elem *structRules
	// ElemPtr is true when slice or map elements are pointers to structs.
	ElemPtr bool
	// Nilable is true when an opaque member can be nil.
	Nilable bool
	// Scalar is the scalar type (after the pointer); Builtin is its
	// builtin underlying type and Named whether it is a named type.
	Scalar  *types.Type
	Builtin string
	Named   bool

	Required                   bool
	Min, Max                   string // Go literals, "" when unset
	ExclusiveMin, ExclusiveMax bool
	MinLength, MaxLength       int64 // -1 when unset
	MinItems, MaxItems         int64 // -1 when unset
	Pattern                    string
	PatternVar                 string
	Enum                       []string // Go literals
	EnumText                   []string // the values as written, for NotSupported
	Default                    string   // Go literal, "" when unset
	DefaultEmptyObj            bool     // default {} on a pointer to a struct
}

// hasChecks reports whether a present scalar has anything to check.
func (m *memberRules) hasChecks() bool {
	return m.Min != "" || m.Max != "" || m.MinLength >= 0 || m.MaxLength >= 0 || m.Pattern != "" || m.Enum != nil
}

// validator reads the field markers of one API package's structs.
type validator struct {
	pkg     string
	structs map[*types.Type]*structRules
	// order is every struct in the order first reached, for stable output.
	order []*structRules
	// warns are the near-miss marker names found; the analyzer takes them.
	warns []string
}

func newValidator(pkg string) *validator {
	return &validator{pkg: pkg, structs: map[*types.Type]*structRules{}}
}

// rules returns the rules of struct t and everything it reaches, then
// settles which generated functions are needed.
// Every problem found is one error in the errors.Join result.
func (v *validator) rules(t *types.Type) (*structRules, error) {
	s, errs := v.structRules(t)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	v.settle()
	return s, nil
}

// settle computes NeedsValidate and NeedsDefault to a fixpoint, so
// recursive types are handled.
func (v *validator) settle() {
	for changed := true; changed; {
		changed = false
		for _, s := range v.order {
			val, def := s.NeedsValidate, s.NeedsDefault
			for _, m := range s.Members {
				if m.Required || m.hasChecks() || m.MinItems >= 0 || m.MaxItems >= 0 || m.Elem != nil && m.Elem.NeedsValidate {
					val = true
				}
				if m.Default != "" || m.DefaultEmptyObj || m.Elem != nil && m.Elem.NeedsDefault {
					def = true
				}
			}
			if val != s.NeedsValidate || def != s.NeedsDefault {
				s.NeedsValidate, s.NeedsDefault, changed = val, def, true
			}
		}
	}
}

func (v *validator) structRules(t *types.Type) (*structRules, []error) {
	if s, ok := v.structs[t]; ok {
		return s, nil
	}
	s := &structRules{Type: t}
	v.structs[t] = s
	v.order = append(v.order, s)
	var errs []error
	for _, m := range t.Members {
		name, skip := jsonName(m)
		if skip || !isExported(m.Name) && !m.Embedded {
			continue
		}
		mr, merrs := v.member(t, m, name)
		errs = append(errs, merrs...)
		if mr != nil {
			s.Members = append(s.Members, mr)
		}
	}
	return s, errs
}

// local reports whether t is a struct of the API package whose Go fields
// are its JSON fields, so the generator descends into it.
func (v *validator) local(t *types.Type) bool {
	return t.Kind == types.Struct && t.Name.Package == v.pkg && !customJSON(t)
}

// member reads one member's markers and checks them against its type.
// The errors are those of the member, each naming it, and of the structs
// it leads to.
func (v *validator) member(parent *types.Type, m types.Member, name string) (*memberRules, []error) {
	where := func(err error) error { return fmt.Errorf("%s.%s: %w", parent.Name.Name, m.Name, err) }
	f, warns, err := markers.ParseField(m.CommentLines)
	if err != nil {
		return nil, []error{where(err)}
	}
	for _, w := range warns {
		v.warns = append(v.warns, fmt.Sprintf("%s.%s: %s", parent.Name.Name, m.Name, w))
	}
	_, tag, _ := strings.Cut(reflect.StructTag(m.Tags).Get("json"), ",")
	mr := &memberRules{
		Go: m.Name, JSON: name, OmitEmpty: strings.Contains(","+tag+",", ",omitempty,"),
		MinLength: -1, MaxLength: -1, MinItems: -1, MaxItems: -1,
		Required: f.Required,
	}
	t := m.Type
	for t.Kind == types.Alias && t.Underlying != nil && t.Underlying.Kind != types.Builtin {
		t = t.Underlying
	}
	ptr := false
	if t.Kind == types.Pointer {
		ptr, t = true, t.Elem
	}
	scalar := t
	if scalar.Kind == types.Alias && scalar.Underlying != nil && scalar.Underlying.Kind == types.Builtin {
		mr.Named, scalar = true, scalar.Underlying
	}
	switch {
	case scalar.Kind == types.Builtin && (scalar.Name.Name == "string" || scalar.Name.Name == "bool" || isNumeric(scalar.Name.Name)):
		mr.Shape, mr.Scalar, mr.Builtin = shapeScalar, t, scalar.Name.Name
		if ptr {
			mr.Shape = shapePtrScalar
		}
	case v.local(t):
		mr.Shape = shapeStruct
		if ptr {
			mr.Shape = shapePtrStruct
		}
		if m.Embedded && name == "" {
			mr.JSON = "" // inlined: its fields sit at this level
		}
		var errs []error
		if mr.Elem, errs = v.structRules(t); len(errs) > 0 {
			return nil, errs
		}
	case !ptr && (t.Kind == types.Slice || t.Kind == types.Map):
		mr.Shape = shapeSlice
		if t.Kind == types.Map {
			mr.Shape = shapeMap
		}
		elem := t.Elem
		if elem.Kind == types.Pointer {
			mr.ElemPtr, elem = true, elem.Elem
		}
		keyOK := t.Kind == types.Slice || t.Key.Kind == types.Builtin && t.Key.Name.Name == "string"
		if v.local(elem) && keyOK {
			var errs []error
			if mr.Elem, errs = v.structRules(elem); len(errs) > 0 {
				return nil, errs
			}
		}
	default:
		mr.Shape = shapeOpaque
		mr.Nilable = ptr || t.Kind == types.Interface
	}
	if !f.Any() {
		if mr.Elem == nil {
			return nil, nil
		}
		return mr, nil
	}
	errs := mr.apply(f, parent, m)
	for i, e := range errs {
		errs[i] = where(e)
	}
	return mr, errs
}

// apply turns the markers f into checks, refusing those that cannot apply
// to the member's type.
func (mr *memberRules) apply(f markers.Field, parent *types.Type, m types.Member) []error {
	var errs []error
	bad := func(name, why string) {
		text := f.Texts[name]
		if text == "" {
			text = "+" + name
		}
		errs = append(errs, fmt.Errorf("%w %s: %s", errBadFieldMarker, text, why))
	}
	what := describe(m.Type)
	scalar := mr.Shape == shapeScalar || mr.Shape == shapePtrScalar
	numeric := scalar && isNumeric(mr.Builtin)
	str := scalar && mr.Builtin == "string"

	if f.Required && mr.Shape == shapeStruct {
		bad(markers.RequiredName, "a struct value is always present; make the field a pointer to require it")
	}
	if f.Required && mr.Shape == shapeOpaque && !mr.Nilable {
		bad(markers.RequiredName, "cannot tell whether a "+what+" is set; make the field a pointer to require it")
	}
	for _, c := range []struct {
		name string
		lit  *string
		dst  *string
	}{{markers.MinimumName, f.Minimum, &mr.Min}, {markers.MaximumName, f.Maximum, &mr.Max}} {
		if c.lit == nil {
			continue
		}
		if !numeric {
			bad(c.name, "applies to numbers, not "+what)
			continue
		}
		lit, err := numberLiteral(mr.Builtin, *c.lit)
		if err != nil {
			bad(c.name, err.Error())
			continue
		}
		*c.dst = lit
	}
	mr.ExclusiveMin, mr.ExclusiveMax = f.ExclusiveMinimum, f.ExclusiveMaximum

	for _, c := range []struct {
		name string
		n    *int64
		dst  *int64
		ok   bool
		kind string
	}{
		{markers.MinLengthName, f.MinLength, &mr.MinLength, str, "strings"},
		{markers.MaxLengthName, f.MaxLength, &mr.MaxLength, str, "strings"},
		{markers.MinItemsName, f.MinItems, &mr.MinItems, mr.Shape == shapeSlice, "slices"},
		{markers.MaxItemsName, f.MaxItems, &mr.MaxItems, mr.Shape == shapeSlice, "slices"},
	} {
		if c.n == nil {
			continue
		}
		if !c.ok {
			bad(c.name, "applies to "+c.kind+", not "+what)
			continue
		}
		if *c.n > math.MaxInt32 {
			bad(c.name, "too large")
			continue
		}
		*c.dst = *c.n
	}
	if mr.MinLength >= 0 && mr.MaxLength >= 0 && mr.MinLength > mr.MaxLength ||
		mr.MinItems >= 0 && mr.MaxItems >= 0 && mr.MinItems > mr.MaxItems {
		errs = append(errs, fmt.Errorf("%w: minimum above maximum", errBadFieldMarker))
	}

	if f.Pattern != nil {
		if !str {
			bad(markers.PatternName, "applies to strings, not "+what)
		} else if _, err := regexp.Compile(*f.Pattern); err != nil {
			bad(markers.PatternName, err.Error())
		} else {
			mr.Pattern = *f.Pattern
			mr.PatternVar = "pattern" + parent.Name.Name + m.Name
		}
	}

	if f.Enum != nil {
		if !scalar {
			bad(markers.EnumName, "applies to strings, numbers and booleans, not "+what)
		} else {
			for _, e := range f.Enum {
				lit, err := scalarLiteral(mr.Builtin, e)
				if err != nil {
					bad(markers.EnumName, err.Error())
					break
				}
				if slices.Contains(mr.Enum, lit) {
					bad(markers.EnumName, "value "+e+" given twice")
					break
				}
				mr.Enum, mr.EnumText = append(mr.Enum, lit), append(mr.EnumText, e)
			}
		}
	}

	if f.Default != nil {
		d := *f.Default
		switch {
		case scalar:
			lit, err := scalarLiteral(mr.Builtin, d)
			if err != nil {
				bad(markers.DefaultName, err.Error())
				break
			}
			if why := mr.refuses(d, lit); why != "" {
				bad(markers.DefaultName, "the default "+why)
				break
			}
			mr.Default = lit
		case mr.Shape == shapePtrStruct && d == "{}":
			mr.DefaultEmptyObj = true
		default:
			bad(markers.DefaultName, "only strings, numbers, booleans and {} for a pointer to a struct can be defaulted, not "+d+" for a "+what)
		}
	}
	return errs
}

// refuses says why the member's own checks reject the default value d
// (Go literal lit), or returns "".
func (mr *memberRules) refuses(d, lit string) string {
	if mr.Enum != nil {
		found := false
		for _, e := range mr.Enum {
			found = found || e == lit
		}
		if !found {
			return "is not one of the Enum values"
		}
	}
	if mr.Pattern != "" && !regexp.MustCompile(mr.Pattern).MatchString(d) {
		return "does not match the Pattern"
	}
	if isNumeric(mr.Builtin) {
		x, _ := strconv.ParseFloat(lit, 64)
		if mr.Min != "" {
			m, _ := strconv.ParseFloat(mr.Min, 64)
			if x < m || mr.ExclusiveMin && x == m {
				return "is below the Minimum"
			}
		}
		if mr.Max != "" {
			m, _ := strconv.ParseFloat(mr.Max, 64)
			if x > m || mr.ExclusiveMax && x == m {
				return "is above the Maximum"
			}
		}
	}
	n := int64(len([]rune(d)))
	if mr.Builtin == "string" && (mr.MinLength >= 0 && n < mr.MinLength || mr.MaxLength >= 0 && n > mr.MaxLength) {
		return "does not fit MinLength/MaxLength"
	}
	return ""
}

// scalarLiteral is the Go literal of s as a value of the builtin type.
func scalarLiteral(builtin, s string) (string, error) {
	switch builtin {
	case "string":
		return strconv.Quote(s), nil
	case "bool":
		b, err := strconv.ParseBool(s)
		if err != nil {
			return "", fmt.Errorf("%q does not parse as bool", s)
		}
		return strconv.FormatBool(b), nil
	}
	return numberLiteral(builtin, s)
}

// numberLiteral is the Go literal of s as a value of the numeric builtin
// type, refusing values out of the type's range.
func numberLiteral(builtin, s string) (string, error) {
	bits := 64
	for _, b := range []string{"8", "16", "32", "64"} {
		if strings.HasSuffix(builtin, b) {
			bits, _ = strconv.Atoi(b)
		}
	}
	switch {
	case strings.HasPrefix(builtin, "float"):
		x, err := strconv.ParseFloat(s, bits)
		if err != nil {
			return "", fmt.Errorf("%q does not parse as %s", s, builtin)
		}
		return strconv.FormatFloat(x, 'g', -1, bits), nil
	case strings.HasPrefix(builtin, "uint"):
		x, err := strconv.ParseUint(s, 10, bits)
		if err != nil {
			return "", fmt.Errorf("%q does not parse as %s", s, builtin)
		}
		return strconv.FormatUint(x, 10), nil
	default:
		x, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return "", fmt.Errorf("%q does not parse as %s", s, builtin)
		}
		return strconv.FormatInt(x, 10), nil
	}
}
