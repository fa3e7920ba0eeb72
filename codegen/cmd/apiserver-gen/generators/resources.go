package generators

import (
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/gengo/v2/generator"
	"k8s.io/gengo/v2/namer"
	"k8s.io/gengo/v2/types"

	"github.com/apiloom/apiloom/server/resource"
)

// Import paths the generated code refers to.
const (
	resourcePkg = "github.com/apiloom/apiloom/server/resource"
	registryPkg = "github.com/apiloom/apiloom/server/registry"
	equalityPkg = "k8s.io/apimachinery/pkg/api/equality"
	fieldsPkg   = "k8s.io/apimachinery/pkg/fields"
)

// resourcesFilename is the file written into each group-version package.
const resourcesFilename = "zz_generated.resources.go"

// definitionTemplate opens one resource's Definition and states its Info.
const definitionTemplate = `
// $.var$ defines the $.plural$ resource of $.groupVersion$ (kind $.kind$).
var $.var$ = &$.Definition|raw$[*$.type|raw$]{
	Info: $.Info|raw${
		Group:            $.info.Group$,
		Version:          $.info.Version$,
		Kind:             $.info.Kind$,
		ListKind:         $.info.ListKind$,
		Plural:           $.info.Plural$,
		Singular:         $.info.Singular$,
		Namespaced:       $.info.Namespaced$,
		ShortNames:       $.info.ShortNames$,
		Categories:       $.info.Categories$,
		HasStatus:        $.info.HasStatus$,
		SelectableFields: $.info.SelectableFields$,
		PrintColumns:     $.info.PrintColumns$,
		OpenAPIName:      $.info.OpenAPIName$,
		Schema:           $.info.Schema$,
`

// scaleTemplate states Info.Scale, for a resource with a scale subresource.
const scaleTemplate = `		Scale: &$.ScaleInfo|raw${
			SpecReplicasPath:   $.specPath$,
			StatusReplicasPath: $.statusPath$,
			LabelSelectorPath:  $.selectorPath$,
		},
`

// storageVersionTemplate states Info.StorageVersion, for a version stored
// as another.
const storageVersionTemplate = `		StorageVersion: $.storageVersion$,
`

// storageAPIVersionTemplate states Info.StorageAPIVersion, for a version
// stored as a kind of another API group.
const storageAPIVersionTemplate = `		StorageAPIVersion: $.storageAPIVersion$,
`

// ttlTemplate states Info.TTL, for a kind whose objects expire.
const ttlTemplate = `		TTL: $.seconds$ * $.Second|raw$,
`

// builtInTemplate states Info.BuiltIn, for a kind of builtin/apis.yaml.
const builtInTemplate = `		BuiltIn: true,
`

// strategyTemplate states Info.Strategy, for a kind whose strategy is
// not a custom resource's.
const strategyTemplate = `		Strategy: $.Strategy|raw${
			UnconditionalUpdate:   $.unconditionalUpdate$,
			UntrackedGeneration:   $.untrackedGeneration$,
			StatusUpdatesMetadata: $.statusUpdatesMetadata$,
			DeleteAnswersStatus:   $.deleteAnswersStatus$,
		},
`

// hasFinalizeTemplate states Info.HasFinalize, for a kind with a finalize
// lifecycle.
const hasFinalizeTemplate = `		HasFinalize: true,
`

// hookTemplate states one hook of a built-in kind (Default, Prepare,
// Finalize, ValidateName, ValidateStatus).
const hookTemplate = `	$.field$: $.hook|raw$,
`

// hooksOpenTemplate opens Hooks, for a kind with hooks in its hooks
// package; hooksMethodTemplate wires one and hooksCloseTemplate ends them.
const (
	hooksOpenTemplate = `	Hooks: &$.Hooks|raw$[*$.type|raw$]{
`
	hooksMethodTemplate = `		$.method$: $.hooksVar$.$.method$,
`
	hooksCloseTemplate = `	},
`
)

