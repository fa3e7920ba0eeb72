package markers

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseField(t *testing.T) {
	f, warns, err := ParseField([]string{
		"Replicas is the number of instances.",
		"+kubebuilder:validation:Minimum=1",
		"+kubebuilder:validation:Maximum=9",
		"+kubebuilder:validation:ExclusiveMaximum=true",
		"+kubebuilder:validation:Enum=a;b;c",
		"+kubebuilder:validation:Pattern=`^[0-9]+(\\.[0-9]+)*$`",
		"+kubebuilder:validation:MaxLength=32",
		"+kubebuilder:default=1",
		"+required",
		"+kubebuilder:validation:minimum=3",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !f.Required || f.Optional || *f.Minimum != "1" || *f.Maximum != "9" || !f.ExclusiveMaximum || f.ExclusiveMinimum ||
		*f.MaxLength != 32 || f.MinLength != nil || *f.Default != "1" || *f.Pattern != `^[0-9]+(\.[0-9]+)*$` ||
		!reflect.DeepEqual(f.Enum, []string{"a", "b", "c"}) || !f.Any() {
		t.Errorf("ParseField = %+v", f)
	}
	if len(warns) != 1 {
		t.Errorf("warnings = %q, want the near miss +kubebuilder:validation:minimum", warns)
	}

	f, _, err = ParseField([]string{"+kubebuilder:default={}", "+optional", "+kubebuilder:validation:Enum={x,y}"})
	if err != nil || *f.Default != "{}" || !f.Optional || f.Required || !reflect.DeepEqual(f.Enum, []string{"x", "y"}) {
		t.Errorf("ParseField = %+v, %v", f, err)
	}
	if f, _, _ := ParseField([]string{"+optional", "just a comment"}); f.Any() {
		t.Errorf("Any() = true for %+v", f)
	}
}

func TestParseFieldErrors(t *testing.T) {
	for _, lines := range [][]string{
		{"+kubebuilder:validation:MinLength=-1"},
		{"+kubebuilder:validation:MaxItems=many"},
		{"+kubebuilder:validation:Minimum=1", "+kubebuilder:validation:Minimum=2"},
		{"+required", "+optional"},
		{"+kubebuilder:validation:ExclusiveMaximum"},
		{"+kubebuilder:validation:ExclusiveMinimum=maybe", "+kubebuilder:validation:Minimum=1"},
		{"+kubebuilder:validation:Enum=;"},
		{"+kubebuilder:validation:Minimum:value=1"},
		{`+kubebuilder:default="unterminated`},
	} {
		if _, _, err := ParseField(lines); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseField(%q) = %v, want ErrMalformed", lines, err)
		}
	}
}
