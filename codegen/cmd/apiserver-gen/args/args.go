// Package args holds apiserver-gen's command-line arguments.
package args

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/spf13/pflag"
)

// Args are apiserver-gen's arguments. The positional arguments (the API
// packages to read) are passed to the generator separately, as gengo does.
type Args struct {
	// OutputDir is the directory the generated packages are written under.
	OutputDir string
	// OutputPkg is the Go import path of OutputDir.
	OutputPkg string
	// OpenAPIPkg is the import path of openapi-gen's output, whose
	// GetOpenAPIDefinitions the install file registers. Empty means the
	// "openapi" sibling of OutputPkg; use OpenAPIPackage to read it.
	OpenAPIPkg string
	// GoHeaderFile is a file whose contents start every generated file.
	GoHeaderFile string
	// PluralExceptions are Type:PluralType pairs, the same flag client-gen
	// takes; pass both tools the same list so URLs agree.
	PluralExceptions []string
	// Builtins is the file describing the built-in kinds served from
	// upstream packages (builtin/apis.yaml); empty for none.
	Builtins string
	// HooksPkg is the import path under which the kinds' hooks live,
	// one package per group-version (<HooksPkg>/<group>/<version>);
	// empty for none.
	HooksPkg string
	// ClientsetDir and ClientsetPkg are the directory and import path of
	// the versioned clientset client-gen writes afterwards
	// (generated/clientset/versioned): a kind with a stream gets its
	// <kind>_expansion.go there, the method client-gen cannot write.
	// Empty for none.
	ClientsetDir, ClientsetPkg string
}

// New returns the default arguments.
func New() *Args {
	return &Args{}
}

// AddFlags adds the generator's flags to fs.
func (a *Args) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&a.OutputDir, "output-dir", a.OutputDir,
		"the base directory under which to generate results")
	fs.StringVar(&a.OutputPkg, "output-pkg", a.OutputPkg,
		"the Go import path of --output-dir")
	fs.StringVar(&a.OpenAPIPkg, "openapi-pkg", a.OpenAPIPkg,
		`the Go import path of openapi-gen's output (default: the "openapi" sibling of --output-pkg)`)
	fs.StringVar(&a.GoHeaderFile, "go-header-file", a.GoHeaderFile,
		"the path to a file containing boilerplate header text; the string \"YEAR\" will be replaced with the current 4-digit year")
	fs.StringSliceVar(&a.PluralExceptions, "plural-exceptions", a.PluralExceptions,
		"comma-separated Type:PluralizedType pairs, as given to client-gen")
	fs.StringVar(&a.HooksPkg, "hooks-pkg", a.HooksPkg,
		"the Go import path under which the kinds' hooks live, <hooks-pkg>/<group>/<version> (package server/hook; see docs/hooks.md); empty for none")
	fs.StringVar(&a.ClientsetDir, "clientset-dir", a.ClientsetDir,
		"the directory of the versioned clientset client-gen writes afterwards, into whose typed packages the stream methods go (<kind>_expansion.go); empty for none")
	fs.StringVar(&a.ClientsetPkg, "clientset-pkg", a.ClientsetPkg,
		"the Go import path of --clientset-dir")
	fs.StringVar(&a.Builtins, "builtins", a.Builtins,
		"a YAML file naming built-in kinds to serve from upstream packages (k8s.io/api) and their markers (see builtin/apis.yaml)")
}

// Validate checks the arguments.
func (a *Args) Validate() error {
	if a.OutputDir == "" {
		return errors.New("--output-dir must be specified")
	}
	if a.OutputPkg == "" {
		return errors.New("--output-pkg must be specified")
	}
	if a.OpenAPIPkg == "" && path.Dir(a.OutputPkg) == "." {
		return fmt.Errorf("--openapi-pkg must be specified: --output-pkg %q has no parent to derive it from", a.OutputPkg)
	}
	if (a.ClientsetDir == "") != (a.ClientsetPkg == "") {
		return errors.New("--clientset-dir and --clientset-pkg go together")
	}
	_, err := a.PluralExceptionMap()
	return err
}

// OpenAPIPackage returns the import path of openapi-gen's output.
func (a *Args) OpenAPIPackage() string {
	if a.OpenAPIPkg != "" {
		return a.OpenAPIPkg
	}
	return path.Join(path.Dir(a.OutputPkg), "openapi")
}

// PluralExceptionMap returns PluralExceptions as a map from type name to
// plural, the form gengo's plural namer takes.
func (a *Args) PluralExceptionMap() (map[string]string, error) {
	m := make(map[string]string, len(a.PluralExceptions))
	for _, e := range a.PluralExceptions {
		kind, plural, ok := strings.Cut(e, ":")
		if !ok || kind == "" || plural == "" || strings.Contains(plural, ":") {
			return nil, fmt.Errorf("--plural-exceptions: %q is not Type:PluralType", e)
		}
		m[kind] = plural
	}
	return m, nil
}