// hooksVarTemplate declares the value whose methods are a kind's hooks.
const hooksVarTemplate = `
// $.hooksVar$ holds the hooks of $.kind$: the methods of $.hooksType|raw$.
var $.hooksVar$ $.hooksType|raw$
`

// hooksVarName is the variable holding r's hooks type.
func hooksVarName(r *resourceModel) string {
	return strings.ToLower(r.Kind[:1]) + r.Kind[1:] + "Hooks"
}

// validateTemplate states Validate, for a kind with validation rules of
// its own (a built-in kind's).
const validateTemplate = `	Validate: $.validate|raw$,
`

// printerTemplate states Printer, for a kind with its own Table (a
// built-in kind's).
const printerTemplate = `	Printer: $.printer|raw$,
`

// definitionInfoCloseTemplate ends the Info and states New.
const definitionInfoCloseTemplate = `	},
	New: func() *$.type|raw$ { return new($.type|raw$) },
`

// fieldsInlineTemplate is Fields for a resource with only metadata fields.
const fieldsInlineTemplate = `	Fields: func(o *$.type|raw$) $.Set|raw$ { return $.ObjectFields|raw$(o, $.namespaced$) },
`

// fieldsRefTemplate is Fields for a resource with selectable fields.
const fieldsRefTemplate = `	Fields: $.fieldsFunc$,
`

// copyStatusTemplates are CopyStatus, by statusCopy.
var copyStatusTemplates = map[statusCopy]string{
	copyNone: `	// $.kind$ has no status subresource.
	CopyStatus: func(_, _ *$.type|raw$) {},
`,
	copyDeepInto: `	CopyStatus: func(dst, src *$.type|raw$) { src.Status.DeepCopyInto(&dst.Status) },
`,
	copyDeepPointer: `	CopyStatus: func(dst, src *$.type|raw$) { dst.Status = src.Status.DeepCopy() },
`,
	copyAssign: `	CopyStatus: func(dst, src *$.type|raw$) { dst.Status = src.Status },
`,
}

// specEqualTrueTemplate is SpecEqual for a type with nothing but metadata
// (and status).
const specEqualTrueTemplate = `	// $.kind$ has no fields outside metadata and status.
	SpecEqual: func(_, _ *$.type|raw$) bool { return true },
`

// specEqualOpenTemplate starts SpecEqual; specEqualMemberTemplate compares
// one member and specEqualCloseTemplate ends the Definition.
const (
	specEqualOpenTemplate = `	SpecEqual: func(a, b *$.type|raw$) bool {
		return `
	specEqualMemberTemplate = `$.Semantic|raw$.DeepEqual(a.$.member$, b.$.member$)`
	specEqualCloseTemplate  = `
	},
`
)

// fieldsFuncTemplate opens a resource's Fields function; fieldEntryTemplate
// adds one selectable field and fieldsFuncCloseTemplate ends it.
const (
	fieldsFuncTemplate = `
// $.fieldsFunc$ returns the field-selector fields of the $.kind$ o.
func $.fieldsFunc$(o *$.type|raw$) $.Set|raw$ {
	f := $.ObjectFields|raw$(o, $.namespaced$)
`
	fieldEntryTemplate = `	f[$.key$] = $.value$
`
	fieldsFuncCloseTemplate = `	return f
}
`
)

// getterTemplate reads a selectable field that sits behind pointers.
const getterTemplate = `
// $.func$ returns .$.key$ of the $.kind$ o, or "" when it is unset.
func $.func$(o *$.type|raw$) string {
	if $.unset$ {
		return ""
	}
	return $.value$
}
`

