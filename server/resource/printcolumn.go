package resource

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/client-go/util/jsonpath"
)

// PrintColumn is one extra column of the resource's Table (what `kubectl
// get` prints), from +kubebuilder:printcolumn. It means what a CRD's
// additionalPrinterColumns entry means: the server evaluates JSONPath on
// each object and renders the result as Type.
type PrintColumn struct {
	// Name is the column header; kubectl prints it upper-cased.
	Name string
	// Type is one of the Column* constants. It decides how a value is
	// rendered: a "date" becomes the age ("5m"), an "integer" a number, a
	// "string" any value printed as text.
	Type string
	// Format is an optional OpenAPI format hint for clients ("int32",
	// "date-time", ...); the server does not interpret it.
	Format string
	// Description explains the column; empty means a description naming
	// the JSONPath.
	Description string
	// Priority 0 columns are always shown; kubectl shows the others only
	// with -o wide.
	Priority int32
	// JSONPath selects the value, in kubectl's JSONPath syntax without the
	// braces, e.g. ".spec.engine". A path that finds nothing in an object
	// gives an empty cell, never an error.
	JSONPath string
}

// Column types a PrintColumn may have: those of a CRD's printer columns.
const (
	ColumnString  = "string"
	ColumnInteger = "integer"
	ColumnNumber  = "number"
	ColumnBoolean = "boolean"
	ColumnDate    = "date"
)

// ErrInvalidPrintColumn is wrapped by every error PrintColumn.Validate and
// PrintColumn.Compile return.
var ErrInvalidPrintColumn = errors.New("resource: invalid printer column")

var (
	columnTypes   = []string{ColumnBoolean, ColumnDate, ColumnInteger, ColumnNumber, ColumnString}
	columnFormats = []string{"byte", "date", "date-time", "double", "float", "int32", "int64", "password"}
)

// Validate checks c the way kube-apiserver validates a CRD's printer
// column: a name, a known type and format, and a JSONPath that starts with
// "." and parses. It also refuses {range} and {end}, which CRDs accept:
// evaluating them mutates the compiled path, so a path shared by
// concurrent requests must not contain them.
func (c *PrintColumn) Validate() error {
	_, err := c.Compile()
	return err
}

// Compile validates c and returns its parsed JSONPath, ready to evaluate
// against an object's unstructured form. The path allows missing keys, so
// that an object without the field gives no result rather than an error.
// The result is safe for concurrent FindResults and PrintResults calls.
func (c *PrintColumn) Compile() (*jsonpath.JSONPath, error) {
	switch {
	case c.Name == "":
		return nil, fmt.Errorf("%w: name is required", ErrInvalidPrintColumn)
	case !slices.Contains(columnTypes, c.Type):
		return nil, fmt.Errorf("%w %q: type %q must be one of %s", ErrInvalidPrintColumn, c.Name, c.Type, strings.Join(columnTypes, ", "))
	case c.Format != "" && !slices.Contains(columnFormats, c.Format):
		return nil, fmt.Errorf("%w %q: format %q must be one of %s", ErrInvalidPrintColumn, c.Name, c.Format, strings.Join(columnFormats, ", "))
	case !strings.HasPrefix(c.JSONPath, "."):
		return nil, fmt.Errorf("%w %q: JSONPath %q must be a simple JSON path starting with '.'", ErrInvalidPrintColumn, c.Name, c.JSONPath)
	}
	// The same wrapping in braces kube-apiserver applies to a CRD's column.
	text := "{" + c.JSONPath + "}"
	tree, err := jsonpath.Parse(c.Name, text)
	if err != nil {
		return nil, fmt.Errorf("%w %q: JSONPath %q does not parse: %w", ErrInvalidPrintColumn, c.Name, c.JSONPath, err)
	}
	if id := findIdentifier(tree.Root); id != "" {
		return nil, fmt.Errorf("%w %q: JSONPath %q: {%s} is not supported in a printer column", ErrInvalidPrintColumn, c.Name, c.JSONPath, id)
	}
	p := jsonpath.New(c.Name).AllowMissingKeys(true)
	if err := p.Parse(text); err != nil {
		return nil, fmt.Errorf("%w %q: JSONPath %q does not parse: %w", ErrInvalidPrintColumn, c.Name, c.JSONPath, err)
	}
	return p, nil
}

// findIdentifier returns the first identifier (range, end) in the parsed
// path n, or "".
func findIdentifier(n jsonpath.Node) string {
	switch n := n.(type) {
	case *jsonpath.IdentifierNode:
		return n.Name
	case *jsonpath.ListNode:
		if n == nil {
			return ""
		}
		for _, c := range n.Nodes {
			if id := findIdentifier(c); id != "" {
				return id
			}
		}
	case *jsonpath.FilterNode:
		if id := findIdentifier(n.Left); id != "" {
			return id
		}
		return findIdentifier(n.Right)
	case *jsonpath.UnionNode:
		for _, c := range n.Nodes {
			if id := findIdentifier(c); id != "" {
				return id
			}
		}
	}
	return ""
}
