package generators

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	clientgenutil "k8s.io/code-generator/cmd/client-gen/generators/util"
	"k8s.io/code-generator/pkg/apidefinitions"
	codegennamer "k8s.io/code-generator/pkg/namer"
	"k8s.io/gengo/v2/namer"
	"k8s.io/gengo/v2/types"

	"github.com/apiloom/apiloom/codegen/markers"
	"github.com/apiloom/apiloom/server/resource"
)

// Import paths of the apimachinery types the model recognises.
const metav1Pkg = "k8s.io/apimachinery/pkg/apis/meta/v1"

// groupVersion is one input package that has resources to serve.
type groupVersion struct {
	Pkg      *types.Package
	Group    string // from +groupName, e.g. "example.apiloom.dev"
	GroupDir string // the directory under apis/, e.g. "example"
	Version  string // the package directory, e.g. "v1"
	// Resources are sorted by kind.
	Resources []*resourceModel
}

// apiVersion is the group-version as objects' apiVersion names it: the
// version alone for the core group ("v1").
func (gv *groupVersion) apiVersion() string {
	if gv.Group == "" {
		return gv.Version
	}
	return gv.Group + "/" + gv.Version
}

// resourceModel is everything generated for one +genclient type.
type resourceModel struct {
	Type *types.Type

	Kind       string
	ListKind   string
	Plural     string
	Singular   string
	Namespaced bool
	ShortNames []string
	Categories []string
	HasStatus  bool
	// OpenAPIName is the key openapi-gen gives the type.
	OpenAPIName string
	// Schema is the JSON of the kind's openAPIV3Schema, as controller-gen
	// writes it (package crdschema).
	Schema string

	// SelectableFields are in the order the markers were written.
	SelectableFields []*fieldGetter
	// PrintColumns are the validated +kubebuilder:printcolumn markers, in
	// the order written.
	PrintColumns []resource.PrintColumn
	// CopyStatus is how the status is copied; copyNone without status.
	CopyStatus statusCopy
	// SpecMembers are the Go member names SpecEqual compares.
	SpecMembers []string
	// Scale is the checked +kubebuilder:subresource:scale; nil without.
	Scale *resource.ScaleInfo
	// StorageVersionMarker is true when the type has
	// +kubebuilder:storageversion.
	StorageVersionMarker bool
	// StoredAs is the storage version of the kind when it has several
	// versions and it is not this one (versions.go); nil otherwise.
	StoredAs *storedAs
	// BuiltIn is true for a kind of builtin/apis.yaml (an upstream type).
	BuiltIn bool
	// Validate is the function with the kind's validation rules (a
	// built-in kind's, from builtin/apis.yaml); nil for none.
	Validate *types.Type
	// Printer is the variable holding the kind's own Table (a built-in
	// kind's, from builtin/apis.yaml); nil for the printer columns.
	Printer *types.Type
	// TTL is how long objects live after their last write; 0 for ever.
	TTL time.Duration
	// Default, Prepare and Finalize are the kind's other hooks (a
	// built-in kind's, from builtin/apis.yaml); nil for none.
	Default, Prepare, Finalize *types.Type
	// ValidateName is the kind's rule for object names (a built-in
	// kind's); nil for the DNS-subdomain rule.
	ValidateName *types.Type
	// ValidateStatus is the kind's rule for writes to its status
	// subresource (a built-in kind's); nil for none.
	ValidateStatus *types.Type
	// HasFinalize is true when Finalize is set.
	HasFinalize bool
	// Strategy are the facts of the kind's registry strategy (a built-in
	// kind's, from builtin/apis.yaml); zero for a custom resource's.
	Strategy resource.Strategy
	// Hooks are the kind's hooks from its hooks package (hooks.go); nil
	// for none.
	Hooks *hooksModel
	// Custom are the kind's own subresources (custom.go), in the order
	// their markers are written.
	Custom []*customModel
}

// analyzer turns loaded packages into the model, collecting warnings and
// every error rather than stopping at the first.
type analyzer struct {
	plural namer.Namer
	warns  []string
	// universe finds the packages of qualified type names in markers.
	universe types.Universe
}

func newAnalyzer(pluralExceptions map[string]string) *analyzer {
	return &analyzer{
		// The same namer client-gen uses for the URL resource name, so the
		// server serves the path the generated clientset requests.
		plural: codegennamer.NewTagOverrideNamer("resourceName", namer.NewAllLowercasePluralNamer(pluralExceptions)),
	}
}