// installTemplate opens a group-version's Install; installEntryTemplate
// registers one resource.
const (
	installTemplate = `
// Install registers every $.groupVersion$ resource with r.
func Install(r *$.Registry|raw$) {
`
	installEntryTemplate = `	$.Register|raw$(r, $.var$)
`
	// installConvertedTemplate registers a version stored as another,
	// with the conversions conversion-gen named.
	installConvertedTemplate = `	$.RegisterConverted|raw$(r, $.var$, $.Conversion|raw$[*$.type|raw$, *$.storageType|raw$]{
		Storage: $.storageDef|raw$,
		ToStorage: func(in *$.type|raw$, out *$.storageType|raw$) error {
			return $.toStorage|raw$(in, out, nil)
		},
		FromStorage: func(in *$.storageType|raw$, out *$.type|raw$) error {
			return $.fromStorage|raw$(in, out, nil)
		},
$- if .fieldLabels$
		FieldLabels: map[string]string{
$- range .fieldLabels$
			$.$,
$- end$
		},
$- end$
	})
`
)

// resourcesGenerator writes zz_generated.resources.go for one group-version.
type resourcesGenerator struct {
	generator.GoGenerator
	gv        *groupVersion
	outputPkg string
	imports   namer.ImportTracker
	byType    map[*types.Type]*resourceModel
}

var _ generator.Generator = (*resourcesGenerator)(nil)

func newResourcesGenerator(gv *groupVersion, outputPkg string) *resourcesGenerator {
	g := &resourcesGenerator{
		GoGenerator: generator.GoGenerator{OutputFilename: resourcesFilename},
		gv:          gv,
		outputPkg:   outputPkg,
		imports:     generator.NewImportTrackerForPackage(outputPkg),
		byType:      map[*types.Type]*resourceModel{},
	}
	for _, r := range gv.Resources {
		g.byType[r.Type] = r
	}
	return g
}

// Filter keeps the group-version's resource types.
func (g *resourcesGenerator) Filter(_ *generator.Context, t *types.Type) bool {
	return g.byType[t] != nil
}

// Namers makes "raw" qualify names from other packages and record imports.
func (g *resourcesGenerator) Namers(*generator.Context) namer.NameSystems {
	return namer.NameSystems{"raw": namer.NewRawNamer(g.outputPkg, g.imports)}
}

// Imports returns the imports the raw namer recorded.
func (g *resourcesGenerator) Imports(*generator.Context) []string {
	return tidyImports(g.imports.ImportLines())
}

