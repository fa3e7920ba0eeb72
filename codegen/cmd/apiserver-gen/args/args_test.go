package args

import (
	"reflect"
	"testing"

	"github.com/spf13/pflag"
)

func TestFlags(t *testing.T) {
	a := New()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	a.AddFlags(fs)
	err := fs.Parse([]string{
		"--output-dir", "generated/apiserver",
		"--output-pkg", "example.com/m/generated/apiserver",
		"--plural-exceptions", "Endpoints:Endpoints,Cactus:Cacti",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	if got, want := a.OpenAPIPackage(), "example.com/m/generated/openapi"; got != want {
		t.Errorf("OpenAPIPackage() = %q, want %q", got, want)
	}
	m, err := a.PluralExceptionMap()
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"Endpoints": "Endpoints", "Cactus": "Cacti"}; !reflect.DeepEqual(m, want) {
		t.Errorf("PluralExceptionMap() = %v, want %v", m, want)
	}

	a.OpenAPIPkg = "example.com/other/openapi"
	if got := a.OpenAPIPackage(); got != a.OpenAPIPkg {
		t.Errorf("OpenAPIPackage() = %q, want the flag's value", got)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		args Args
	}{
		{"no output dir", Args{OutputPkg: "m/out"}},
		{"no output pkg", Args{OutputDir: "out"}},
		{"no openapi parent", Args{OutputDir: "out", OutputPkg: "out"}},
		{"bad plural exception", Args{OutputDir: "out", OutputPkg: "m/out", PluralExceptions: []string{"Cactus"}}},
		{"empty plural", Args{OutputDir: "out", OutputPkg: "m/out", PluralExceptions: []string{"Cactus:"}}},
	}
	for _, tt := range tests {
		if err := tt.args.Validate(); err == nil {
			t.Errorf("%s: Validate() = nil, want an error", tt.name)
		}
	}
}
