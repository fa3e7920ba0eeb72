package generators

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgenutil "k8s.io/code-generator/cmd/client-gen/generators/util"
	"k8s.io/code-generator/pkg/apidefinitions"
	"k8s.io/gengo/v2/types"

	"github.com/apiloom/apiloom/codegen/markers"
	"github.com/apiloom/apiloom/server/resource"
)

// A kind's own subresources ("custom subresources", package
// server/resource's Custom) are declared by markers on the kind and
// served by methods of its hooks type (hooks.go) named by the markers:
//
//	+genclient:method=Backup,verb=create,subresource=backup,input=BackupRequest,result=BackupResult  (an action)
//	+genclient:method=GetConnection,verb=get,subresource=connection,result=DatabaseConnection       (a view)
//	+apiloom:stream:method=Logs,subresource=logs,input=DatabaseLogOptions                           (a stream)
//
// The first two are client-gen's own markers, so the generated clientset
// has the methods; a stream is apiloom's marker, client-gen having no
// verb for a GET that answers bytes. The status and scale subresources
// are the server's own, not custom: their +genclient:method markers are
// left to client-gen.

// customModel is one custom subresource of a kind.
type customModel struct {
	// Name is the path segment ("backup"), Method the hooks method.
	Name, Method string
	Type         resource.SubresourceType
	// Input is an action's body or a stream's options; nil for a view.
	// Result is what an action or view answers; nil for a stream.
	Input, Result *types.Type
	// InputSchema is the structural schema of an action's input when it
	// is a type of an API package being generated; "" otherwise.
	InputSchema string
	// Kind is the kind discovery lists for it: the input's for an
	// action, the result's for a view, the parent's for a stream.
	Kind metav1.GroupVersionKind
	// Text is the marker as written and Pos its file:line ("" when not
	// found), for error messages.
	Text, Pos string
	// Implemented is set once the kind's hooks type has its method.
	Implemented bool
}

// notCustom are the subresources the server serves itself.
var notCustom = []string{"status", "scale"}

// queryKinds are the builtin types a query parameter can carry.
var queryKinds = []string{"string", "bool", "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64"}

// customSubresources reads the custom subresources of the kind t of p
// from its marker lines, in the order written (+genclient:method ones
// first). Every problem is an error naming the marker's file and line.
func (a *analyzer) customSubresources(p *types.Package, t *types.Type, lines []string, tags clientgenutil.Tags, streams []markers.Stream) ([]*customModel, error) {
	var (
		out  []*customModel
		errs []error
	)
	fail := func(c *customModel, format string, args ...any) {
		err := fmt.Errorf("%s: "+format, append([]any{c.Text}, args...)...)
		if c.Pos != "" {
			err = fmt.Errorf("%s: %w", c.Pos, err)
		}
		errs = append(errs, err)
	}
	for _, ext := range tags.Extensions {
		if !ext.IsSubresource() || slices.Contains(notCustom, ext.SubResourcePath) {
			continue
		}
		c := &customModel{Name: ext.SubResourcePath, Method: ext.VerbName, Text: genclientMethodText(lines, ext.VerbName)}
		c.Pos = typeMarkerPosition(p.Dir, t.Name.Name, c.Text)
		var err error
		switch ext.VerbType {
		case "create":
			c.Type = resource.Action
			if ext.InputTypeOverride == "" || ext.ResultTypeOverride == "" {
				fail(c, "an action (verb=create) needs input= and result=")
				continue
			}
			if c.Input, err = a.objectType(p, ext.InputTypeOverride); err != nil {
				fail(c, "input=%s: %v", ext.InputTypeOverride, err)
				continue
			}
			if c.Result, err = a.objectType(p, ext.ResultTypeOverride); err != nil {
				fail(c, "result=%s: %v", ext.ResultTypeOverride, err)
				continue
			}
			c.Kind, err = a.kindOf(c.Input)
		case "get":
			c.Type = resource.View
			if ext.ResultTypeOverride == "" {
				fail(c, "a view (verb=get) needs result=")
				continue
			}
			if c.Result, err = a.objectType(p, ext.ResultTypeOverride); err != nil {
				fail(c, "result=%s: %v", ext.ResultTypeOverride, err)
				continue
			}
			c.Kind, err = a.kindOf(c.Result)
		default:
			fail(c, "verb %s is not supported on the custom subresource %s: an action is verb=create (with input= and result=), a view verb=get (with result=), a stream +%s", ext.VerbType, c.Name, markers.StreamName)
			continue
		}
		if err != nil {
			fail(c, "%v", err)
			continue
		}
		out = append(out, c)
	}
	for _, s := range streams {
		c := &customModel{Name: s.Subresource, Method: s.Method, Type: resource.Stream, Text: s.Text, Pos: typeMarkerPosition(p.Dir, t.Name.Name, s.Text)}
		if slices.Contains(notCustom, c.Name) {
			fail(c, "%s is the server's own subresource", c.Name)
			continue
		}
		var err error
		if c.Input, err = a.objectType(p, s.Input); err != nil {
			fail(c, "input=%s: %v", s.Input, err)
			continue
		}
		if err := queryOptions(c.Input); err != nil {
			fail(c, "input=%s: %v", s.Input, err)
			continue
		}
		c.Kind, err = a.kindOf(t)
		if err != nil {
			fail(c, "%v", err)
			continue
		}
		out = append(out, c)
	}
	for i, c := range out {
		for _, prev := range out[:i] {
			if prev.Name == c.Name {
				fail(c, "subresource %s is declared twice", c.Name)
			}
			if prev.Method == c.Method {
				fail(c, "method %s is declared twice", c.Method)
			}
		}
	}
	return out, errors.Join(errs...)
}