// GenerateType writes one resource's Definition and field getters.
func (g *resourcesGenerator) GenerateType(c *generator.Context, t *types.Type, w io.Writer) error {
	r := g.byType[t]
	sw := generator.NewSnippetWriter(w, c, "$", "$")
	args := generator.Args{
		"type":         t,
		"var":          r.Kind,
		"kind":         r.Kind,
		"plural":       r.Plural,
		"groupVersion": g.gv.apiVersion(),
		"namespaced":   r.Namespaced,
		"fieldsFunc":   fieldsFuncName(r),
		"info":         infoLiterals(g.gv, r, c.Namers["raw"].Name(c.Universe.Type(types.Name{Package: resourcePkg, Name: "PrintColumn"}))),
		"Definition":   c.Universe.Type(types.Name{Package: resourcePkg, Name: "Definition"}),
		"Info":         c.Universe.Type(types.Name{Package: resourcePkg, Name: "Info"}),
		"ObjectFields": c.Universe.Function(types.Name{Package: resourcePkg, Name: "ObjectFields"}),
		"Set":          c.Universe.Type(types.Name{Package: fieldsPkg, Name: "Set"}),
		"Semantic":     c.Universe.Variable(types.Name{Package: equalityPkg, Name: "Semantic"}),
	}

	sw.Do(definitionTemplate, args)
	if sc := r.Scale; sc != nil {
		sw.Do(scaleTemplate, args.WithArgs(generator.Args{
			"ScaleInfo":    c.Universe.Type(types.Name{Package: resourcePkg, Name: "ScaleInfo"}),
			"specPath":     strconv.Quote(sc.SpecReplicasPath),
			"statusPath":   strconv.Quote(sc.StatusReplicasPath),
			"selectorPath": strconv.Quote(sc.LabelSelectorPath),
		}))
	}
	if r.StoredAs != nil {
		sw.Do(storageVersionTemplate, args.With("storageVersion", strconv.Quote(r.StoredAs.GV.Version)))
		if r.StoredAs.OtherGroup {
			sw.Do(storageAPIVersionTemplate, args.With("storageAPIVersion", strconv.Quote(r.StoredAs.GV.apiVersion())))
		}
	}
	if r.TTL > 0 {
		sw.Do(ttlTemplate, args.WithArgs(generator.Args{
			"seconds": strconv.FormatInt(int64(r.TTL/time.Second), 10),
			"Second":  c.Universe.Variable(types.Name{Package: "time", Name: "Second"}),
		}))
	}
	if r.BuiltIn {
		sw.Do(builtInTemplate, args)
	}
	if r.HasFinalize {
		sw.Do(hasFinalizeTemplate, args)
	}
	if st := r.Strategy; st != (resource.Strategy{}) {
		sw.Do(strategyTemplate, args.WithArgs(generator.Args{
			"Strategy":              c.Universe.Type(types.Name{Package: resourcePkg, Name: "Strategy"}),
			"unconditionalUpdate":   strconv.FormatBool(st.UnconditionalUpdate),
			"untrackedGeneration":   strconv.FormatBool(st.UntrackedGeneration),
			"statusUpdatesMetadata": strconv.FormatBool(st.StatusUpdatesMetadata),
			"deleteAnswersStatus":   strconv.FormatBool(st.DeleteAnswersStatus),
		}))
	}
	writeSubresourceInfos(c, sw, r)
	sw.Do(definitionInfoCloseTemplate, args)
	if len(r.SelectableFields) == 0 {
		sw.Do(fieldsInlineTemplate, args)
	} else {
		sw.Do(fieldsRefTemplate, args)
	}
	sw.Do(copyStatusTemplates[r.CopyStatus], args)
	if len(r.SpecMembers) == 0 {
		sw.Do(specEqualTrueTemplate, args)
	} else {
		sw.Do(specEqualOpenTemplate, args)
		for i, m := range r.SpecMembers {
			if i > 0 {
				sw.Do(" &&\n\t\t\t", nil)
			}
			sw.Do(specEqualMemberTemplate, args.With("member", m))
		}
		sw.Do(specEqualCloseTemplate, args)
	}
	if r.Validate != nil {
		sw.Do(validateTemplate, args.With("validate", r.Validate))
	}
	if r.Printer != nil {
		sw.Do(printerTemplate, args.With("printer", r.Printer))
	}
	for _, h := range []struct {
		field string
		hook  *types.Type
	}{{"Default", r.Default}, {"Prepare", r.Prepare}, {"Finalize", r.Finalize}, {"ValidateName", r.ValidateName}, {"ValidateStatus", r.ValidateStatus}} {
		if h.hook != nil {
			sw.Do(hookTemplate, args.With("field", h.field).With("hook", h.hook))
		}
	}
	if err := sw.Error(); err != nil {
		return err
	}
	if hm := r.Hooks; hm != nil {
		hargs := args.WithArgs(generator.Args{
			"Hooks":     c.Universe.Type(types.Name{Package: hookPkg, Name: "Hooks"}),
			"hooksVar":  hooksVarName(r),
			"hooksType": c.Universe.Type(types.Name{Package: hm.Pkg, Name: hm.Type}),
		})
		if len(hm.Methods) > 0 {
			sw.Do(hooksOpenTemplate, hargs)
			for _, m := range hm.Methods {
				sw.Do(hooksMethodTemplate, hargs.With("method", m))
			}
			sw.Do(hooksCloseTemplate, hargs)
		}
	}
	writeCustom(c, sw, r)
	// The kind's schema (Info.Schema) defaults and validates its writes;
	// no Default or Validate function is generated (a built-in kind's
	// Validate is hand-written, named by builtin/apis.yaml).
	sw.Do("}\n", nil)
	if r.Hooks != nil {
		sw.Do(hooksVarTemplate, args.WithArgs(generator.Args{
			"hooksVar":  hooksVarName(r),
			"hooksType": c.Universe.Type(types.Name{Package: r.Hooks.Pkg, Name: r.Hooks.Type}),
		}))
	}

	if len(r.SelectableFields) == 0 {
		return sw.Error()
	}
	str := &strconvNames{c: c}
	sw.Do(fieldsFuncTemplate, args)
	for _, f := range r.SelectableFields {
		value := f.value(str)
		if f.needsFunc() {
			value = f.funcName(r) + "(o)"
		}
		sw.Do(fieldEntryTemplate, args.With("key", strconv.Quote(f.Key)).With("value", value))
	}
	sw.Do(fieldsFuncCloseTemplate, args)
	for _, f := range r.SelectableFields {
		if !f.needsFunc() {
			continue
		}
		sw.Do(getterTemplate, args.WithArgs(generator.Args{
			"func":  f.funcName(r),
			"key":   f.Key,
			"unset": f.unsetCondition(),
			"value": f.value(str),
		}))
	}
	return sw.Error()
}

