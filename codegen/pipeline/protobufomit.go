package pipeline

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// A Go type cannot have a field and a method of the same name, and gogo
// gives every message Size, String, Reset, Marshal, ... (protobufMethods):
// a type with a field so named has no protobuf form go-to-protobuf can
// write, and neither has a type holding it, up to its kind. A CRD of the
// same type is served by kube-apiserver, without protobuf; so is such a
// kind by apiloom. Generate leaves these types out of protobuf, as if each
// were marked +protobuf=false, and warns, naming each and the fix (rename
// the Go field, or mark the types to say it is meant).

// protobufOmitLine precedes the +protobuf=false line Generate writes above
// a type for go-to-protobuf's run only; both lines go once it has run.
const protobufOmitLine = "// apiloom-gen: +protobuf=false for this run only (a field is named like a generated.pb.go method)"

// protobufMethods are the names gogo's generator keeps for methods: a
// field so named is renamed in the Go code it generates (Size_), code that
// go-to-protobuf keeps while it drops the generated types for the module's
// own, and the hand-written type could not have the method anyway.
var protobufMethods = map[string]bool{
	"Reset": true, "String": true, "ProtoMessage": true, "Marshal": true, "Unmarshal": true,
	"ExtensionRangeArray": true, "ExtensionMap": true, "Descriptor": true, "MarshalTo": true,
	"MarshalToSizedBuffer": true, "Equal": true, "VerboseEqual": true, "GoString": true,
	"ProtoSize": true, "Size": true,
}

// protoType is an exported named type of an API package, as go-to-protobuf
// sees it.
type protoType struct {
	id       string   // import path "." name
	name     string   // package name "." name, as the warning says it
	pos      string   // file:line of its name, relative to the module root
	isStruct bool     // a struct: go-to-protobuf writes a message for it
	marked   bool     // marked +protobuf=false in the source
	clash    []string // its fields named like generated methods
	holds    []string // ids of the API types its protobuf fields hold
}

// ProtobufOmission is a type of an API package that Generate leaves out of
// protobuf although it is not marked +protobuf=false.
type ProtobufOmission struct {
	// Pos is the type's file:line, relative to the module root.
	Pos string
	// Type is the package name and the type's name ("v1.SizedSpec");
	// ImportPath the package's.
	Type, ImportPath string
	// Why: a field named like a method, the type that holds an omitted
	// type, or the omitted types it is reachable only from.
	Why string
}

// ProtobufOmissions returns the types of the API packages (dirs, slash
// separated and relative to root; their import paths are modPath/dir)
// that go-to-protobuf must leave out and that are not marked
// +protobuf=false: each struct type with a field named like a method
// generated.pb.go adds, each type holding an omitted type (up to the kind
// and its list), and each type reachable only from omitted ones. They are
// sorted by position.
func ProtobufOmissions(root, modPath string, dirs []string) ([]ProtobufOmission, error) {
	types, err := loadProtoTypes(root, modPath, dirs)
	if err != nil {
		return nil, err
	}
	omit, why := protobufOmitted(types)
	var out []ProtobufOmission
	for id := range omit {
		t := types[id]
		if t.marked || !t.isStruct {
			continue
		}
		out = append(out, ProtobufOmission{Pos: t.pos, Type: t.name, ImportPath: id[:strings.LastIndex(id, ".")], Why: why[id]})
	}
	sort.Slice(out, func(i, j int) bool { return posLess(out[i].Pos, out[j].Pos) })
	return out, nil
}

// posLess orders file:line positions by file, then line.
func posLess(a, b string) bool {
	i, j := strings.LastIndex(a, ":"), strings.LastIndex(b, ":")
	if a[:i] != b[:j] {
		return a[:i] < b[:j]
	}
	na, _ := strconv.Atoi(a[i+1:])
	nb, _ := strconv.Atoi(b[j+1:])
	return na < nb
}

// protobufOmitted computes which types go-to-protobuf must leave out: the
// marked ones and those with a clashing field, every type holding one of
// them (closed upwards), and the types reachable only from those. why says
// it for each type left out that is not marked.
func protobufOmitted(types map[string]*protoType) (omit map[string]bool, why map[string]string) {
	omit, why = map[string]bool{}, map[string]string{}
	for id, t := range types {
		if t.marked || len(t.clash) > 0 {
			omit[id] = true
		}
		if len(t.clash) > 0 {
			s := "s"
			if len(t.clash) == 1 {
				s = ""
			}
			why[id] = fmt.Sprintf("field%s %s named like generated.pb.go's methods", s, strings.Join(t.clash, ", "))
		}
	}
	for changed := true; changed; {
		changed = false
		for _, id := range sortedIDs(types) {
			if omit[id] {
				continue
			}
			for _, h := range types[id].holds {
				if omit[h] {
					omit[id], why[id], changed = true, "holds "+types[h].name, true
					break
				}
			}
		}
	}
	// The types the omitted ones reach, and those the others reach.
	reach := func(from func(string) bool) map[string]bool {
		seen := map[string]bool{}
		var walk func(string)
		walk = func(id string) {
			for _, h := range types[id].holds {
				if !seen[h] {
					seen[h] = true
					walk(h)
				}
			}
		}
		for _, id := range sortedIDs(types) {
			if from(id) {
				walk(id)
			}
		}
		return seen
	}
	fromOmitted := reach(func(id string) bool { return omit[id] })
	kept := reach(func(id string) bool { return !omit[id] && !fromOmitted[id] })
	for _, id := range sortedIDs(types) {
		if fromOmitted[id] && !omit[id] && !kept[id] {
			omit[id] = true
			var by []string
			for _, o := range sortedIDs(types) {
				if omit[o] && slices.Contains(types[o].holds, id) {
					by = append(by, types[o].name)
				}
			}
			why[id] = "used only by types left out (" + strings.Join(by, ", ") + ")"
		}
	}
	return omit, why
}

