package negotiation

import (
	"net/http/httptest"
	"testing"
)

// TestAcceptsGzip pins the reading of Accept-Encoding to kube-apiserver's,
// checked against kube-apiserver v1.37 with a 200 KiB list of ConfigMaps:
// only an exact "gzip" token (spaces aside) got Content-Encoding: gzip.
func TestAcceptsGzip(t *testing.T) {
	for _, tc := range []struct {
		header []string
		want   bool
	}{
		{nil, false},
		{[]string{"gzip"}, true},
		{[]string{"deflate, gzip"}, true},
		{[]string{"br,gzip "}, true},
		{[]string{"br", "gzip"}, true},
		{[]string{"identity"}, false},
		{[]string{"gzip;q=0"}, false},
		{[]string{"gzip;q=1"}, false},
		{[]string{" GZIP"}, false},
		{[]string{"*"}, false},
		{[]string{"x-gzip"}, false},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		for _, v := range tc.header {
			r.Header.Add("Accept-Encoding", v)
		}
		if got := AcceptsGzip(r); got != tc.want {
			t.Errorf("Accept-Encoding %q: gzip %t, want %t", tc.header, got, tc.want)
		}
	}
}
