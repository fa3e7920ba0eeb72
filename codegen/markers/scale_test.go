package markers

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseTypeScale(t *testing.T) {
	lines := []string{
		"+kubebuilder:subresource:status",
		"+kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=`.status.replicas`,selectorpath=.status.selector,extra=1",
	}
	got, warns, err := ParseType(lines)
	if err != nil {
		t.Fatal(err)
	}
	want := &Scale{SpecPath: ".spec.replicas", StatusPath: ".status.replicas", SelectorPath: ".status.selector", Text: lines[1]}
	if !reflect.DeepEqual(got.Scale, want) {
		t.Fatalf("Scale = %+v, want %+v", got.Scale, want)
	}
	if !got.StatusSubresource {
		t.Fatal("the status marker was lost")
	}
	if len(warns) != 1 || !strings.Contains(warns[0], `"extra"`) {
		t.Fatalf("warnings = %q, want one about the unknown argument", warns)
	}

	got, _, err = ParseType([]string{"+kubebuilder:subresource:scale:statuspath=.status.replicas,specpath=.spec.replicas"})
	if err != nil || got.Scale == nil || got.Scale.SelectorPath != "" {
		t.Fatalf("without selectorpath: %+v, %v", got.Scale, err)
	}
	if got, _, _ := ParseType([]string{"+genclient"}); got.Scale != nil {
		t.Fatalf("Scale = %+v without the marker", got.Scale)
	}
	_, warns, _ = ParseType([]string{"+kubebuilder:subresource:Scale:specpath=.spec.replicas,statuspath=.status.replicas"})
	if len(warns) != 1 || !strings.Contains(warns[0], "case-sensitive") {
		t.Fatalf("near miss: warnings = %q", warns)
	}
}

func TestParseTypeScaleErrors(t *testing.T) {
	for _, lines := range [][]string{
		{"+kubebuilder:subresource:scale"},
		{"+kubebuilder:subresource:scale:statuspath=.status.replicas"},
		{"+kubebuilder:subresource:scale:specpath=.spec.replicas"},
		{"+kubebuilder:subresource:scale=.spec.replicas"},
		{
			"+kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas",
			"+kubebuilder:subresource:scale:specpath=.spec.size,statuspath=.status.size",
		},
	} {
		t.Run(strings.Join(lines, "|"), func(t *testing.T) {
			if _, _, err := ParseType(lines); !errors.Is(err, ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
		})
	}
}

// TestParseStreams reads +apiloom:stream and refuses one missing an
// argument.
func TestParseStreams(t *testing.T) {
	lines := []string{"+genclient", "+apiloom:stream:method=Logs,subresource=logs,input=LogOptions"}
	got, warns, err := ParseStreams(lines)
	if err != nil || len(warns) > 0 {
		t.Fatalf("ParseStreams: %v %v", err, warns)
	}
	want := []Stream{{Method: "Logs", Subresource: "logs", Input: "LogOptions", Text: lines[1]}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Streams = %+v, want %+v", got, want)
	}
	if _, _, err := ParseStreams([]string{"+apiloom:stream:method=Logs,subresource=logs"}); err == nil || !strings.Contains(err.Error(), "input is required") {
		t.Fatalf("missing input: %v", err)
	}
}
