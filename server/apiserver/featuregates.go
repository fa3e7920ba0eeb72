package apiserver

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// featureGates is the --feature-gates flag: kube-apiserver's syntax
// (Name=true,Other=false) over the few of its gates whose behaviour apiloom
// shares and lets turn off. Each gate sets one field of Options, so the
// rest of the server reads plain options, never the gates.
type featureGates struct {
	gates map[string]*bool // by kube-apiserver's gate name
}

var _ pflag.Value = (*featureGates)(nil)

func (o *Options) featureGates() *featureGates {
	return &featureGates{gates: map[string]*bool{
		// Beta and on by default in kube-apiserver since 1.16.
		"APIResponseCompression": &o.APIResponseCompression,
		// Alpha and off in kube-apiserver since 1.32; on here.
		"CBORServingAndStorage": &o.CBORServingAndStorage,
	}}
}

func (f *featureGates) names() []string { return slices.Sorted(maps.Keys(f.gates)) }

// Set reads "Name=bool" pairs as kube-apiserver does; a gate apiloom does
// not know is an error, as there.
func (f *featureGates) Set(value string) error {
	for pair := range strings.SplitSeq(value, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		name, v, ok := strings.Cut(pair, "=")
		name = strings.TrimSpace(name)
		if !ok {
			return fmt.Errorf("missing bool value for %s", name)
		}
		p, known := f.gates[name]
		if !known {
			return fmt.Errorf("unrecognized feature gate: %s (apiloom has %s)", name, strings.Join(f.names(), ", "))
		}
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("invalid value of %s=%s, err: %w", name, v, err)
		}
		*p = b
	}
	return nil
}

func (f *featureGates) String() string {
	pairs := make([]string, 0, len(f.gates))
	for _, name := range f.names() {
		pairs = append(pairs, fmt.Sprintf("%s=%t", name, *f.gates[name]))
	}
	return strings.Join(pairs, ",")
}

func (f *featureGates) Type() string { return "mapStringBool" }
