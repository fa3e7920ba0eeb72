package request

import (
	"errors"
	"net/url"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// TestParseListFieldSelectors: a field the kind cannot select by is a 400
// worded by its field-label conversion, and a single-object watch's name
// must agree with the selector.
func TestParseListFieldSelectors(t *testing.T) {
	keys := map[string]bool{"metadata.name": true, "metadata.namespace": true}
	for _, tc := range []struct {
		query, name string
		sel         SelectableFields
		want        string
	}{
		{"fieldSelector=spec.x%3D1", "", SelectableFields{Keys: keys}, "field label not supported: spec.x"},
		{"fieldSelector=spec.x%3D1", "", SelectableFields{Keys: keys, MetadataOnly: true},
			`"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{"fieldSelector=metadata.name%3Dy", "x", SelectableFields{Keys: keys}, "fieldSelector metadata.name doesn't match requested name"},
	} {
		q, _ := url.ParseQuery(tc.query)
		_, err := ParseList(q, "ns", tc.name, tc.sel)
		if !apierrors.IsBadRequest(err) || err.Error() != tc.want {
			t.Errorf("%s: %v, want 400 %q", tc.query, err, tc.want)
		}
	}
	lr, err := ParseList(url.Values{"watch": {"1"}, "timeoutSeconds": {"5"}}, "ns", "x", SelectableFields{Keys: keys})
	if err != nil || !lr.Watch || *lr.TimeoutSeconds != 5 || lr.Options.Predicate.Field.String() != "metadata.name=x" {
		t.Fatalf("%+v %v", lr, err)
	}
}

// TestUnrecognizedObject quotes the start of the body, as text when it
// looks like JSON and in hex otherwise.
func TestUnrecognizedObject(t *testing.T) {
	for data, want := range map[string]string{
		"":                                       "<empty>",
		`{"a":1}`:                                `{"a":1}`,
		`{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa":1}`: `{"aaaaaaaaaaaaaaaaaaaaaaaaaaaa ...`,
		"\x01\x02":                               "0102",
	} {
		err := UnrecognizedObject("Widget", []byte(data), errUnknown)
		if got := err.Error(); got != "the object provided is unrecognized (must be of type Widget): unknown ("+want+")" {
			t.Errorf("%q: %s", data, got)
		}
	}
}

var errUnknown = errors.New("unknown")
