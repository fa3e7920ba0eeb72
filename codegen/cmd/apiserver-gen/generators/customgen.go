package generators

import (
	"strconv"

	"k8s.io/gengo/v2/generator"
	"k8s.io/gengo/v2/types"

	"github.com/apiloom/apiloom/server/resource"
)

// subresourcesOpenTemplate opens Info.Subresources, for a kind with
// custom subresources; subresourceTemplate states one.
const (
	subresourcesOpenTemplate = `		Subresources: []$.SubresourceInfo|raw${
`
	subresourceTemplate = `			{
				Name:  $.name$,
				Kind:  $.GVK|raw${Group: $.group$, Version: $.version$, Kind: $.kindName$},
				Verbs: []string{$.verb$},
				Type:  $.subType|raw$,
$- if .input$
				InputOpenAPIName: $.input$,
$- end$
$- if .result$
				ResultOpenAPIName: $.result$,
$- end$
			},
`
	subresourcesCloseTemplate = `		},
`
)

// customOpenTemplate opens Definition.Custom; the others wire one custom
// subresource each to its hooks method.
const (
	customOpenTemplate = `	Custom: []$.Custom|raw$[*$.type|raw$]{
`
	customActionTemplate = `		$.NewAction|raw$($.name$, func() *$.input|raw$ { return new($.input|raw$) }, $.schema$, $.hooksVar$.$.method$),
`
	customViewTemplate = `		$.NewView|raw$($.name$, $.hooksVar$.$.method$),
`
	customStreamTemplate = `		$.NewStream|raw$($.name$, func() *$.input|raw$ { return new($.input|raw$) }, $.hooksVar$.$.method$),
`
	customCloseTemplate = `	},
`
)

// writeSubresourceInfos states r's Info.Subresources.
func writeSubresourceInfos(c *generator.Context, sw *generator.SnippetWriter, r *resourceModel) {
	if len(r.Custom) == 0 {
		return
	}
	args := generator.Args{
		"SubresourceInfo": c.Universe.Type(types.Name{Package: resourcePkg, Name: "SubresourceInfo"}),
		"GVK":             c.Universe.Type(types.Name{Package: metav1Pkg, Name: "GroupVersionKind"}),
	}
	sw.Do(subresourcesOpenTemplate, args)
	for _, cm := range r.Custom {
		verb := "get"
		if cm.Type == resource.Action {
			verb = "create"
		}
		quoted := func(s string) string {
			if s == "" {
				return ""
			}
			return strconv.Quote(s)
		}
		sw.Do(subresourceTemplate, args.WithArgs(generator.Args{
			"name":     strconv.Quote(cm.Name),
			"group":    strconv.Quote(cm.Kind.Group),
			"version":  strconv.Quote(cm.Kind.Version),
			"kindName": strconv.Quote(cm.Kind.Kind),
			"verb":     strconv.Quote(verb),
			"subType":  c.Universe.Constant(types.Name{Package: resourcePkg, Name: subresourceTypeConst(cm.Type)}),
			"input":    quoted(openAPIName(cm.Input)),
			"result":   quoted(openAPIName(cm.Result)),
		}))
	}
	sw.Do(subresourcesCloseTemplate, args)
}

// subresourceTypeConst is the name of t's constant in package resource.
func subresourceTypeConst(t resource.SubresourceType) string {
	switch t {
	case resource.Action:
		return "Action"
	case resource.View:
		return "View"
	default:
		return "Stream"
	}
}

// writeCustom states r's Definition.Custom.
func writeCustom(c *generator.Context, sw *generator.SnippetWriter, r *resourceModel) {
	if len(r.Custom) == 0 {
		return
	}
	fn := func(name string) *types.Type {
		return c.Universe.Function(types.Name{Package: resourcePkg, Name: name})
	}
	args := generator.Args{
		"type":      r.Type,
		"Custom":    c.Universe.Type(types.Name{Package: resourcePkg, Name: "Custom"}),
		"NewAction": fn("NewAction"),
		"NewView":   fn("NewView"),
		"NewStream": fn("NewStream"),
		"hooksVar":  hooksVarName(r),
	}
	sw.Do(customOpenTemplate, args)
	for _, cm := range r.Custom {
		a := args.WithArgs(generator.Args{"name": strconv.Quote(cm.Name), "method": cm.Method, "input": cm.Input})
		switch cm.Type {
		case resource.Action:
			schema := `""`
			if cm.InputSchema != "" {
				schema = rawStringLiteral(cm.InputSchema)
			}
			sw.Do(customActionTemplate, a.With("schema", schema))
		case resource.View:
			sw.Do(customViewTemplate, a)
		default:
			sw.Do(customStreamTemplate, a)
		}
	}
	sw.Do(customCloseTemplate, args)
}
