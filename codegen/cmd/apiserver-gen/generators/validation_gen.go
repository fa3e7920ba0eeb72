package generators

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"k8s.io/gengo/v2/generator"
	"k8s.io/gengo/v2/types"
)

// Import paths of the functions the generated checks call.
const (
	fieldPkg  = "k8s.io/apimachinery/pkg/util/validation/field"
	regexpPkg = "regexp"
	utf8Pkg   = "unicode/utf8"
	slicesPkg = "slices"
	mapsPkg   = "maps"
)

// validationWriter writes the Default and Validate functions of structs,
// each struct's once per file. Names go through the raw namer so the
// imports are recorded.
type validationWriter struct {
	c       *generator.Context
	w       io.Writer
	emitted map[*structRules]bool
	err     error
}

func (g *validationWriter) raw(t *types.Type) string { return g.c.Namers["raw"].Name(t) }

func (g *validationWriter) fn(pkg, name string) string {
	return g.c.Namers["raw"].Name(g.c.Universe.Function(types.Name{Package: pkg, Name: name}))
}

func (g *validationWriter) typ(pkg, name string) string {
	return g.c.Namers["raw"].Name(g.c.Universe.Type(types.Name{Package: pkg, Name: name}))
}

func (g *validationWriter) printf(format string, args ...any) {
	if g.err == nil {
		_, g.err = fmt.Fprintf(g.w, format, args...)
	}
}

func validateFuncName(s *structRules) string { return "validate" + s.Type.Name.Name }
func defaultFuncName(s *structRules) string  { return "default" + s.Type.Name.Name }

// definitionFields are the Default and Validate lines of the Definition of
// the resource whose type has the rules root.
func (g *validationWriter) definitionFields(root *structRules) string {
	t := g.raw(root.Type)
	list := g.typ(fieldPkg, "ErrorList")
	var b strings.Builder
	if root.NeedsDefault {
		fmt.Fprintf(&b, "\tDefault: %s,\n", defaultFuncName(root))
	} else {
		fmt.Fprintf(&b, "\t// %s has no +kubebuilder:default markers.\n\tDefault: func(*%s) {},\n", root.Type.Name.Name, t)
	}
	if root.NeedsValidate {
		fmt.Fprintf(&b, "\tValidate: func(o *%s) %s { return %s(o, nil) },\n", t, list, validateFuncName(root))
	} else {
		fmt.Fprintf(&b, "\t// %s has no validation markers.\n\tValidate: func(*%s) %s { return nil },\n", root.Type.Name.Name, t, list)
	}
	return b.String()
}

// structs writes the functions of root and of every struct it reaches
// that were not written yet.
func (g *validationWriter) structs(root *structRules) error {
	for _, s := range reachable(root) {
		if g.emitted[s] {
			continue
		}
		g.emitted[s] = true
		if s.NeedsDefault {
			g.defaultFunc(s)
		}
		if s.NeedsValidate {
			g.validateFunc(s)
		}
	}
	return g.err
}

// reachable is root and every struct it reaches, in the order first met.
func reachable(root *structRules) []*structRules {
	seen := map[*structRules]bool{}
	var order []*structRules
	var walk func(s *structRules)
	walk = func(s *structRules) {
		if seen[s] {
			return
		}
		seen[s] = true
		order = append(order, s)
		for _, m := range s.Members {
			if m.Elem != nil {
				walk(m.Elem)
			}
		}
	}
	walk(root)
	return order
}

// defaultFunc writes default<Type>, which sets the +kubebuilder:default
// value of every unset member, then defaults nested structs.
func (g *validationWriter) defaultFunc(s *structRules) {
	g.printf("\n// %s sets the +kubebuilder:default values of the unset fields of o.\nfunc %s(o *%s) {\n",
		defaultFuncName(s), defaultFuncName(s), g.raw(s.Type))
	for _, m := range s.Members {
		x := "o." + m.Go
		switch {
		case m.Default != "" && m.Shape == shapeScalar:
			g.printf("\tif %s == %s {\n\t\t%s = %s\n\t}\n", x, zeroLiteral(m.Builtin), x, m.Default)
		case m.Default != "" && m.Shape == shapePtrScalar:
			g.printf("\tif %s == nil {\n\t\tv := %s(%s)\n\t\t%s = &v\n\t}\n", x, g.raw(m.Scalar), m.Default, x)
		case m.DefaultEmptyObj:
			g.printf("\tif %s == nil {\n\t\t%s = &%s{}\n\t}\n", x, x, g.raw(m.Elem.Type))
		}
		if m.Elem == nil || !m.Elem.NeedsDefault {
			continue
		}
		f := defaultFuncName(m.Elem)
		switch m.Shape {
		case shapeStruct:
			g.printf("\t%s(&%s)\n", f, x)
		case shapePtrStruct:
			g.printf("\tif %s != nil {\n\t\t%s(%s)\n\t}\n", x, f, x)
		case shapeSlice:
			if m.ElemPtr {
				g.printf("\tfor _, e := range %s {\n\t\tif e != nil {\n\t\t\t%s(e)\n\t\t}\n\t}\n", x, f)
			} else {
				g.printf("\tfor i := range %s {\n\t\t%s(&%s[i])\n\t}\n", x, f, x)
			}
		case shapeMap:
			if m.ElemPtr {
				g.printf("\tfor _, e := range %s {\n\t\tif e != nil {\n\t\t\t%s(e)\n\t\t}\n\t}\n", x, f)
			} else {
				g.printf("\tfor k, e := range %s {\n\t\t%s(&e)\n\t\t%s[k] = e\n\t}\n", x, f, x)
			}
		}
	}
	g.printf("}\n")
}

