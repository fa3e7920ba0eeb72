package markers

import (
	"fmt"
	"strconv"
)

// Names of the field markers this package interprets: validation and
// defaulting, written on struct fields as controller-tools accepts them.
const (
	RequiredName         = "kubebuilder:validation:Required"
	RequiredShortName    = "required"
	OptionalName         = "kubebuilder:validation:Optional"
	OptionalShortName    = "optional"
	MinimumName          = "kubebuilder:validation:Minimum"
	MaximumName          = "kubebuilder:validation:Maximum"
	ExclusiveMinimumName = "kubebuilder:validation:ExclusiveMinimum"
	ExclusiveMaximumName = "kubebuilder:validation:ExclusiveMaximum"
	MinLengthName        = "kubebuilder:validation:MinLength"
	MaxLengthName        = "kubebuilder:validation:MaxLength"
	PatternName          = "kubebuilder:validation:Pattern"
	EnumName             = "kubebuilder:validation:Enum"
	MinItemsName         = "kubebuilder:validation:MinItems"
	MaxItemsName         = "kubebuilder:validation:MaxItems"
	DefaultName          = "kubebuilder:default"
)

// Field is what the validation and default markers on one struct field
// say. Values are as written (strings, not yet typed): whether they fit the
// field's Go type is for the generator to decide. Nil pointers were not
// written.
type Field struct {
	// Required is +kubebuilder:validation:Required or +required.
	Required bool
	// Optional is +kubebuilder:validation:Optional or +optional.
	Optional bool

	Minimum, Maximum                   *string
	ExclusiveMinimum, ExclusiveMaximum bool
	MinLength, MaxLength               *int64
	MinItems, MaxItems                 *int64
	// Pattern is the regular expression a string must match.
	Pattern *string
	// Enum are the allowed values, from Enum=a;b;c or Enum={a,b,c}.
	Enum []string
	// Default is the +kubebuilder:default value: a bare or quoted literal,
	// or "{}" / "[]" for an empty object or list.
	Default *string

	// Texts are the markers as written, by name, for error messages.
	Texts map[string]string
}

// Any reports whether any validation or default marker was written.
func (f *Field) Any() bool {
	return f.Required || f.Minimum != nil || f.Maximum != nil || f.ExclusiveMinimum || f.ExclusiveMaximum ||
		f.MinLength != nil || f.MaxLength != nil || f.MinItems != nil || f.MaxItems != nil ||
		f.Pattern != nil || f.Enum != nil || f.Default != nil
}

// fieldMarkerNames are every name ParseField reads, for near-miss warnings.
var fieldMarkerNames = []string{
	RequiredName, OptionalName, MinimumName, MaximumName, ExclusiveMinimumName, ExclusiveMaximumName,
	MinLengthName, MaxLengthName, PatternName, EnumName, MinItemsName, MaxItemsName, DefaultName,
}

// ParseField reads the validation and default markers from a field's
// comment lines. A marker given twice, or with a value of the wrong shape
// (MinLength=abc), is an error wrapping ErrMalformed; a near-miss name
// (+kubebuilder:validation:minimum) is a warning.
func ParseField(lines []string) (Field, []string, error) {
	f := Field{Texts: map[string]string{}}
	var warns []string
	for _, line := range NearMisses(lines, fieldMarkerNames...) {
		warns = append(warns, fmt.Sprintf("%s: ignored: marker names are case-sensitive", line))
	}
	// single returns the one value of the marker called name, or nil.
	single := func(name string) (*Marker, error) {
		ms, err := Find(lines, name)
		if err != nil || len(ms) == 0 {
			return nil, err
		}
		if len(ms) > 1 {
			return nil, fmt.Errorf("%w: +%s appears %d times", ErrMalformed, name, len(ms))
		}
		f.Texts[name] = ms[0].Text
		return &ms[0], nil
	}
	value := func(name string) (*string, error) {
		m, err := single(name)
		if err != nil || m == nil {
			return nil, err
		}
		if len(m.Args) != 1 || m.Args[0].Key != "" {
			return nil, malformed(m.Text, "expected +"+name+"=<value>")
		}
		v := m.Args[0].Value
		if m.Args[0].list != nil {
			v = "{" + v + "}"
		}
		return &v, nil
	}
	flag := func(name string) (bool, error) {
		m, err := single(name)
		if err != nil || m == nil {
			return false, err
		}
		switch {
		case len(m.Args) == 0:
			return true, nil
		case len(m.Args) == 1 && m.Args[0].Key == "":
			b, err := strconv.ParseBool(m.Args[0].Value)
			if err != nil {
				return false, malformed(m.Text, "expected true or false")
			}
			return b, nil
		}
		return false, malformed(m.Text, "expected +"+name+" or +"+name+"=true")
	}
	count := func(name string) (*int64, error) {
		v, err := value(name)
		if err != nil || v == nil {
			return nil, err
		}
		n, err := strconv.ParseInt(*v, 10, 64)
		if err != nil || n < 0 {
			return nil, malformed(f.Texts[name], "expected a non-negative integer")
		}
		return &n, nil
	}

	var err error
	for _, name := range []string{RequiredName, RequiredShortName} {
		b, err := flag(name)
		if err != nil {
			return f, nil, err
		}
		f.Required = f.Required || b
	}
	for _, name := range []string{OptionalName, OptionalShortName} {
		b, err := flag(name)
		if err != nil {
			return f, nil, err
		}
		f.Optional = f.Optional || b
	}
	if f.Required && f.Optional {
		return f, nil, fmt.Errorf("%w: a field cannot be both required and optional", ErrMalformed)
	}
	if f.ExclusiveMinimum, err = flag(ExclusiveMinimumName); err != nil {
		return f, nil, err
	}
	if f.ExclusiveMaximum, err = flag(ExclusiveMaximumName); err != nil {
		return f, nil, err
	}
	if f.Minimum, err = value(MinimumName); err != nil {
		return f, nil, err
	}
	if f.Maximum, err = value(MaximumName); err != nil {
		return f, nil, err
	}
	if f.Pattern, err = value(PatternName); err != nil {
		return f, nil, err
	}
	if f.Default, err = value(DefaultName); err != nil {
		return f, nil, err
	}
	for _, c := range []struct {
		name string
		dst  **int64
	}{{MinLengthName, &f.MinLength}, {MaxLengthName, &f.MaxLength}, {MinItemsName, &f.MinItems}, {MaxItemsName, &f.MaxItems}} {
		if *c.dst, err = count(c.name); err != nil {
			return f, nil, err
		}
	}
	m, err := single(EnumName)
	if err != nil {
		return f, nil, err
	}
	if m != nil {
		if len(m.Args) != 1 || m.Args[0].Key != "" {
			return f, nil, malformed(m.Text, "expected +"+EnumName+"=a;b;c")
		}
		if f.Enum = m.Args[0].Values(); len(f.Enum) == 0 {
			return f, nil, malformed(m.Text, "no values")
		}
	}
	if f.ExclusiveMinimum && f.Minimum == nil {
		return f, nil, malformed(f.Texts[ExclusiveMinimumName], "needs +"+MinimumName)
	}
	if f.ExclusiveMaximum && f.Maximum == nil {
		return f, nil, malformed(f.Texts[ExclusiveMaximumName], "needs +"+MaximumName)
	}
	return f, warns, nil
}
