package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/mod/modfile"
	"k8s.io/gengo/v2/namer"
	"k8s.io/gengo/v2/types"
)

// kindData is what the templates of `loom create api` are rendered with.
type kindData struct {
	Module string
	// Group is the API group; GroupDir its first label, the directory
	// under apis/ (and the clientset's accessor prefix).
	Group, GroupDir string
	Version         string
	Kind            string
	// Plural is the kind's plural as client-gen names its methods
	// (Orders); Resource as URLs name it (orders). Both are gengo's
	// plural namers, which client-gen and apiserver-gen use.
	Plural, Resource string
	// Accessor is the clientset's group-version method (ShopV1).
	Accessor   string
	Namespaced bool
	// NewPackage is set when the group version's doc.go is written too.
	NewPackage bool
}

func runCreateAPI(dir string, args []string, stdout, stderr io.Writer) error {
	d := kindData{}
	fs := pflag.NewFlagSet("loom create api", pflag.ContinueOnError)
	fs.StringVar(&d.Group, "group", "", "the API group, a DNS subdomain with a dot, e.g. shop.example.com")
	fs.StringVar(&d.Version, "version", "", "the API version, e.g. v1, v1beta2")
	fs.StringVar(&d.Kind, "kind", "", "the kind, UpperCamelCase, e.g. Order")
	fs.BoolVar(&d.Namespaced, "namespaced", true, "objects live in namespaces; false: cluster-scoped")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}

	// Every check before any write.
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return usageErrorf("no go.mod in %s: run loom create api in the root of the module (loom init writes one)", dir)
	}
	if d.Module = modfile.ModulePath(gomod); d.Module == "" {
		return usageErrorf("%s has no module line: run loom create api in the root of a module", filepath.Join(dir, "go.mod"))
	}
	for _, check := range []func() error{
		func() error { return checkGroup(d.Group) },
		func() error { return checkVersion(d.Version) },
		func() error { return checkKind(d.Kind) },
	} {
		if err := check(); err != nil {
			return err
		}
	}
	d.GroupDir, _, _ = strings.Cut(d.Group, ".")
	d.Accessor = namer.IC(d.GroupDir) + namer.IC(d.Version)
	t := &types.Type{Name: types.Name{Name: d.Kind}}
	d.Plural = namer.NewPublicPluralNamer(nil).Name(t)
	d.Resource = namer.NewAllLowercasePluralNamer(nil).Name(t)

	pkgDir := path.Join("apis", d.GroupDir, d.Version)
	group, err := packageGroup(filepath.Join(dir, filepath.FromSlash(pkgDir)))
	if err != nil {
		return err
	}
	switch {
	case group == "":
		d.NewPackage = true
	case group != d.Group:
		return usageErrorf("%s already holds group %s: a group's first label names its directory, so %s cannot go there too", pkgDir, group, d.Group)
	}
	if err := checkKindIsNew(dir, d); err != nil {
		return err
	}

	lower := strings.ToLower(d.Kind)
	todo := []struct{ path, tmpl string }{
		{path.Join(pkgDir, lower+"_types.go"), "types.go.tmpl"},
		{path.Join("test", d.GroupDir+"_"+d.Version+"_"+lower+"_test.go"), "kind_test.go.tmpl"},
		{path.Join("examples", d.GroupDir+"_"+d.Version+"_"+lower+".yaml"), "example.yaml.tmpl"},
	}
	if d.NewPackage {
		todo = append([]struct{ path, tmpl string }{{path.Join(pkgDir, "doc.go"), "doc.go.tmpl"}}, todo...)
	}
	var files []file
	for _, f := range todo {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(f.path))); err == nil {
			return usageErrorf("%s exists: create api writes only new files", f.path)
		}
		out, err := render(f.path, f.tmpl, d)
		if err != nil {
			return err
		}
		files = append(files, out)
	}
	if err := writeFiles(dir, files, stdout); err != nil {
		return err
	}
	typesFile, testFile, exampleFile := files[len(files)-3].path, files[len(files)-2].path, files[len(files)-1].path
	fmt.Fprintf(stdout, "\nNext: edit %s (replace %sSpec's placeholder field with yours), then make generate && make test.\n"+
		"The test (%s) and the example (%s) name no spec field, so they survive that edit;\n"+
		"a field you make required needs a value in the example, and a field whose zero value your markers refuse\n"+
		"(a MinLength, an Enum without \"\") needs one in the test's new%s%s.\n",
		typesFile, d.Kind, testFile, exampleFile, d.Accessor, d.Kind)
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(apiServicesManifest))); err == nil && d.NewPackage {
		fmt.Fprintf(stdout, "%s/%s is a new group version: make manifests adds its APIService to deploy/.\n", d.Group, d.Version)
	}
	return nil
}

var groupNameMarker = regexp.MustCompile(`(?m)^// \+groupName=(\S*)`)

// packageGroup returns the +groupName of the API package in dir, "" when
// there is none yet.
func packageGroup(dir string) (string, error) {
	src, err := os.ReadFile(filepath.Join(dir, "doc.go"))
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	m := groupNameMarker.FindSubmatch(src)
	if m == nil {
		return "", usageErrorf("%s has no +groupName marker: it is not an API package loom can add a kind to", filepath.Join(dir, "doc.go"))
	}
	return string(m[1]), nil
}

// checkKindIsNew refuses a kind its group version already has, and one
// another version of its group has: a kind served in several versions
// needs a storage version and conversions, which loom does not write.
func checkKindIsNew(dir string, d kindData) error {
	versions, err := filepath.Glob(filepath.Join(dir, "apis", d.GroupDir, "*"))
	if err != nil {
		return err
	}
	for _, vdir := range versions {
		if g, err := packageGroup(vdir); err != nil || g != d.Group {
			continue
		}
		file, err := declares(vdir, d.Kind)
		if err != nil {
			return err
		}
		if file == "" {
			continue
		}
		rel, _ := filepath.Rel(dir, file)
		if filepath.Base(vdir) == d.Version {
			return usageErrorf("kind %s already exists in %s/%s (%s): a kind is created once per group version", d.Kind, d.Group, d.Version, filepath.ToSlash(rel))
		}
		return usageErrorf("kind %s already exists in %s/%s (%s): serving a kind in several versions needs a storage version and conversions, written by hand (apiloom's docs/versions.md)", d.Kind, d.Group, filepath.Base(vdir), filepath.ToSlash(rel))
	}
	return nil
}

// declares returns the file in the Go package in dir that declares a type
// named kind or kind+"List", "" if none does.
func declares(dir, kind string) (string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return "", err
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return "", usageErrorf("%s does not parse (%v): fix it before adding a kind", f, err)
		}
		for _, decl := range af.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				if name := s.(*ast.TypeSpec).Name.Name; name == kind || name == kind+"List" {
					return f, nil
				}
			}
		}
	}
	return "", nil
}
