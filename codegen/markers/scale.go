package markers

import "fmt"

// ScaleSubresourceName is controller-tools' marker for a scale subresource.
const ScaleSubresourceName = "kubebuilder:subresource:scale"

// Scale is +kubebuilder:subresource:scale, with controller-tools' argument
// names. The paths are as written: whether they name fields of the right
// type is for the generator to decide.
type Scale struct {
	SpecPath     string // specpath=, required, e.g. ".spec.replicas"
	StatusPath   string // statuspath=, required, e.g. ".status.replicas"
	SelectorPath string // selectorpath=, optional, e.g. ".status.selector"
	// Text is the marker as written, for error messages.
	Text string
}

// parseScale reads the +kubebuilder:subresource:scale markers of a type:
// at most one, whose specpath and statuspath controller-tools requires.
func parseScale(lines []string) (*Scale, []string, error) {
	ms, err := Find(lines, ScaleSubresourceName)
	if err != nil {
		return nil, nil, err
	}
	switch len(ms) {
	case 0:
		return nil, nil, nil
	case 1:
	default:
		return nil, nil, fmt.Errorf("%w: +%s appears %d times", ErrMalformed, ScaleSubresourceName, len(ms))
	}
	m := ms[0]
	s := &Scale{Text: m.Text}
	var warns []string
	for _, a := range m.Args {
		switch a.Key {
		case "specpath":
			s.SpecPath = a.Value
		case "statuspath":
			s.StatusPath = a.Value
		case "selectorpath":
			s.SelectorPath = a.Value
		case "":
			return nil, nil, malformed(m.Text, "expected key=value arguments")
		default:
			warns = append(warns, fmt.Sprintf("%s: ignoring unknown argument %q", m.Text, a.Key))
		}
	}
	if s.SpecPath == "" {
		return nil, nil, malformed(m.Text, "specpath is required")
	}
	if s.StatusPath == "" {
		return nil, nil, malformed(m.Text, "statuspath is required")
	}
	return s, warns, nil
}
