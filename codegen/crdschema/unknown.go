package crdschema

import (
	"fmt"
	"go/ast"
	"go/token"
	"strings"

	"sigs.k8s.io/controller-tools/pkg/loader"
	"sigs.k8s.io/controller-tools/pkg/markers"
)

// unknownMarkers returns one error per comment marker in the hand-written
// files of roots that nothing knows: neither reg (for the place it is
// written: the package, a type or a field) nor the generators' tags
// (generatorTag). Markers in function comments are not looked at: no
// generator reads them there.
func unknownMarkers(roots []*loader.Package, reg *markers.Registry) []error {
	var errs []error
	for _, pkg := range roots {
		pkg.NeedSyntax()
		for _, file := range pkg.Syntax {
			if ast.IsGenerated(file) {
				continue
			}
			errs = append(errs, unknownInFile(pkg.Fset, file, reg)...)
		}
	}
	return errs
}

// Where a comment group sits, which decides the markers it may hold.
type place int

const (
	placeLoose place = iota // the package doc, or a comment attached to nothing
	placeType               // the doc of a type declaration
	placeField              // the doc or line comment of a struct field
	placeFunc               // a function's doc or body: not checked
)

func unknownInFile(fset *token.FileSet, file *ast.File, reg *markers.Registry) []error {
	places := map[*ast.CommentGroup]place{}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			// Its doc and every comment inside it.
			for _, g := range file.Comments {
				if (n.Doc != nil && g == n.Doc) || (g.Pos() >= n.Pos() && g.End() <= n.End()) {
					places[g] = placeFunc
				}
			}
			return false
		case *ast.GenDecl:
			if n.Tok == token.TYPE && n.Doc != nil {
				places[n.Doc] = placeType
			}
		case *ast.TypeSpec:
			if n.Doc != nil {
				places[n.Doc] = placeType
			}
		case *ast.Field:
			for _, g := range []*ast.CommentGroup{n.Doc, n.Comment} {
				if g != nil {
					places[g] = placeField
				}
			}
		}
		return true
	})

	var errs []error
	for _, g := range file.Comments {
		where := places[g]
		if where == placeFunc {
			continue
		}
		for _, c := range g.List {
			text, ok := markerText(c.Text)
			if !ok || known(reg, text, where) {
				continue
			}
			errs = append(errs, fmt.Errorf("%s: unknown marker %s", fset.Position(c.Pos()), text))
		}
	}
	return errs
}

// markerText returns the marker of a // comment line, "+name...", as
// controller-tools reads it.
func markerText(comment string) (string, bool) {
	rest, ok := strings.CutPrefix(comment, "//")
	if !ok {
		return "", false
	}
	rest = strings.TrimSpace(rest)
	if !strings.HasPrefix(rest, "+") || len(rest) < 2 {
		return "", false
	}
	return rest, true
}

// known reports whether some generator understands marker text written at
// where. A type's doc may also carry package markers (controller-tools
// moves them to the package), and a loose comment may hold either.
func known(reg *markers.Registry, text string, where place) bool {
	if generatorTag(text) {
		return true
	}
	switch where {
	case placeField:
		return reg.Lookup(text, markers.DescribesField) != nil
	default:
		return reg.Lookup(text, markers.DescribesType) != nil || reg.Lookup(text, markers.DescribesPackage) != nil
	}
}
