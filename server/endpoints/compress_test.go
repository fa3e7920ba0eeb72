package endpoints

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// gunzip decompresses data or fails the test.
func gunzip(t *testing.T, data []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestResponseCompression serves lists, objects and watches to clients
// that ask for gzip in the ways kube-apiserver honours or ignores, and with
// compression turned off (--feature-gates APIResponseCompression=false).
func TestResponseCompression(t *testing.T) {
	e := newEnv(t, false)
	// 24 Widgets of about 8 KiB: a list of them is about 200 KiB, one is
	// far under the threshold; a 200 KiB Widget alone is over it.
	pad := strings.Repeat("x", 8<<10)
	for i := range 24 {
		w := storagetest.NewWidget("", fmt.Sprintf("w%02d", i), "red")
		w.Annotations = map[string]string{"pad": pad}
		body, _ := json.Marshal(w)
		e.do("POST", widgetsPath+"gz/widgets", "application/json", string(body)).widget(t, http.StatusCreated)
	}
	big := storagetest.NewWidget("", "big", "blue")
	big.Annotations = map[string]string{"pad": strings.Repeat("y", 200<<10)}
	body, _ := json.Marshal(big)
	e.do("POST", widgetsPath+"gzbig/widgets", "application/json", string(body)).widget(t, http.StatusCreated)

	list := widgetsPath + "gz/widgets?resourceVersion=0"
	plain := e.do("GET", list, "", "", "Accept-Encoding", "identity")
	if plain.code != http.StatusOK || plain.header.Get("Content-Encoding") != "" || len(plain.body) <= responsewriters.GzipThreshold {
		t.Fatalf("identity list: %d, Content-Encoding %q, %d bytes", plain.code, plain.header.Get("Content-Encoding"), len(plain.body))
	}

	for _, tc := range []struct {
		name, path, accept, encoding string
		same                         []byte // the body it must decompress to, when not nil
	}{
		{"large list", list, "gzip", "gzip", plain.body},
		{"large list, other codings too", list, "deflate, gzip", "gzip", plain.body},
		{"large list, gzip refused", list, "gzip;q=0", "", plain.body},
		{"large list, no Accept-Encoding", list, "", "", plain.body},
		{"large Table", widgetsPath + "gz/widgets?includeObject=Object", "gzip", "gzip", nil},
		{"small list", widgetsPath + "gz/widgets?limit=2", "gzip", "", nil},
		{"small object", widgetsPath + "gz/widgets/w01", "gzip", "", nil},
		{"large object", widgetsPath + "gzbig/widgets/big", "gzip", "gzip", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var headers []string
			if tc.accept != "" {
				headers = append(headers, "Accept-Encoding", tc.accept)
			}
			if strings.Contains(tc.name, "Table") {
				headers = append(headers, "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
			}
			// An Accept-Encoding of the request's own stops Go's
			// transport from decompressing behind our back; without one
			// it would ask for gzip itself, so that case disables it.
			r := e.doRaw("GET", tc.path, tc.accept == "", headers...)
			if r.code != http.StatusOK {
				t.Fatalf("%d %s", r.code, r.body)
			}
			ce, vary := r.header.Get("Content-Encoding"), r.header.Get("Vary")
			if ce != tc.encoding || (tc.encoding == "gzip") != (vary == "Accept-Encoding") {
				t.Fatalf("Content-Encoding %q, Vary %q; want %q", ce, vary, tc.encoding)
			}
			got := r.body
			if ce == "gzip" {
				got = gunzip(t, got)
			}
			if tc.same != nil && !bytes.Equal(got, tc.same) {
				t.Fatalf("body of %d bytes differs from the identity response's %d", len(got), len(tc.same))
			}
			if !json.Valid(got) {
				t.Fatalf("body is not JSON: %.200s", got)
			}
		})
	}

	t.Run("watch", func(t *testing.T) {
		r := e.doRaw("GET", widgetsPath+"gz/widgets?watch=true&resourceVersion=0&timeoutSeconds=1", false, "Accept-Encoding", "gzip")
		if ce := r.header.Get("Content-Encoding"); ce != "" || r.code != http.StatusOK || len(r.body) <= responsewriters.GzipThreshold {
			t.Fatalf("watch: %d, Content-Encoding %q, %d bytes", r.code, ce, len(r.body))
		}
	})

	t.Run("turned off", func(t *testing.T) {
		l := request.DefaultLimits()
		l.ResponseCompression = false
		srv := httptest.NewServer(NewHandler(NewResource(storagetest.Definition(), e.widgets, WithLimits(l))))
		t.Cleanup(srv.Close)
		off := &env{t: t, ctx: e.ctx, srv: srv}
		r := off.doRaw("GET", list, false, "Accept-Encoding", "gzip")
		if ce := r.header.Get("Content-Encoding"); ce != "" || !bytes.Equal(r.body, plain.body) {
			t.Fatalf("compression off: Content-Encoding %q, %d bytes", ce, len(r.body))
		}
	})
}

// doRaw is do with the response body as the server sent it: no
// decompression by the transport (noGzip keeps it from asking for gzip).
func (e *env) doRaw(method, path string, noGzip bool, headers ...string) response {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.ctx, method, e.srv.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	tr := e.srv.Client().Transport.(*http.Transport).Clone()
	tr.DisableCompression = noGzip
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: read: %v", method, path, err)
	}
	if resp.Uncompressed {
		e.t.Fatalf("%s %s: the transport decompressed the body", method, path)
	}
	return response{code: resp.StatusCode, header: resp.Header, body: data}
}