func sortedIDs(types map[string]*protoType) []string {
	ids := make([]string, 0, len(types))
	for id := range types {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// loadProtoTypes parses the API packages (the files go-to-protobuf reads:
// not tests, not generated, build tag proto) and returns their exported
// named types by id, with the API types each one's protobuf fields hold.
// References are resolved by syntax: a local name, or a name qualified by
// an import of another API package.
func loadProtoTypes(root, modPath string, dirs []string) (map[string]*protoType, error) {
	bctx := build.Default
	bctx.BuildTags = append(append([]string{}, bctx.BuildTags...), "proto")
	apiPkgs := map[string]bool{}
	for _, d := range dirs {
		apiPkgs[path.Join(modPath, d)] = true
	}
	types := map[string]*protoType{}
	for _, d := range dirs {
		dir := filepath.Join(root, filepath.FromSlash(d))
		imp := path.Join(modPath, d)
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		fset := token.NewFileSet()
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") ||
				strings.HasPrefix(name, "zz_generated.") || name == "generated.pb.go" {
				continue
			}
			if ok, err := bctx.MatchFile(dir, name); err != nil || !ok {
				if err != nil {
					return nil, err
				}
				continue
			}
			p := filepath.Join(dir, name)
			f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			imports := fileImports(f)
			ref := func(e ast.Expr) []string {
				var out []string
				collectTypeRefs(e, func(pkg, name string) {
					switch {
					case pkg == "":
						out = append(out, imp+"."+name)
					case apiPkgs[imports[pkg]]:
						out = append(out, imports[pkg]+"."+name)
					}
				})
				return out
			}
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.TYPE {
					continue
				}
				for _, spec := range gd.Specs {
					ts := spec.(*ast.TypeSpec)
					if !ts.Name.IsExported() || ts.TypeParams != nil {
						continue
					}
					doc := ts.Doc
					if doc == nil && len(gd.Specs) == 1 {
						doc = gd.Doc
					}
					line := fset.Position(ts.Name.Pos()).Line
					rel, _ := filepath.Rel(root, p)
					t := &protoType{
						id: imp + "." + ts.Name.Name, name: f.Name.Name + "." + ts.Name.Name,
						pos:    fmt.Sprintf("%s:%d", filepath.ToSlash(rel), line),
						marked: protobufFalse.MatchString(doc.Text()),
					}
					if st, ok := ts.Type.(*ast.StructType); ok {
						t.isStruct = true
						for _, field := range st.Fields.List {
							names := fieldNames(field)
							for _, n := range names {
								if protobufMethods[n] || strings.HasPrefix(n, "XXX_") {
									t.clash = append(t.clash, n)
								}
							}
							if inProtobuf(field, names) {
								t.holds = append(t.holds, ref(field.Type)...)
							}
						}
					} else {
						t.holds = ref(ts.Type)
					}
					types[t.id] = t
				}
			}
		}
	}
	// Only the types declared in the API packages are nodes.
	for _, t := range types {
		held := t.holds[:0]
		for _, h := range t.holds {
			if _, ok := types[h]; ok && !slices.Contains(held, h) {
				held = append(held, h)
			}
		}
		t.holds = held
	}
	return types, nil
}

// fieldNames are a struct field's names; an embedded field's is its type's.
func fieldNames(field *ast.Field) []string {
	if len(field.Names) > 0 {
		names := make([]string, len(field.Names))
		for i, n := range field.Names {
			names[i] = n.Name
		}
		return names
	}
	e := field.Type
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	switch e := e.(type) {
	case *ast.Ident:
		return []string{e.Name}
	case *ast.SelectorExpr:
		return []string{e.Sel.Name}
	}
	return nil
}