// validateFunc writes the pattern variables of s and validate<Type>,
// which returns the marker violations of o with paths under p.
func (g *validationWriter) validateFunc(s *structRules) {
	for _, m := range s.Members {
		if m.PatternVar != "" {
			g.printf("\n// %s is the +kubebuilder:validation:Pattern of %s.%s.\nvar %s = %s(%s)\n",
				m.PatternVar, s.Type.Name.Name, m.Go, m.PatternVar, g.fn(regexpPkg, "MustCompile"), quoteRaw(m.Pattern))
		}
	}
	list := g.typ(fieldPkg, "ErrorList")
	g.printf("\n// %s returns the violations of the validation markers of o,\n// with field paths under p.\nfunc %s(o *%s, p *%s) %s {\n\tvar errs %s\n",
		validateFuncName(s), validateFuncName(s), g.raw(s.Type), g.typ(fieldPkg, "Path"), list, list)
	for _, m := range s.Members {
		g.member(m)
	}
	g.printf("\treturn errs\n}\n")
}

// member writes the checks of one member.
func (g *validationWriter) member(m *memberRules) {
	x := "o." + m.Go
	path := "p"
	if m.JSON != "" {
		path = fmt.Sprintf("p.Child(%s)", strconv.Quote(m.JSON))
	}
	required := fmt.Sprintf("errs = append(errs, %s(%s, \"\"))", g.fn(fieldPkg, "Required"), path)
	switch m.Shape {
	case shapeScalar, shapePtrScalar:
		if !m.Required && !m.hasChecks() {
			return
		}
		unset, set, value := x+" == "+zeroLiteral(m.Builtin), x+" != "+zeroLiteral(m.Builtin), x
		if m.Shape == shapePtrScalar {
			unset, set, value = x+" == nil", x+" != nil", "*"+x
		}
		switch {
		case m.Required:
			g.printf("\tif %s {\n\t\t%s\n\t}", unset, required)
			if !m.hasChecks() {
				g.printf("\n")
				return
			}
			g.printf(" else {\n")
		case m.Shape == shapePtrScalar || m.OmitEmpty:
			// An omitted field is absent: only present values are checked.
			g.printf("\tif %s {\n", set)
		default:
			g.printf("\t{\n")
		}
		g.printf("\t\tv := %s\n", value)
		g.scalarChecks(m, path)
		g.printf("\t}\n")
	case shapeStruct:
		if m.Elem.NeedsValidate {
			g.printf("\terrs = append(errs, %s(&%s, %s)...)\n", validateFuncName(m.Elem), x, path)
		}
	case shapePtrStruct:
		inner := m.Elem != nil && m.Elem.NeedsValidate
		switch {
		case m.Required && inner:
			g.printf("\tif %s == nil {\n\t\t%s\n\t} else {\n\t\terrs = append(errs, %s(%s, %s)...)\n\t}\n", x, required, validateFuncName(m.Elem), x, path)
		case m.Required:
			g.printf("\tif %s == nil {\n\t\t%s\n\t}\n", x, required)
		case inner:
			g.printf("\tif %s != nil {\n\t\terrs = append(errs, %s(%s, %s)...)\n\t}\n", x, validateFuncName(m.Elem), x, path)
		}
	case shapeSlice, shapeMap:
		g.collection(m, x, path, required)
	case shapeOpaque:
		if m.Required {
			g.printf("\tif %s == nil {\n\t\t%s\n\t}\n", x, required)
		}
	}
}

