package markers

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	tests := []struct {
		name string
		line string
		want []Arg // nil: no marker found
	}{
		{name: "no args", line: "+kubebuilder:resource", want: []Arg{}},
		{name: "bare", line: "+kubebuilder:resource:path=foos,scope=Cluster", want: []Arg{{Key: "path", Value: "foos"}, {Key: "scope", Value: "Cluster"}}},
		{name: "leading space", line: "  +kubebuilder:resource:path=foos  ", want: []Arg{{Key: "path", Value: "foos"}}},
		{name: "semicolon list", line: "+kubebuilder:resource:shortName=a;b", want: []Arg{{Key: "shortName", Value: "a;b"}}},
		{name: "quoted", line: `+kubebuilder:resource:path="a,b",singular=x`, want: []Arg{{Key: "path", Value: "a,b"}, {Key: "singular", Value: "x"}}},
		{name: "escaped quote", line: `+kubebuilder:resource:path="a\"b"`, want: []Arg{{Key: "path", Value: `a"b`}}},
		{name: "backquoted", line: "+kubebuilder:resource:path=`.spec.x`", want: []Arg{{Key: "path", Value: ".spec.x"}}},
		{name: "braced list", line: `+kubebuilder:resource:shortName={a,"b,c"},path=p`, want: []Arg{{Key: "shortName", Value: `a,"b,c"`, list: []string{"a", "b,c"}}, {Key: "path", Value: "p"}}},
		{name: "anonymous", line: "+kubebuilder:resource=x", want: []Arg{{Value: "x"}}},
		{name: "longer name", line: "+kubebuilder:resources:path=x"},
		{name: "other marker", line: "+genclient"},
		{name: "prose", line: "kubebuilder:resource is mentioned here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Find([]string{"doc line", tt.line}, "kubebuilder:resource")
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == nil {
				if len(got) != 0 {
					t.Fatalf("found %+v, want nothing", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("found %d markers, want 1", len(got))
			}
			if len(got[0].Args) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got[0].Args, tt.want) {
				t.Fatalf("args = %#v, want %#v", got[0].Args, tt.want)
			}
		})
	}
}

func TestFindMalformed(t *testing.T) {
	for _, line := range []string{
		"+m:",
		"+m:path",
		"+m:=x",
		"+m:path=",
		"+m:path=a,",
		"+m:path=a,,b=c",
		`+m:path="unterminated`,
		"+m:path=`unterminated",
		"+m:path={a,b",
		`+m:path={"a" "b"}`,
		`+m:path=a"b`,
		`+m:path="a"b`,
		"+m:path=a,path=b",
		"+m:bad-key=a",
		"+m=",
		`+m="a"b`,
	} {
		t.Run(line, func(t *testing.T) {
			_, err := Find([]string{line}, "m")
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
			if !strings.Contains(err.Error(), line) {
				t.Fatalf("error %q does not quote the marker", err)
			}
		})
	}
}

func TestValues(t *testing.T) {
	tests := []struct {
		arg  Arg
		want []string
	}{
		{Arg{Value: "a;b; c;"}, []string{"a", "b", "c"}},
		{Arg{Value: ""}, nil},
		{Arg{Value: "a,b", list: []string{"a", "b"}}, []string{"a", "b"}},
	}
	for _, tt := range tests {
		if got := tt.arg.Values(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%+v.Values() = %q, want %q", tt.arg, got, tt.want)
		}
	}
}

func TestParseType(t *testing.T) {
	lines := []string{
		"Database is a database.",
		"",
		"+genclient",
		"+kubebuilder:resource:path=dbs,singular=db,scope=Cluster,shortName=d;x,categories={all,data},storageVersion=v1",
		"+kubebuilder:subresource:status",
		"+kubebuilder:selectablefield:JSONPath=.spec.engine",
		"+kubebuilder:selectablefield:JSONPath=`.status.phase`",
		"+kubebuilder:selectableField:JSONPath=.spec.typo",
		"+kubebuilder:printcolumn:name=Engine,type=string,JSONPath=.spec.engine",
		`+kubebuilder:printcolumn:name="Display Name",type="string",JSONPath=".spec.displayName",description="Shown to users, in full.",priority=1,format=byte`,
		"+kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type==\"Ready\")].status`,name=Ready,type=string,priority=-2",
		"+kubebuilder:printColumn:name=Typo,type=string,JSONPath=.spec.typo",
	}
	got, warns, err := ParseType(lines)
	if err != nil {
		t.Fatal(err)
	}
	want := Type{
		Resource: &Resource{
			Path: "dbs", Singular: "db", Scope: ScopeCluster,
			ShortNames: []string{"d", "x"}, Categories: []string{"all", "data"},
		},
		StatusSubresource: true,
		SelectableFields:  []string{".spec.engine", ".status.phase"},
		PrintColumns: []PrintColumn{
			{Name: "Engine", Type: "string", JSONPath: ".spec.engine", Text: lines[8]},
			{Name: "Display Name", Type: "string", JSONPath: ".spec.displayName", Description: "Shown to users, in full.", Priority: 1, Format: "byte", Text: lines[9]},
			{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`, Priority: -2, Text: lines[10]},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if len(warns) != 3 || !strings.Contains(warns[0], "selectableField") || !strings.Contains(warns[1], "printColumn") || !strings.Contains(warns[2], "storageVersion") {
		t.Fatalf("warnings = %q, want the two near misses and the unknown key", warns)
	}
}

func TestParseTypeErrors(t *testing.T) {
	for _, line := range []string{
		"+kubebuilder:resource:scope=cluster",
		"+kubebuilder:resource:path=Foos",
		"+kubebuilder:resource=foos",
		"+kubebuilder:subresource:status:x=y",
		"+kubebuilder:selectablefield:name=x",
		`+kubebuilder:selectablefield:JSONPath=".spec`,
		"+kubebuilder:printcolumn",
		"+kubebuilder:printcolumn=Engine",
		"+kubebuilder:printcolumn:type=string,JSONPath=.spec.engine",
		"+kubebuilder:printcolumn:name=Engine,JSONPath=.spec.engine",
		"+kubebuilder:printcolumn:name=Engine,type=string",
		"+kubebuilder:printcolumn:name=Engine,type=string,jsonPath=.spec.engine",
		"+kubebuilder:printcolumn:name=Engine,type=string,JSONPath=.spec.engine,priority=high",
		"+kubebuilder:printcolumn:name=Engine,type=string,JSONPath=.spec.engine,priority=4294967296",
	} {
		t.Run(line, func(t *testing.T) {
			if _, _, err := ParseType([]string{line}); !errors.Is(err, ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
		})
	}
	twice := []string{"+kubebuilder:resource:path=a", "+kubebuilder:resource:path=b"}
	if _, _, err := ParseType(twice); !errors.Is(err, ErrMalformed) {
		t.Fatalf("repeated resource marker: err = %v, want ErrMalformed", err)
	}
}
