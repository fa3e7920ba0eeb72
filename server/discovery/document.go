package discovery

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Content types this package writes.
const (
	contentTypeJSON = "application/json"
	// contentTypeAggregatedV2 is the exact type client-go's discovery client
	// recognises as aggregated discovery (discovery.ContentTypeIsGVK).
	contentTypeAggregatedV2      = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	contentTypeAggregatedV2Beta1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
	contentTypeProtobufV2        = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
)

// document is one rendered response: its bytes, their content type and a
// strong entity tag. It is immutable once built, so any number of requests
// may serve it concurrently.
type document struct {
	body        []byte
	contentType string
	// hash is the upper-case hex SHA-512 of body, the form kube-apiserver uses
	// for ETags and for the ?hash= of OpenAPI v3 URLs.
	hash string
	// etag is hash quoted, as the ETag header requires.
	etag string
}

// newDocument hashes body; contentType is written verbatim.
func newDocument(body []byte, contentType string) *document {
	hash := fmt.Sprintf("%X", sha512.Sum512(body))
	return &document{body: body, contentType: contentType, hash: hash, etag: strconv.Quote(hash)}
}

// newJSONDocument encodes v as JSON. Construction-time only, so encoding/json
// is fine; map keys come out sorted, which keeps hashes stable across
// restarts and across replicas serving the same resources.
func newJSONDocument(v any, contentType string) (*document, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return newDocument(body, contentType), nil
}

// cachePolicy is the Cache-Control value a response carries.
type cachePolicy string

const (
	// revalidate lets caches keep the document but makes them ask again
	// with If-None-Match before using it: discovery, /version and the
	// unhashed OpenAPI URLs.
	revalidate cachePolicy = "public, no-cache"
	// immutable is for URLs that name their content (?hash=): they never
	// change, so caches may keep them for the longest time HTTP allows.
	immutable cachePolicy = "public, max-age=31536000, immutable"
)

// serve writes d, or 304 Not Modified when the client already holds it.
// Vary: Accept is always set because the same URL has several
// representations (aggregated or legacy discovery, JSON or protobuf).
func (d *document) serve(w http.ResponseWriter, r *http.Request, cache cachePolicy) {
	h := w.Header()
	h.Set("ETag", d.etag)
	h.Set("Vary", "Accept")
	h.Set("Cache-Control", string(cache))
	if etagMatches(r.Header.Get("If-None-Match"), d.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", d.contentType)
	h.Set("Content-Length", strconv.Itoa(len(d.body)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(d.body)
	}
}

// etagMatches implements the weak comparison If-None-Match asks for: a list
// of tags, each possibly W/-prefixed, or "*".
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for tag := range strings.SplitSeq(header, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" || strings.TrimPrefix(tag, "W/") == etag {
			return true
		}
	}
	return false
}
