package crdschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"golang.org/x/tools/go/packages"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-tools/pkg/crd"
	"sigs.k8s.io/controller-tools/pkg/loader"
	"sigs.k8s.io/controller-tools/pkg/markers"
)

// ErrInvalid is wrapped by the error Generate returns when the API packages
// have problems: unknown markers, marker values that do not fit their
// fields, types controller-gen cannot describe.
var ErrInvalid = errors.New("crdschema: invalid API package")

// Generate loads the Go packages matching patterns (import paths or ./dirs,
// as the go command takes them) and returns, for each of kinds, the compact
// JSON of the openAPIV3Schema controller-gen would write for it: the same
// parser, registry and post-processing (a top-level metadata of just
// {"type":"object"}). The JSON is deterministic (object keys sorted).
//
// Every problem is reported, each as "file:line:col: message", joined into
// one error wrapping ErrInvalid.
func Generate(patterns []string, kinds []schema.GroupVersionKind) (map[schema.GroupVersionKind]string, error) {
	roots, err := loader.LoadRoots(patterns...)
	if err != nil {
		return nil, fmt.Errorf("crdschema: loading %v: %w", patterns, err)
	}
	reg, err := Registry()
	if err != nil {
		return nil, err
	}
	p := &crd.Parser{
		Collector: &markers.Collector{Registry: reg},
		Checker:   &loader.TypeChecker{NodeFilters: []loader.NodeFilter{crd.Generator{}.CheckFilter()}},
	}
	crd.AddKnownTypes(p)
	for _, root := range roots {
		p.NeedPackage(root)
	}

	// Unknown markers first: a misspelt marker is the likelier cause of
	// any other error.
	problems := unknownMarkers(roots, reg)

	out := make(map[schema.GroupVersionKind]string, len(kinds))
	// Errors that follow from the package's own errors are left out.
	var missing, refused []error
	for _, gvk := range kinds {
		gk := gvk.GroupKind()
		p.NeedCRDFor(gk, nil)
		c, ok := p.CustomResourceDefinitions[gk]
		if !ok {
			missing = append(missing, fmt.Errorf("%s: controller-gen finds no such kind", gvk))
			continue
		}
		crd.FixTopLevelMetadata(c)
		refused = append(refused, refusedByAPIServer(c)...)
		s := versionSchema(c, gvk.Version)
		if s == nil {
			problems = append(problems, fmt.Errorf("%s: controller-gen made no schema for version %s", gvk.GroupKind(), gvk.Version))
			continue
		}
		b, err := json.Marshal(s)
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", gvk, err))
			continue
		}
		out[gvk] = string(b)
	}
	pkgErrs := packageErrors(roots)
	problems = append(problems, pkgErrs...)
	if len(pkgErrs) == 0 {
		problems = append(problems, missing...)
		problems = append(problems, refused...)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w:\n%w", ErrInvalid, errors.Join(problems...))
	}
	return out, nil
}

// versionSchema is the openAPIV3Schema of version in c, or nil.
func versionSchema(c apiextensionsv1.CustomResourceDefinition, version string) *apiextensionsv1.JSONSchemaProps {
	for _, v := range c.Spec.Versions {
		if v.Name == version && v.Schema != nil {
			return v.Schema.OpenAPIV3Schema
		}
	}
	return nil
}

// packageErrors are the errors controller-tools recorded on the root
// packages and their imports, sorted and without duplicates. Type errors
// are skipped as controller-gen skips them: partial type-checking makes
// spurious ones, and real ones fail the go build anyway.
func packageErrors(roots []*loader.Package) []error {
	raw := make([]*packages.Package, len(roots))
	for i, r := range roots {
		raw[i] = r.Package
	}
	seen := map[string]bool{}
	var msgs []string
	packages.Visit(raw, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			if e.Kind == packages.TypeError || seen[e.Error()] {
				continue
			}
			seen[e.Error()] = true
			msgs = append(msgs, e.Error())
		}
	})
	sort.Strings(msgs)
	errs := make([]error, len(msgs))
	for i, m := range msgs {
		errs[i] = errors.New(m)
	}
	return errs
}
