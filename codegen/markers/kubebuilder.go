package markers

import (
	"fmt"
	"strconv"
	"strings"
)

// Names of the kubebuilder markers this package interprets.
const (
	ResourceName          = "kubebuilder:resource"
	StatusSubresourceName = "kubebuilder:subresource:status"
	SelectableFieldName   = "kubebuilder:selectablefield"
	PrintColumnName       = "kubebuilder:printcolumn"
	StorageVersionName    = "kubebuilder:storageversion"
)

// Scope values of +kubebuilder:resource:scope.
const (
	ScopeNamespaced = "Namespaced"
	ScopeCluster    = "Cluster"
)

// Resource is +kubebuilder:resource. Empty fields were not written.
type Resource struct {
	Path       string   // path=: the plural resource name
	Singular   string   // singular=
	Scope      string   // scope=: ScopeNamespaced or ScopeCluster
	ShortNames []string // shortName=a;b
	Categories []string // categories=a;b
}

// PrintColumn is one +kubebuilder:printcolumn. Its values are as written:
// whether Type and JSONPath make sense is for the generator to decide.
type PrintColumn struct {
	Name        string // name=, required
	Type        string // type=, required
	JSONPath    string // JSONPath=, required, e.g. ".spec.engine"
	Description string // description=
	Format      string // format=
	Priority    int32  // priority=
	// Text is the marker as written, for error messages.
	Text string
}

// Type is what the kubebuilder markers on one type say.
type Type struct {
	// Resource is nil when the type has no +kubebuilder:resource marker.
	Resource *Resource
	// StatusSubresource is true when +kubebuilder:subresource:status is present.
	StatusSubresource bool
	// SelectableFields are the JSONPath arguments of every
	// +kubebuilder:selectablefield, in the order written, e.g. ".spec.engine".
	SelectableFields []string
	// PrintColumns are every +kubebuilder:printcolumn, in the order written.
	PrintColumns []PrintColumn
	// Scale is nil when the type has no +kubebuilder:subresource:scale.
	Scale *Scale
	// StorageVersion is true when +kubebuilder:storageversion is present:
	// of a kind's versions, this one is stored.
	StorageVersion bool
}

// ParseType reads the kubebuilder markers from a type's comment lines.
// Unknown argument keys and near-miss marker names become warnings; a
// malformed or contradictory marker is an error wrapping ErrMalformed.
func ParseType(lines []string) (Type, []string, error) {
	var (
		out   Type
		warns []string
	)
	for _, line := range NearMisses(lines, ResourceName, StatusSubresourceName, SelectableFieldName, PrintColumnName, ScaleSubresourceName, StorageVersionName, StreamName) {
		warns = append(warns, fmt.Sprintf("%s: ignored: marker names are case-sensitive", line))
	}

	res, err := Find(lines, ResourceName)
	if err != nil {
		return out, nil, err
	}
	switch len(res) {
	case 0:
	case 1:
		r, w, err := parseResource(res[0])
		if err != nil {
			return out, nil, err
		}
		out.Resource, warns = r, append(warns, w...)
	default:
		return out, nil, fmt.Errorf("%w: +%s appears %d times", ErrMalformed, ResourceName, len(res))
	}

	status, err := Find(lines, StatusSubresourceName)
	if err != nil {
		return out, nil, err
	}
	for _, m := range status {
		if len(m.Args) > 0 {
			return out, nil, malformed(m.Text, "takes no arguments")
		}
		out.StatusSubresource = true
	}

	fields, err := Find(lines, SelectableFieldName)
	if err != nil {
		return out, nil, err
	}
	for _, m := range fields {
		path := ""
		for _, a := range m.Args {
			if a.Key == "JSONPath" {
				path = a.Value
				continue
			}
			warns = append(warns, fmt.Sprintf("%s: ignoring unknown argument %q", m.Text, a.Key))
		}
		if path == "" {
			return out, nil, malformed(m.Text, "JSONPath is required")
		}
		out.SelectableFields = append(out.SelectableFields, path)
	}

	columns, err := Find(lines, PrintColumnName)
	if err != nil {
		return out, nil, err
	}
	for _, m := range columns {
		c, w, err := parsePrintColumn(m)
		if err != nil {
			return out, nil, err
		}
		out.PrintColumns, warns = append(out.PrintColumns, c), append(warns, w...)
	}

	scale, w, err := parseScale(lines)
	if err != nil {
		return out, nil, err
	}
	out.Scale, warns = scale, append(warns, w...)

	sv, err := Find(lines, StorageVersionName)
	if err != nil {
		return out, nil, err
	}
	for _, m := range sv {
		if len(m.Args) > 0 {
			return out, nil, malformed(m.Text, "+"+StorageVersionName+" takes no arguments")
		}
	}
	out.StorageVersion = len(sv) > 0
	return out, warns, nil
}

// parsePrintColumn reads +kubebuilder:printcolumn, with controller-tools'
// argument names.
func parsePrintColumn(m Marker) (PrintColumn, []string, error) {
	c := PrintColumn{Text: m.Text}
	var warns []string
	for _, a := range m.Args {
		switch a.Key {
		case "name":
			c.Name = a.Value
		case "type":
			c.Type = a.Value
		case "JSONPath":
			c.JSONPath = a.Value
		case "description":
			c.Description = a.Value
		case "format":
			c.Format = a.Value
		case "priority":
			p, err := strconv.ParseInt(a.Value, 10, 32)
			if err != nil {
				return c, nil, malformed(m.Text, fmt.Sprintf("priority %q is not a 32-bit integer", a.Value))
			}
			c.Priority = int32(p)
		case "":
			return c, nil, malformed(m.Text, "expected key=value arguments")
		default:
			warns = append(warns, fmt.Sprintf("%s: ignoring unknown argument %q", m.Text, a.Key))
		}
	}
	for _, req := range []struct{ key, value string }{{"name", c.Name}, {"type", c.Type}, {"JSONPath", c.JSONPath}} {
		if req.value == "" {
			return c, nil, malformed(m.Text, req.key+" is required")
		}
	}
	return c, warns, nil
}

func parseResource(m Marker) (*Resource, []string, error) {
	var (
		r     Resource
		warns []string
	)
	for _, a := range m.Args {
		switch a.Key {
		case "path":
			r.Path = a.Value
		case "singular":
			r.Singular = a.Value
		case "scope":
			if a.Value != ScopeNamespaced && a.Value != ScopeCluster {
				return nil, nil, malformed(m.Text, "scope must be "+ScopeNamespaced+" or "+ScopeCluster)
			}
			r.Scope = a.Value
		case "shortName":
			r.ShortNames = a.Values()
		case "categories":
			r.Categories = a.Values()
		case "":
			return nil, nil, malformed(m.Text, "expected key=value arguments")
		default:
			warns = append(warns, fmt.Sprintf("%s: ignoring unknown argument %q", m.Text, a.Key))
		}
	}
	for _, v := range []string{r.Path, r.Singular} {
		if v != "" && strings.ToLower(v) != v {
			return nil, nil, malformed(m.Text, "resource names must be lowercase")
		}
	}
	return &r, warns, nil
}
