package apiserver

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestFeatureGatesFlag: --feature-gates reads kube-apiserver's syntax,
// APIResponseCompression is on unless turned off, and a gate apiloom does
// not have, or a value that is no bool, stops the server from starting.
func TestFeatureGatesFlag(t *testing.T) {
	parse := func(args ...string) (Options, error) {
		o := DefaultOptions()
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.AddFlags(fs)
		return o, fs.Parse(args)
	}
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, true},
		{[]string{"--feature-gates=APIResponseCompression=false"}, false},
		{[]string{"--feature-gates", "APIResponseCompression=false", "--feature-gates=APIResponseCompression=true"}, true},
		{[]string{"--feature-gates= APIResponseCompression = false ,"}, false},
	} {
		o, err := parse(tc.args...)
		if err != nil || o.APIResponseCompression != tc.want {
			t.Errorf("%q: APIResponseCompression %t, %v; want %t", tc.args, o.APIResponseCompression, err, tc.want)
		}
	}
	for arg, want := range map[string]string{
		"--feature-gates=WatchList=true":             "unrecognized feature gate: WatchList",
		"--feature-gates=APIResponseCompression=off": "invalid value of APIResponseCompression=off",
		"--feature-gates=APIResponseCompression":     "missing bool value for APIResponseCompression",
	} {
		if _, err := parse(arg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", arg, err, want)
		}
	}
}
