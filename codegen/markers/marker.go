package markers

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrMalformed is wrapped by every error about a marker that cannot be parsed.
var ErrMalformed = errors.New("markers: malformed marker")

// Marker is one parsed marker line.
type Marker struct {
	// Name is the marker's name without the leading "+", e.g.
	// "kubebuilder:resource".
	Name string
	// Args are the key=value arguments in the order written. A marker
	// written "+name=value" has a single Arg with an empty Key.
	Args []Arg
	// Text is the line as written, for error messages.
	Text string
}

// Arg is one argument of a marker.
type Arg struct {
	Key string
	// Value is the unquoted value. For a braced list it is the text inside
	// the braces.
	Value string

	// list holds the elements of a braced list {a,b}; nil otherwise.
	list []string
}

// Values returns the value read as a list: the elements of {a,b,c}, or the
// value split at ';'. Empty elements are dropped.
func (a Arg) Values() []string {
	if a.list != nil {
		return a.list
	}
	var out []string
	for _, v := range strings.Split(a.Value, ";") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// Find returns every marker named name in lines, in order. A line matches
// when it is "+name" followed by the end of the line, ":" or "=", so
// "kubebuilder:resource" does not match "+kubebuilder:resources".
func Find(lines []string, name string) ([]Marker, error) {
	var out []Marker
	prefix := "+" + name
	for _, line := range lines {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, prefix)
		if !ok {
			continue
		}
		m := Marker{Name: name, Text: line}
		switch {
		case rest == "":
		case rest[0] == ':':
			if rest == ":" {
				return nil, malformed(line, "nothing after ':'")
			}
			args, err := parseArgs(rest[1:])
			if err != nil {
				return nil, malformed(line, err.Error())
			}
			m.Args = args
		case rest[0] == '=':
			v, err := parseValue(rest[1:])
			if err != nil {
				return nil, malformed(line, err.Error())
			}
			m.Args = []Arg{v}
		default:
			continue // a longer name, e.g. +kubebuilder:resources
		}
		out = append(out, m)
	}
	return out, nil
}

// NearMisses returns the markers in lines that are not exactly any of
// known but equal one of them ignoring case, such as
// "+kubebuilder:selectableField". They are almost certainly typos.
func NearMisses(lines []string, known ...string) []string {
	var out []string
	for _, line := range lines {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "+") {
			continue
		}
		name := line[1:]
		if i := strings.IndexAny(name, "="); i >= 0 {
			name = name[:i]
		}
		for _, k := range known {
			if len(name) < len(k) || !strings.EqualFold(name[:len(k)], k) || name[:len(k)] == k {
				continue
			}
			if len(name) == len(k) || name[len(k)] == ':' {
				out = append(out, line)
			}
		}
	}
	return out
}

// malformed is the error for the marker written as text.
func malformed(text, reason string) error {
	return fmt.Errorf("%w %s: %s", ErrMalformed, text, reason)
}

// parseArgs reads key=value{,key=value}.
func parseArgs(s string) ([]Arg, error) {
	var out []Arg
	seen := map[string]bool{}
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			return nil, fmt.Errorf("expected key=value at %q", s)
		}
		key := s[:eq]
		if !isIdent(key) {
			return nil, fmt.Errorf("bad argument name %q", key)
		}
		if seen[key] {
			return nil, fmt.Errorf("argument %s given twice", key)
		}
		seen[key] = true
		val, rest, err := scanValue(s[eq+1:])
		if err != nil {
			return nil, fmt.Errorf("argument %s: %w", key, err)
		}
		val.Key = key
		out = append(out, val)
		if rest == "" {
			break
		}
		if rest[0] != ',' || len(rest) == 1 {
			return nil, fmt.Errorf("expected ',' and another argument at %q", rest)
		}
		s = rest[1:]
	}
	return out, nil
}

// parseValue reads a single anonymous value that must fill s.
func parseValue(s string) (Arg, error) {
	v, rest, err := scanValue(s)
	if err != nil {
		return Arg{}, err
	}
	if rest != "" {
		return Arg{}, fmt.Errorf("unexpected %q after value", rest)
	}
	return v, nil
}

// scanValue reads one value from the front of s and returns the rest, which
// is empty or starts with ','.
func scanValue(s string) (Arg, string, error) {
	if s == "" {
		return Arg{}, "", errors.New("missing value")
	}
	switch s[0] {
	case '"', '`':
		q, rest, err := scanQuoted(s)
		return Arg{Value: q}, rest, err
	case '{':
		end := closingBrace(s)
		if end < 0 {
			return Arg{}, "", errors.New("unterminated list: missing '}'")
		}
		inner := s[1:end]
		list, err := splitList(inner)
		if err != nil {
			return Arg{}, "", err
		}
		if list == nil {
			list = []string{}
		}
		return Arg{Value: inner, list: list}, s[end+1:], nil
	}
	end := strings.IndexByte(s, ',')
	if end < 0 {
		end = len(s)
	}
	v := s[:end]
	if strings.ContainsAny(v, "\"`{}") {
		return Arg{}, "", fmt.Errorf("unexpected quote or brace in bare value %q", v)
	}
	return Arg{Value: v}, s[end:], nil
}

// scanQuoted reads a "Go string" or `raw string` from the front of s.
func scanQuoted(s string) (string, string, error) {
	if s[0] == '`' {
		end := strings.IndexByte(s[1:], '`')
		if end < 0 {
			return "", "", errors.New("unterminated `string`")
		}
		return s[1 : end+1], s[end+2:], nil
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			v, err := strconv.Unquote(s[:i+1])
			if err != nil {
				return "", "", fmt.Errorf("bad string %s: %w", s[:i+1], err)
			}
			return v, s[i+1:], nil
		}
	}
	return "", "", errors.New(`unterminated "string"`)
}

// closingBrace returns the index of the '}' ending the list that starts at
// s[0], skipping braces inside quoted elements, or -1.
func closingBrace(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '}':
			return i
		case '"', '`':
			_, rest, err := scanQuoted(s[i:])
			if err != nil {
				return -1
			}
			i = len(s) - len(rest) - 1
		}
	}
	return -1
}

// splitList splits the inside of {a,"b",c}.
func splitList(s string) ([]string, error) {
	var out []string
	for strings.TrimSpace(s) != "" {
		v, rest, err := scanValue(strings.TrimSpace(s))
		if err != nil {
			return nil, err
		}
		out = append(out, v.Value)
		rest = strings.TrimSpace(rest)
		if rest == "" {
			break
		}
		if rest[0] != ',' {
			return nil, fmt.Errorf("expected ',' between list elements at %q", rest)
		}
		s = rest[1:]
	}
	return out, nil
}

func isIdent(s string) bool {
	for i, r := range s {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9'
		if !ok {
			return false
		}
	}
	return s != ""
}
