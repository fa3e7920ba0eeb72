package negotiation

import (
	"net/http"
	"strings"
)

// AcceptsGzip reports whether r's Accept-Encoding has a gzip token, read as
// kube-apiserver reads it: comma-separated tokens, spaces trimmed, exactly
// "gzip". Anything else is not gzip to it, so neither to us: "gzip;q=1",
// "GZIP" and "*" get an uncompressed answer, and so does "gzip;q=0",
// which refuses gzip.
func AcceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for token := range strings.SplitSeq(v, ",") {
			if strings.TrimSpace(token) == "gzip" {
				return true
			}
		}
	}
	return false
}
