package responsewriters

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
)

// TestWriteError: the server's own filters' errors keep Retry-After and
// are negotiated as the handlers' are, CBOR only when WithCBOR says it is
// served; a request that accepts no format of a Status gets indented JSON.
func TestWriteError(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, apierrors.NewTooManyRequests("too many requests, please try again later", 1))
	})
	for _, tc := range []struct {
		cbor   bool
		accept string
		want   string
	}{
		{false, "", negotiation.MediaJSON},
		{false, "application/cbor, application/json", negotiation.MediaJSON},
		{true, "application/cbor, application/json", negotiation.MediaCBOR},
		{false, negotiation.MediaProtobuf, negotiation.MediaProtobuf},
		{true, "application/json;as=Table;v=v1;g=meta.k8s.io, application/yaml", negotiation.MediaYAML},
		{false, "application/yaml;stream=watch", negotiation.MediaJSON},
	} {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/", nil)
		if tc.accept != "" {
			r.Header.Set("Accept", tc.accept)
		}
		WithCBOR(h, tc.cbor).ServeHTTP(rec, r)
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" ||
			rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%q (cbor %v): HTTP %d, headers %v", tc.accept, tc.cbor, rec.Code, rec.Header())
		}
		if got := rec.Header().Get("Content-Type"); got != tc.want {
			t.Errorf("%q (cbor %v): Content-Type %q, want %q", tc.accept, tc.cbor, got, tc.want)
		}
	}

	// Nothing acceptable: the Status as indented JSON.
	rec := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Accept", "text/html")
	h.ServeHTTP(rec, r)
	var st metav1.Status
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	want, _ := json.MarshalIndent(&st, "", "  ")
	if !bytes.Equal(rec.Body.Bytes(), want) || st.Kind != "Status" || st.Code != http.StatusTooManyRequests {
		t.Fatalf("body %s", rec.Body.Bytes())
	}
}
