package responsewriters

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
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

// TestBodyWriter: a body is compressed exactly when the client accepts
// gzip and it is larger than GzipThreshold, whatever the sizes of the
// writes that make it up, and it decompresses to what was written.
func TestBodyWriter(t *testing.T) {
	body := bytes.Repeat([]byte(`{"kind":"Widget","spec":{"color":"red"}},`), GzipThreshold/20)
	for _, tc := range []struct {
		name       string
		gzip       bool
		size       int
		chunk      int
		compressed bool
	}{
		{"small", true, 1000, 1, false},
		{"at the threshold", true, GzipThreshold, 7, false},
		{"one byte over, small writes", true, GzipThreshold + 1, 7, true},
		{"one byte over, one write", true, GzipThreshold + 1, GzipThreshold + 1, true},
		{"large, in pieces", true, len(body), 4096, true},
		{"large, not accepted", false, len(body), 4096, false},
		{"empty", true, 0, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			bw := NewBodyWriter(rec, http.StatusTeapot, tc.gzip)
			want := body[:tc.size]
			for p := want; len(p) > 0; {
				n := min(tc.chunk, len(p))
				if _, err := bw.Write(p[:n]); err != nil {
					t.Fatal(err)
				}
				p = p[n:]
			}
			if err := bw.Close(); err != nil {
				t.Fatal(err)
			}
			got := rec.Body.Bytes()
			if rec.Code != http.StatusTeapot {
				t.Fatalf("status %d", rec.Code)
			}
			ce, vary := rec.Header().Get("Content-Encoding"), rec.Header().Get("Vary")
			if tc.compressed {
				if ce != "gzip" || vary != "Accept-Encoding" {
					t.Fatalf("Content-Encoding %q, Vary %q; want gzip, Accept-Encoding", ce, vary)
				}
				if got = gunzip(t, got); len(got) < 2*rec.Body.Len() {
					t.Fatalf("compressed %d bytes to %d", len(got), rec.Body.Len())
				}
			} else if ce != "" || vary != "" {
				t.Fatalf("uncompressed body with Content-Encoding %q, Vary %q", ce, vary)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("body of %d bytes, want %d", len(got), len(want))
			}
		})
	}

	t.Run("not accepted: nothing held back", func(t *testing.T) {
		rec := httptest.NewRecorder()
		bw := NewBodyWriter(rec, http.StatusOK, false)
		if _, err := bw.Write([]byte("{")); err != nil {
			t.Fatal(err)
		}
		if rec.Body.String() != "{" {
			t.Fatalf("after the first write the client has %q", rec.Body.String())
		}
		_ = bw.Close()
	})
}