// genclientMethodText is the +genclient:method marker of method in lines.
func genclientMethodText(lines []string, method string) string {
	for _, l := range lines {
		l = strings.TrimSpace(l)
		rest, ok := strings.CutPrefix(l, "+genclient:method=")
		if ok && strings.TrimSpace(strings.Split(rest, ",")[0]) == method {
			return l
		}
	}
	return "+genclient:method=" + method
}

// objectType finds the type name names, a type of p or path.Type, and
// checks that it is a runtime.Object the server can encode.
func (a *analyzer) objectType(p *types.Package, name string) (*types.Type, error) {
	pkg, typeName := p, name
	if i := strings.LastIndex(name, "."); i >= 0 {
		pkg, typeName = a.universe[name[:i]], name[i+1:]
		if pkg == nil {
			return nil, fmt.Errorf("package %s is not loaded: is it an API package of this module or imported by one?", name[:i])
		}
	}
	t := pkg.Types[typeName]
	if t == nil {
		return nil, fmt.Errorf("no type %s in %s", typeName, pkg.Path)
	}
	if t.Kind != types.Struct || !hasEmbedded(t, metav1Pkg, "TypeMeta") {
		return nil, fmt.Errorf("%s is not a runtime.Object: it must be a struct embedding metav1.TypeMeta", t.Name)
	}
	if _, ok := t.Methods["DeepCopyObject"]; !ok {
		return nil, fmt.Errorf("%s is not a runtime.Object: no DeepCopyObject method: add +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object", t.Name)
	}
	return t, nil
}

// kindOf is the group-version-kind of t, the group being its package's
// +groupName.
func (a *analyzer) kindOf(t *types.Type) (metav1.GroupVersionKind, error) {
	pkg := a.universe[t.Name.Package]
	var comments []string
	if pkg != nil {
		comments = pkg.Comments
	}
	group, ok, err := apidefinitions.GroupNameForPackage(comments)
	if err != nil {
		return metav1.GroupVersionKind{}, fmt.Errorf("%s: +groupName: %w", t.Name.Package, err)
	}
	if !ok {
		return metav1.GroupVersionKind{}, fmt.Errorf("%s has no +groupName, so %s has no group-version-kind", t.Name.Package, t.Name.Name)
	}
	return metav1.GroupVersionKind{Group: group, Version: path.Base(t.Name.Package), Kind: t.Name.Name}, nil
}

// queryOptions checks that a stream's options type has only fields a
// query string can carry, as a ParameterCodec decodes them.
func queryOptions(t *types.Type) error {
	var errs []error
	for _, m := range t.Members {
		if m.Embedded && m.Type.Name.Package == metav1Pkg && m.Type.Name.Name == "TypeMeta" {
			continue
		}
		if !queryType(m.Type) {
			errs = append(errs, fmt.Errorf("field %s of type %s cannot be a query parameter: only strings, bools, integers, pointers to them and []string can", m.Name, m.Type.Name))
		}
	}
	return errors.Join(errs...)
}