// inProtobuf reports whether go-to-protobuf writes the field into the
// message: exported, not tagged protobuf:"-", nor json:"-" untagged.
func inProtobuf(field *ast.Field, names []string) bool {
	if len(names) == 0 || !ast.IsExported(names[0]) {
		return false
	}
	if field.Tag == nil {
		return true
	}
	tag, err := strconv.Unquote(field.Tag.Value)
	if err != nil {
		return true
	}
	pb, hasPB := reflect.StructTag(tag).Lookup("protobuf")
	if pb == "-" {
		return false
	}
	j, _ := reflect.StructTag(tag).Lookup("json")
	return hasPB || strings.Split(j, ",")[0] != "-"
}

// fileImports maps each import's name in f to its path.
func fileImports(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, is := range f.Imports {
		p, err := strconv.Unquote(is.Path.Value)
		if err != nil {
			continue
		}
		name := path.Base(p)
		if is.Name != nil {
			name = is.Name.Name
		}
		out[name] = p
	}
	return out
}

// collectTypeRefs calls fn for every named type e mentions: pkg is the
// qualifier, empty for a local name.
func collectTypeRefs(e ast.Expr, fn func(pkg, name string)) {
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok {
				fn(x.Name, n.Sel.Name)
			}
			return false
		case *ast.Ident:
			fn("", n.Name)
		case *ast.StructType, *ast.InterfaceType, *ast.FuncType:
			// Anonymous structs and the like are not go-to-protobuf's.
			return false
		}
		return true
	})
}

// markProtobufFalse writes, above each omitted struct type that is not
// marked, protobufOmitLine and a +protobuf=false line, for go-to-protobuf
// to leave it out; it returns the files it changed, for
// unmarkProtobufFalse.
func markProtobufFalse(root string, omitted []ProtobufOmission) ([]string, error) {
	byFile := map[string][]int{}
	for _, o := range omitted {
		file, line, _ := strings.Cut(o.Pos, ":")
		n, err := strconv.Atoi(line)
		if err != nil {
			return nil, err
		}
		p := filepath.Join(root, filepath.FromSlash(file))
		byFile[p] = append(byFile[p], n)
	}
	var files []string
	for p, lines := range byFile {
		data, err := os.ReadFile(p)
		if err != nil {
			return files, err
		}
		src := bytes.SplitAfter(data, []byte("\n"))
		at := map[int]bool{}
		for _, n := range lines {
			at[n] = true
		}
		var out bytes.Buffer
		for i, l := range src {
			if at[i+1] {
				indent := l[:len(l)-len(bytes.TrimLeft(l, " \t"))]
				fmt.Fprintf(&out, "%s%s\n%s// +protobuf=false\n", indent, protobufOmitLine, indent)
			}
			out.Write(l)
		}
		files = append(files, p)
		if err := os.WriteFile(p, out.Bytes(), 0o644); err != nil {
			return files, err
		}
	}
	sort.Strings(files)
	return files, nil
}

// unmarkProtobufFalse removes from files the lines markProtobufFalse
// wrote, wherever go-to-protobuf's rewrite has left them; a file without
// them is not written.
func unmarkProtobufFalse(files []string) error {
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !bytes.Contains(data, []byte(protobufOmitLine)) {
			continue
		}
		src := bytes.SplitAfter(data, []byte("\n"))
		var out bytes.Buffer
		for i := 0; i < len(src); i++ {
			if string(bytes.TrimSpace(src[i])) == protobufOmitLine {
				if i+1 < len(src) && string(bytes.TrimSpace(src[i+1])) == "// +protobuf=false" {
					i++
				}
				continue
			}
			out.Write(src[i])
		}
		if err := os.WriteFile(p, out.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// unmarkLeftovers removes the marks a run killed while go-to-protobuf
// ran (SIGKILL: an interrupt still unmarks) left in the API packages' Go
// files, so that they count as unmarked again.
func unmarkLeftovers(root string, dirs []string) error {
	var files []string
	for _, d := range dirs {
		fs, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(d), "*.go"))
		if err != nil {
			return err
		}
		files = append(files, fs...)
	}
	return unmarkProtobufFalse(files)
}

// protobufOmissionWarning says which types are served without protobuf,
// why, and the fix.
func protobufOmissionWarning(omitted []ProtobufOmission) string {
	var b strings.Builder
	b.WriteString("warning: these types are left out of protobuf; their kinds are served as JSON, YAML and CBOR, " +
		"as kube-apiserver serves a CRD (a client accepting only protobuf gets 406 Not Acceptable; " +
		"client-go's protobuf clients accept JSON too and get it):\n")
	for _, o := range omitted {
		fmt.Fprintf(&b, "  %s: %s: %s\n", o.Pos, o.Type, o.Why)
	}
	b.WriteString("  to keep protobuf, rename each Go field named like a generated.pb.go method (Size, String, Reset, " +
		"Marshal, ...); its json name, the API's, can stay, as in  SizeGrams *int32 `json:\"size\"`\n" +
		"  to leave them out and silence this warning, mark each type listed with a `// +protobuf=false` comment line\n")
	return b.String()
}