func (a *analyzer) warnf(format string, args ...any) {
	a.warns = append(a.warns, fmt.Sprintf(format, args...))
}

// groupVersion reads one package. It returns nil, nil for a package with
// no +genclient types.
func (a *analyzer) groupVersion(p *types.Package) (*groupVersion, error) {
	var candidates []*types.Type
	var errs, strays []error
	for _, t := range p.Types {
		tags, err := clientgenutil.ParseClientGenTags(commentLines(t))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", t.Name, err))
			continue
		}
		if tags.GenerateClient && !tags.NoVerbs {
			candidates = append(candidates, t)
			continue
		}
		// A stream of no kind would be silently ignored.
		if ms, _ := markers.Find(commentLines(t), markers.StreamName); len(ms) > 0 {
			where := ms[0].Text
			if pos := typeMarkerPosition(p.Dir, t.Name.Name, where); pos != "" {
				where = pos + ": " + where
			}
			strays = append(strays, fmt.Errorf("%s: %s: +%s is for a +genclient kind", t.Name, where, markers.StreamName))
		}
	}
	slices.SortFunc(strays, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(candidates) == 0 {
		return nil, errors.Join(strays...)
	}
	errs = strays

	group, ok, err := apidefinitions.GroupNameForPackage(p.Comments)
	if err != nil {
		return nil, fmt.Errorf("%s: +groupName: %w", p.Path, err)
	}
	if !ok || group == "" {
		return nil, fmt.Errorf("%s: doc.go has no +groupName=<group> comment", p.Path)
	}
	gv := &groupVersion{
		Pkg:      p,
		Group:    group,
		GroupDir: path.Base(path.Dir(p.Path)),
		Version:  path.Base(p.Path),
	}
	sort.Slice(candidates, func(i, j int) bool { return candidates[i].Name.Name < candidates[j].Name.Name })
	for _, t := range candidates {
		r, err := a.resource(p, t)
		if err != nil {
			// One line per problem, each naming the type.
			each := []error{err}
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				each = j.Unwrap()
			}
			for _, e := range each {
				errs = append(errs, fmt.Errorf("%s: %w", t.Name, e))
			}
			continue
		}
		gv.Resources = append(gv.Resources, r)
	}
	if err := checkIdentifiers(gv); err != nil {
		errs = append(errs, err)
	}
	return gv, errors.Join(errs...)
}

// resource reads one +genclient type, its markers being its comments,
// and its custom subresources (custom.go): a built-in kind's are the
// server's own (a ServiceAccount's token).
func (a *analyzer) resource(p *types.Package, t *types.Type) (*resourceModel, error) {
	lines := commentLines(t)
	r, err := a.resourceFrom(p, t, lines)
	if err != nil {
		return nil, err
	}
	tags, err := clientgenutil.ParseClientGenTags(lines)
	if err != nil {
		return nil, err
	}
	streams, warns, err := markers.ParseStreams(lines)
	if err != nil {
		return nil, err
	}
	for _, w := range warns {
		a.warnf("%s: %s", t.Name, w)
	}
	if r.Custom, err = a.customSubresources(p, t, lines, tags, streams); err != nil {
		return nil, err
	}
	return r, nil
}

