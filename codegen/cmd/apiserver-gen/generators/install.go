package generators

import (
	"io"
	"path"
	"strconv"
	"strings"

	"k8s.io/gengo/v2/generator"
	"k8s.io/gengo/v2/namer"
	"k8s.io/gengo/v2/types"
)

// installFilename is the file written into the output root package.
const installFilename = "zz_generated.install.go"

// rootInstallTemplate opens the Install that installs everything;
// rootInstallEntryTemplate installs one group-version and
// rootInstallCloseTemplate adds the OpenAPI definitions.
const (
	rootInstallTemplate = `
// Install registers every generated resource with r, group-version by
// group-version in import-path order, and the OpenAPI definitions of their
// types.
func Install(r *$.Registry|raw$) {
`
	rootInstallEntryTemplate = `	$.alias$.Install(r)
`
	rootInstallCloseTemplate = `	r.SetOpenAPIDefinitions($.GetOpenAPIDefinitions|raw$)
}
`
)

// installGenerator writes zz_generated.install.go in the output root.
type installGenerator struct {
	generator.GoGenerator
	outputPkg  string
	openAPIPkg string
	// gvs are sorted by output package path.
	gvs     []*groupVersion
	imports namer.ImportTracker
}

var _ generator.Generator = (*installGenerator)(nil)

func newInstallGenerator(outputPkg, openAPIPkg string, gvs []*groupVersion) *installGenerator {
	return &installGenerator{
		GoGenerator: generator.GoGenerator{OutputFilename: installFilename},
		outputPkg:   outputPkg,
		openAPIPkg:  openAPIPkg,
		gvs:         gvs,
		imports:     generator.NewImportTrackerForPackage(outputPkg),
	}
}

// Filter keeps no types: the file is written whole by Init.
func (g *installGenerator) Filter(*generator.Context, *types.Type) bool { return false }

// Namers makes "raw" qualify names from other packages and record imports.
func (g *installGenerator) Namers(*generator.Context) namer.NameSystems {
	return namer.NameSystems{"raw": namer.NewRawNamer(g.outputPkg, g.imports)}
}

// Imports are the recorded imports plus each group-version package under
// its <group><version> alias, so aliases do not depend on import order.
func (g *installGenerator) Imports(*generator.Context) []string {
	lines := tidyImports(g.imports.ImportLines())
	for _, gv := range g.gvs {
		lines = append(lines, gvAlias(gv)+" "+strconv.Quote(gvPackage(g.outputPkg, gv)))
	}
	return lines
}

// Init writes the Install function.
func (g *installGenerator) Init(c *generator.Context, w io.Writer) error {
	sw := generator.NewSnippetWriter(w, c, "$", "$")
	args := generator.Args{
		"Registry":              c.Universe.Type(types.Name{Package: registryPkg, Name: "Registry"}),
		"GetOpenAPIDefinitions": c.Universe.Function(types.Name{Package: g.openAPIPkg, Name: "GetOpenAPIDefinitions"}),
	}
	sw.Do(rootInstallTemplate, args)
	for _, gv := range g.gvs {
		sw.Do(rootInstallEntryTemplate, args.With("alias", gvAlias(gv)))
	}
	sw.Do(rootInstallCloseTemplate, args)
	return sw.Error()
}

// gvPackage is the import path of gv's generated package.
func gvPackage(outputPkg string, gv *groupVersion) string {
	return path.Join(outputPkg, gv.GroupDir, gv.Version)
}

// gvAlias is the import name of gv's generated package, e.g. "examplev1".
func gvAlias(gv *groupVersion) string {
	return strings.ToLower(identifier(gv.GroupDir) + identifier(gv.Version))
}
