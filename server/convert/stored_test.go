package convert

import (
	"strings"
	"testing"
)

// TestDecodeStored: a value stored in another version of the kind is
// decoded as that version and converted to the storage version; one
// stored in a version the kind does not have is an error naming it.
func TestDecodeStored(t *testing.T) {
	v, stored, v2 := twoVersions(t)
	obj, err := v.DecodeStored(v2.GroupVersion().String(), []byte(`{"apiVersion":"`+v2.GroupVersion().String()+`","kind":"Widget","metadata":{"name":"w"},"spec":{"size":3}}`))
	if err != nil {
		t.Fatal(err)
	}
	w, ok := obj.(*widget)
	if !ok || w.Spec.Size != 3*sizeFactor || w.Name != "w" || w.GroupVersionKind() != stored.GroupVersionKind() {
		t.Fatalf("decoded %#v", obj)
	}
	for _, bad := range []struct{ apiVersion, data, want string }{
		{stored.Group + "/v9", `{}`, stored.Group + "/v9"},
		{"a/b/c", `{}`, "a/b/c"},
		{v2.GroupVersion().String(), `{"spec":{"size":"three"}}`, "decode as " + v2.GroupVersion().String()},
	} {
		if _, err := v.DecodeStored(bad.apiVersion, []byte(bad.data)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("DecodeStored(%q, %s): %v, want an error with %q", bad.apiVersion, bad.data, err, bad.want)
		}
	}
}