func queryType(t *types.Type) bool {
	for t.Kind == types.Alias {
		t = t.Underlying
	}
	switch t.Kind {
	case types.Builtin:
		return slices.Contains(queryKinds, t.Name.Name)
	case types.Pointer:
		e := t.Elem
		for e.Kind == types.Alias {
			e = e.Underlying
		}
		return e.Kind == types.Builtin && slices.Contains(queryKinds, e.Name.Name)
	case types.Slice:
		e := t.Elem
		for e.Kind == types.Alias {
			e = e.Underlying
		}
		return e.Kind == types.Builtin && e.Name.Name == "string"
	}
	return false
}

// openAPIName is the key openapi-gen gives t.
func openAPIName(t *types.Type) string {
	if t == nil {
		return ""
	}
	return t.Name.Package + "." + t.Name.Name
}

// customNamed is r's custom subresource served by method, or nil.
func customNamed(r *resourceModel, method string) *customModel {
	for _, c := range r.Custom {
		if c.Method == method {
			return c
		}
	}
	return nil
}

// customNames names r's subresource methods for messages, after the
// hooks'.
func customNames(r *resourceModel) string {
	if len(r.Custom) == 0 {
		return ""
	}
	var names []string
	for _, c := range r.Custom {
		names = append(names, c.Method)
	}
	return ", and its subresource methods " + strings.Join(names, ", ")
}

// signature is the signature c's method must have on the hooks type of
// kind (the qualified type name), as signatureString writes it.
func (c *customModel) signature(kind string) string {
	req := "*" + hookPkg + ".Request"
	switch c.Type {
	case resource.Action:
		return fmt.Sprintf("func(%s, *%s, *%s) (*%s, error)", req, kind, c.Input.Name, c.Result.Name)
	case resource.View:
		return fmt.Sprintf("func(%s, *%s) (*%s, error)", req, kind, c.Result.Name)
	default:
		return fmt.Sprintf("func(%s, *%s, *%s, io.Writer) error", req, kind, c.Input.Name)
	}
}

// shortSignature is the method c's kind r needs, as its author writes it.
func (c *customModel) shortSignature(r *resourceModel) string {
	short := func(t *types.Type) string { return "*" + path.Base(t.Name.Package) + "." + t.Name.Name }
	head := fmt.Sprintf("func (%s) %s(req *hook.Request, obj %s", r.Kind, c.Method, short(r.Type))
	switch c.Type {
	case resource.Action:
		return fmt.Sprintf("%s, in %s) (%s, error)", head, short(c.Input), short(c.Result))
	case resource.View:
		return fmt.Sprintf("%s) (%s, error)", head, short(c.Result))
	default:
		return fmt.Sprintf("%s, opts %s, w io.Writer) error", head, short(c.Input))
	}
}

// unimplementedCustom is an error for each custom subresource no hooks
// method serves, at its marker.
func unimplementedCustom(base string, gvs []*groupVersion) error {
	var errs []error
	for _, gv := range gvs {
		for _, r := range gv.Resources {
			for _, c := range r.Custom {
				if c.Implemented {
					continue
				}
				where := "no hooks package (--hooks-pkg)"
				if base != "" {
					where = "the hooks package " + path.Join(base, gv.GroupDir, gv.Version)
				}
				err := fmt.Errorf("%s: subresource %s of %s has no method %s.%s in %s: add %s", c.Text, c.Name, r.Kind, r.Kind, c.Method, where, c.shortSignature(r))
				if c.Pos != "" {
					err = fmt.Errorf("%s: %w", c.Pos, err)
				}
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// typeMarkerPosition is "file:line" of the marker text in the comment
// block above the declaration of type name in the package in dir, or
// else of the first line holding it (markerPosition): kinds often carry
// the same marker.
func typeMarkerPosition(dir, name, text string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || strings.HasSuffix(f, "_test.go") {
			continue
		}
		lines := strings.Split(string(b), "\n")
		for i, l := range lines {
			if !strings.HasPrefix(strings.TrimSpace(l), "type "+name+" ") {
				continue
			}
			for j := i - 1; j >= 0; j-- {
				c, ok := strings.CutPrefix(strings.TrimSpace(lines[j]), "//")
				if !ok {
					break
				}
				if strings.TrimSpace(c) == text {
					return fmt.Sprintf("%s:%d", f, j+1)
				}
			}
		}
	}
	return markerPosition(dir, text)
}