// resourceFrom reads one +genclient type whose marker lines are lines.
func (a *analyzer) resourceFrom(p *types.Package, t *types.Type, lines []string) (*resourceModel, error) {
	if t.Kind != types.Struct {
		return nil, fmt.Errorf("+genclient type must be a struct, not %s", t.Kind)
	}
	if !hasEmbedded(t, metav1Pkg, "ObjectMeta") {
		return nil, errors.New("+genclient type must embed metav1.ObjectMeta")
	}
	if _, ok := t.Methods["DeepCopyObject"]; !ok {
		return nil, errors.New("no DeepCopyObject method: add +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object and run deepcopy-gen first")
	}
	listKind := t.Name.Name + "List"
	if _, ok := p.Types[listKind]; !ok {
		return nil, fmt.Errorf("no %s type: every resource needs its list type", listKind)
	}
	tags, err := clientgenutil.ParseClientGenTags(lines)
	if err != nil {
		return nil, err
	}
	kb, warns, err := markers.ParseType(lines)
	if err != nil {
		return nil, err
	}
	for _, w := range warns {
		a.warnf("%s: %s", t.Name, w)
	}

	r := &resourceModel{
		Type:        t,
		Kind:        t.Name.Name,
		ListKind:    listKind,
		Plural:      a.plural.Name(t),
		Singular:    strings.ToLower(t.Name.Name),
		Namespaced:  !tags.NonNamespaced,
		HasStatus:   member(t, "Status") != nil && !tags.NoStatus,
		OpenAPIName: t.Name.Package + "." + t.Name.Name,
	}
	if res := kb.Resource; res != nil {
		if err := r.applyResourceMarker(res); err != nil {
			return nil, err
		}
	}
	if kb.StatusSubresource && !r.HasStatus {
		why := "the type has no Status member"
		if tags.NoStatus {
			why = "+genclient:noStatus is set, so the generated client has no UpdateStatus"
		}
		return nil, fmt.Errorf("+%s contradicts the type: %s", markers.StatusSubresourceName, why)
	}

	for _, jsonPath := range kb.SelectableFields {
		g, err := newFieldGetter(t, jsonPath)
		if err != nil {
			return nil, fmt.Errorf("+%s:JSONPath=%s: %w", markers.SelectableFieldName, jsonPath, err)
		}
		for _, prev := range r.SelectableFields {
			if prev.Key == g.Key {
				return nil, fmt.Errorf("+%s:JSONPath=%s given twice", markers.SelectableFieldName, jsonPath)
			}
		}
		r.SelectableFields = append(r.SelectableFields, g)
	}

	if r.PrintColumns, err = a.printColumns(t, kb.PrintColumns); err != nil {
		return nil, err
	}

	if kb.Scale != nil {
		if r.Scale, err = scaleInfo(t, kb.Scale); err != nil {
			if pos := markerPosition(p.Dir, kb.Scale.Text); pos != "" {
				err = fmt.Errorf("%s: %w", pos, err)
			}
			return nil, err
		}
	}

	if r.HasStatus {
		if r.CopyStatus, err = copyStatusFor(member(t, "Status").Type); err != nil {
			return nil, fmt.Errorf("status: %w", err)
		}
	}
	r.SpecMembers = specMembers(t, r.HasStatus)
	r.StorageVersionMarker = kb.StorageVersion
	return r, nil
}

// applyResourceMarker applies +kubebuilder:resource, refusing values that
// would make the server disagree with the generated clientset.
func (r *resourceModel) applyResourceMarker(res *markers.Resource) error {
	if res.Path != "" && res.Path != r.Plural {
		return fmt.Errorf("+%s:path=%s disagrees with the generated client, which requests %q: add +resourceName=%s so client-gen uses it too",
			markers.ResourceName, res.Path, r.Plural, res.Path)
	}
	if res.Singular != "" {
		r.Singular = res.Singular
	}
	switch {
	case res.Scope == markers.ScopeCluster && r.Namespaced:
		return fmt.Errorf("+%s:scope=Cluster needs +genclient:nonNamespaced, or the generated client will request namespaced URLs", markers.ResourceName)
	case res.Scope == markers.ScopeNamespaced && !r.Namespaced:
		return fmt.Errorf("+%s:scope=Namespaced contradicts +genclient:nonNamespaced", markers.ResourceName)
	}
	r.ShortNames = res.ShortNames
	r.Categories = res.Categories
	return nil
}

// commentLines are the lines client-gen reads markers from: the comment
// block before the type's doc comment, then the doc comment.
func commentLines(t *types.Type) []string {
	return append(append([]string(nil), t.SecondClosestCommentLines...), t.CommentLines...)
}

// member returns t's member called name, or nil.
func member(t *types.Type, name string) *types.Member {
	for i := range t.Members {
		if t.Members[i].Name == name {
			return &t.Members[i]
		}
	}
	return nil
}

func hasEmbedded(t *types.Type, pkg, name string) bool {
	for _, m := range t.Members {
		if m.Embedded && m.Type.Name.Package == pkg && m.Type.Name.Name == name {
			return true
		}
	}
	return false
}

// checkIdentifiers reports generated package-level names that collide.
func checkIdentifiers(gv *groupVersion) error {
	seen := map[string]string{"Install": "the package's Install function"}
	var errs []error
	add := func(name, what string) {
		if prev, ok := seen[name]; ok {
			errs = append(errs, fmt.Errorf("%s: generated name %s for %s collides with %s", gv.Pkg.Path, name, what, prev))
			return
		}
		seen[name] = what
	}
	for _, r := range gv.Resources {
		add(r.Kind, "the definition of "+r.Kind)
		add(fieldsFuncName(r), "the fields function of "+r.Kind)
		for _, f := range r.SelectableFields {
			if f.needsFunc() {
				add(f.funcName(r), "the getter of "+r.Kind+" field "+f.Key)
			}
		}
	}
	return errors.Join(errs...)
}