// collection writes the checks of a slice or map member.
func (g *validationWriter) collection(m *memberRules, x, path, required string) {
	if m.Required {
		g.printf("\tif len(%s) == 0 {\n\t\t%s\n\t}\n", x, required)
	}
	// An empty omitempty list is absent, and an empty required one is
	// already reported: MinItems=1 then has nothing left to check.
	emptyAbsent := m.OmitEmpty || m.Required
	if m.MinItems > 1 || m.MinItems == 1 && !emptyAbsent {
		cond := fmt.Sprintf("len(%s) < %d", x, m.MinItems)
		if emptyAbsent {
			cond = fmt.Sprintf("len(%s) > 0 && %s", x, cond)
		}
		g.printf("\tif %s {\n\t\terrs = append(errs, %s(%s, len(%s), %s))\n\t}\n", cond, g.fn(fieldPkg, "Invalid"), path, x,
			strconv.Quote(fmt.Sprintf("should have at least %d items", m.MinItems)))
	}
	if m.MaxItems >= 0 {
		g.printf("\tif len(%s) > %d {\n\t\terrs = append(errs, %s(%s, len(%s), %d))\n\t}\n", x, m.MaxItems, g.fn(fieldPkg, "TooMany"), path, x, m.MaxItems)
	}
	if m.Elem == nil || !m.Elem.NeedsValidate {
		return
	}
	f := validateFuncName(m.Elem)
	elem := func(v, p string) {
		if m.ElemPtr {
			g.printf("\t\tif %s != nil {\n\t\t\terrs = append(errs, %s(%s, %s)...)\n\t\t}\n", v, f, v, p)
		} else {
			g.printf("\t\terrs = append(errs, %s(&%s, %s)...)\n", f, v, p)
		}
	}
	if m.Shape == shapeSlice {
		g.printf("\tfor i := range %s {\n", x)
		elem(x+"[i]", path+".Index(i)")
		g.printf("\t}\n")
		return
	}
	// Sorted keys keep the errors in a stable order.
	g.printf("\tfor _, k := range %s(%s(%s)) {\n", g.fn(slicesPkg, "Sorted"), g.fn(mapsPkg, "Keys"), x)
	if m.ElemPtr {
		elem(x+"[k]", path+".Key(k)")
	} else {
		g.printf("\t\te := %s[k]\n", x)
		elem("e", path+".Key(k)")
	}
	g.printf("\t}\n")
}

// scalarChecks writes the checks of the present scalar v.
func (g *validationWriter) scalarChecks(m *memberRules, path string) {
	invalid := g.fn(fieldPkg, "Invalid")
	check := func(cond, err string) {
		g.printf("\t\tif %s {\n\t\t\terrs = append(errs, %s)\n\t\t}\n", cond, err)
	}
	if m.Min != "" {
		op, msg := "<", "should be greater than or equal to "
		if m.ExclusiveMin {
			op, msg = "<=", "should be greater than "
		}
		check("v "+op+" "+m.Min, fmt.Sprintf("%s(%s, v, %s)", invalid, path, strconv.Quote(msg+m.Min)))
	}
	if m.Max != "" {
		op, msg := ">", "should be less than or equal to "
		if m.ExclusiveMax {
			op, msg = ">=", "should be less than "
		}
		check("v "+op+" "+m.Max, fmt.Sprintf("%s(%s, v, %s)", invalid, path, strconv.Quote(msg+m.Max)))
	}
	s := "v"
	if m.Named {
		s = "string(v)"
	}
	if m.MinLength >= 0 || m.MaxLength >= 0 {
		count := fmt.Sprintf("%s(%s)", g.fn(utf8Pkg, "RuneCountInString"), s)
		if m.MinLength >= 0 {
			check(fmt.Sprintf("%s < %d", count, m.MinLength), fmt.Sprintf("%s(%s, v, %s)", invalid, path,
				strconv.Quote(fmt.Sprintf("should be at least %d chars long", m.MinLength))))
		}
		if m.MaxLength >= 0 {
			check(fmt.Sprintf("%s > %d", count, m.MaxLength), fmt.Sprintf("%s(%s, %s, %d)", g.fn(fieldPkg, "TooLongCharacters"), path, s, m.MaxLength))
		}
	}
	if m.Pattern != "" {
		check(fmt.Sprintf("!%s.MatchString(%s)", m.PatternVar, s), fmt.Sprintf("%s(%s, v, %s)", invalid, path,
			strconv.Quote(fmt.Sprintf("should match '%s'", m.Pattern))))
	}
	if m.Enum != nil {
		quoted := make([]string, len(m.EnumText))
		for i, e := range m.EnumText {
			quoted[i] = strconv.Quote(e)
		}
		g.printf("\t\tswitch v {\n\t\tcase %s:\n\t\tdefault:\n\t\t\terrs = append(errs, %s(%s, v, []string{%s}))\n\t\t}\n",
			strings.Join(m.Enum, ", "), g.fn(fieldPkg, "NotSupported"), path, strings.Join(quoted, ", "))
	}
}

// zeroLiteral is the zero value of a builtin scalar type.
func zeroLiteral(builtin string) string {
	switch builtin {
	case "string":
		return `""`
	case "bool":
		return "false"
	}
	return "0"
}

// quoteRaw quotes s as a raw string when it can be one, for readable
// regular expressions.
func quoteRaw(s string) string {
	if !strings.ContainsAny(s, "`\r") {
		return "`" + s + "`"
	}
	return strconv.Quote(s)
}