// Finalize writes the group-version's Install function.
func (g *resourcesGenerator) Finalize(c *generator.Context, w io.Writer) error {
	sw := generator.NewSnippetWriter(w, c, "$", "$")
	args := generator.Args{
		"groupVersion": g.gv.apiVersion(),
		"Registry":     c.Universe.Type(types.Name{Package: registryPkg, Name: "Registry"}),
		"Register":     c.Universe.Function(types.Name{Package: registryPkg, Name: "Register"}),
	}
	sw.Do(installTemplate, args)
	for _, r := range g.gv.Resources {
		if st := r.StoredAs; st != nil {
			fn := func(name string) *types.Type {
				return c.Universe.Function(types.Name{Package: g.gv.Pkg.Path, Name: name})
			}
			sw.Do(installConvertedTemplate, args.WithArgs(generator.Args{
				"var":               r.Kind,
				"type":              r.Type,
				"storageType":       st.Resource.Type,
				"storageDef":        c.Universe.Variable(types.Name{Package: gvPackage(path.Dir(path.Dir(g.outputPkg)), st.GV), Name: st.Resource.Kind}),
				"toStorage":         orFunc(st.ToStorageFunc, fn, st.ToStorage),
				"fromStorage":       orFunc(st.FromStorageFunc, fn, st.FromStorage),
				"fieldLabels":       fieldLabelsLiteral(st.FieldLabels),
				"RegisterConverted": c.Universe.Function(types.Name{Package: registryPkg, Name: "RegisterConverted"}),
				"Conversion":        c.Universe.Type(types.Name{Package: resourcePkg, Name: "Conversion"}),
			}))
			continue
		}
		sw.Do(installEntryTemplate, args.With("var", r.Kind))
	}
	sw.Do("}\n", nil)
	return sw.Error()
}

// orFunc is t, or else the function name in the package fn looks in.
func orFunc(t *types.Type, fn func(string) *types.Type, name string) *types.Type {
	if t != nil {
		return t
	}
	return fn(name)
}

// fieldLabelsLiteral are the entries of a map[string]string literal of m,
// "key": "value", sorted by key; nil when m is empty.
func fieldLabelsLiteral(m map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, strconv.Quote(k)+": "+strconv.Quote(m[k]))
	}
	return out
}

// infoLiterals are the Go literals of r's resource.Info fields; column is
// how the generated file names resource.PrintColumn.
func infoLiterals(gv *groupVersion, r *resourceModel, column string) map[string]string {
	keys := make([]string, len(r.SelectableFields))
	for i, f := range r.SelectableFields {
		keys[i] = f.Key
	}
	return map[string]string{
		"Group":            strconv.Quote(gv.Group),
		"Version":          strconv.Quote(gv.Version),
		"Kind":             strconv.Quote(r.Kind),
		"ListKind":         strconv.Quote(r.ListKind),
		"Plural":           strconv.Quote(r.Plural),
		"Singular":         strconv.Quote(r.Singular),
		"Namespaced":       strconv.FormatBool(r.Namespaced),
		"ShortNames":       stringsLiteral(r.ShortNames),
		"Categories":       stringsLiteral(r.Categories),
		"HasStatus":        strconv.FormatBool(r.HasStatus),
		"SelectableFields": stringsLiteral(keys),
		"PrintColumns":     printColumnsLiteral(column, r.PrintColumns),
		"OpenAPIName":      strconv.Quote(r.OpenAPIName),
		"Schema":           rawStringLiteral(r.Schema),
	}
}

