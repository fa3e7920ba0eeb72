package endpoints

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
)

// TestDuplicateOwnerReferences: repeated owner references are stored once,
// with kube-apiserver's warning: for a create or update body the one
// before admission, for a patch's result the one after it. Entries that
// share a uid but differ elsewhere both stay.
func TestDuplicateOwnerReferences(t *testing.T) {
	e := newEnv(t, false)
	base := widgetsPath + "owners/widgets"
	const (
		a    = `{"apiVersion":"v1","kind":"ConfigMap","name":"a","uid":"uid-a"}`
		b    = `{"apiVersion":"v1","kind":"ConfigMap","name":"b","uid":"uid-b"}`
		aToo = `{"apiVersion":"v1","kind":"Secret","name":"a","uid":"uid-a"}`
	)
	const before = `299 - ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: uid-a, uid-b"`
	const after = `299 - ".metadata.ownerReferences contains duplicate entries after mutating admission happens; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: uid-a"`
	owners := func(t *testing.T, r response, code int, want ...string) {
		t.Helper()
		if r.code != code {
			t.Fatalf("got %d: %s", r.code, r.body)
		}
		var w struct {
			Metadata struct {
				OwnerReferences []struct{ Kind, UID string } `json:"ownerReferences"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(r.body, &w); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, o := range w.Metadata.OwnerReferences {
			got = append(got, o.Kind+"/"+o.UID)
		}
		if !slices.Equal(got, want) {
			t.Errorf("ownerReferences %v, want %v", got, want)
		}
	}

	r := e.do("POST", base, "application/json",
		`{"apiVersion":"storagetest.apiloom.dev/v1","kind":"Widget","metadata":{"name":"w","ownerReferences":[`+a+`,`+b+`,`+a+`,`+aToo+`,`+b+`]}}`)
	owners(t, r, http.StatusCreated, "ConfigMap/uid-a", "ConfigMap/uid-b", "Secret/uid-a")
	if got := r.header.Values("Warning"); !slices.Equal(got, []string{before}) {
		t.Errorf("create: warnings %q, want %q", got, before)
	}

	r = e.do("PATCH", base+"/w", "application/merge-patch+json", `{"metadata":{"ownerReferences":[`+a+`,`+a+`]}}`)
	owners(t, r, http.StatusOK, "ConfigMap/uid-a")
	if got := r.header.Values("Warning"); !slices.Equal(got, []string{after}) {
		t.Errorf("patch: warnings %q, want %q", got, after)
	}

	r = e.do("GET", base+"/w", "", "")
	var cur map[string]any
	if err := json.Unmarshal(r.body, &cur); err != nil {
		t.Fatal(err)
	}
	var refs []any
	for _, s := range []string{a, b, a, b} {
		var m any
		_ = json.Unmarshal([]byte(s), &m)
		refs = append(refs, m)
	}
	cur["metadata"].(map[string]any)["ownerReferences"] = refs
	body, _ := json.Marshal(cur)
	r = e.do("PUT", base+"/w", "application/json", string(body))
	owners(t, r, http.StatusOK, "ConfigMap/uid-a", "ConfigMap/uid-b")
	if got := r.header.Values("Warning"); len(got) != 1 || got[0] != `299 - ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: uid-a, uid-b"` {
		t.Errorf("update: warnings %q", got)
	}
}
