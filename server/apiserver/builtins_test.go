package apiserver

import (
	"slices"
	"testing"

	"github.com/apiloom/apiloom/server/registry"
	"github.com/apiloom/apiloom/server/resource"
)

type object = resource.Object

func TestSelectBuiltins(t *testing.T) {
	reg := &registry.Registry{}
	for _, info := range []resource.Info{
		{Group: "", Version: "v1", Plural: "configmaps", BuiltIn: true},
		{Group: "", Version: "v1", Plural: "secrets", BuiltIn: true},
		{Group: "coordination.k8s.io", Version: "v1", Plural: "leases", BuiltIn: true},
		{Group: "example.apiloom.dev", Version: "v1", Plural: "databases"},
	} {
		registry.Register(reg, &resource.Definition[object]{Info: info})
	}
	plurals := func(r *registry.Registry) []string {
		var out []string
		for _, i := range r.Infos() {
			out = append(out, i.Plural)
		}
		return out
	}
	for _, tc := range []struct {
		names []string
		want  []string // nil: an error
	}{
		{[]string{"*"}, []string{"configmaps", "secrets", "leases", "databases"}},
		{nil, []string{"databases"}},
		{[]string{"configmaps", "leases.coordination.k8s.io"}, []string{"configmaps", "leases", "databases"}},
		{[]string{"leases.example.apiloom.dev"}, nil},
		{[]string{"databases"}, nil}, // not a built-in kind
		{[]string{"pods"}, nil},
	} {
		got, err := selectBuiltins(reg, tc.names)
		switch {
		case tc.want == nil && err == nil:
			t.Errorf("%v: %v, want an error", tc.names, plurals(got))
		case tc.want != nil && err != nil:
			t.Errorf("%v: %v", tc.names, err)
		case tc.want != nil && !slices.Equal(plurals(got), tc.want):
			t.Errorf("%v: %v, want %v", tc.names, plurals(got), tc.want)
		}
	}
}