// rawStringLiteral renders s as a Go raw string literal, which keeps JSON
// readable (no escaped quotes); a back quote, which a raw string cannot
// hold, is concatenated as "`".
func rawStringLiteral(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "` + \"`\" + `") + "`"
}

// stringsLiteral renders a []string literal, or nil when empty.
func stringsLiteral(ss []string) string {
	if len(ss) == 0 {
		return "nil"
	}
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[]string{" + strings.Join(q, ", ") + "}"
}

// printColumnsLiteral renders a []resource.PrintColumn literal, one column
// a line with only the fields that are set, or nil when there are none.
func printColumnsLiteral(column string, cols []resource.PrintColumn) string {
	if len(cols) == 0 {
		return "nil"
	}
	var b strings.Builder
	b.WriteString("[]" + column + "{\n")
	for _, c := range cols {
		fields := []string{"Name: " + strconv.Quote(c.Name), "Type: " + strconv.Quote(c.Type), "JSONPath: " + strconv.Quote(c.JSONPath)}
		if c.Format != "" {
			fields = append(fields, "Format: "+strconv.Quote(c.Format))
		}
		if c.Priority != 0 {
			fields = append(fields, "Priority: "+strconv.FormatInt(int64(c.Priority), 10))
		}
		if c.Description != "" {
			fields = append(fields, "Description: "+strconv.Quote(c.Description))
		}
		b.WriteString("\t\t\t{" + strings.Join(fields, ", ") + "},\n")
	}
	b.WriteString("\t\t}")
	return b.String()
}

// strconvNames names strconv's formatting functions through the raw namer,
// so using one records the import.
type strconvNames struct{ c *generator.Context }

func (s *strconvNames) name(fn string) string {
	return s.c.Namers["raw"].Name(s.c.Universe.Function(types.Name{Package: "strconv", Name: fn}))
}

// value is the Go expression of the field as a string, assuming the nil
// checks passed.
func (g *fieldGetter) value(str *strconvNames) string {
	if g.Func != nil {
		return str.c.Namers["raw"].Name(g.Func) + "(o)"
	}
	x := g.Access
	if g.Deref {
		x = "*" + x
	}
	conv := func(to string) string {
		if g.Named || g.Builtin != to {
			return to + "(" + x + ")"
		}
		return x
	}
	switch g.Format {
	case formatBool:
		return fmt.Sprintf("%s(%s)", str.name("FormatBool"), conv("bool"))
	case formatInt:
		return fmt.Sprintf("%s(%s, 10)", str.name("FormatInt"), conv("int64"))
	case formatUint:
		return fmt.Sprintf("%s(%s, 10)", str.name("FormatUint"), conv("uint64"))
	default:
		return conv("string")
	}
}

// unsetCondition is true when a pointer on the way to the field is nil.
func (g *fieldGetter) unsetCondition() string {
	checks := g.NilChecks
	if g.Deref {
		checks = append(checks[:len(checks):len(checks)], g.Access)
	}
	conds := make([]string, len(checks))
	for i, c := range checks {
		conds[i] = c + " == nil"
	}
	return strings.Join(conds, " || ")
}

// tidyImports drops the redundant alias gengo gives standard-library
// imports (strconv "strconv", utf8 "unicode/utf8").
func tidyImports(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		name, quoted, _ := strings.Cut(l, " ")
		pkg, _ := strconv.Unquote(quoted)
		std := !strings.Contains(strings.Split(pkg, "/")[0], ".")
		if strconv.Quote(name) == quoted || std && path.Base(pkg) == name {
			l = quoted
		}
		out[i] = l
	}
	return out
}
