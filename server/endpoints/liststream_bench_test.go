package endpoints

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
	"github.com/apiloom/apiloom/server/storage/storagetest"
	"github.com/apiloom/apiloom/server/wire"
)

// discardResponse is an http.ResponseWriter that counts the body and keeps
// none of it, as a socket would.
type discardResponse struct {
	header http.Header
	n      int64
}

func (d *discardResponse) Header() http.Header         { return d.header }
func (d *discardResponse) WriteHeader(int)             {}
func (d *discardResponse) Write(p []byte) (int, error) { d.n += int64(len(p)); return len(p), nil }

// BenchmarkListResponse is one LIST of 10,000 objects of about 1 KiB from
// the watch cache (items pre-encoded), answered as the handler does, item
// by item into the response ("streamed"), against the same list built as
// one buffer first and then written ("whole", what a serializer without
// KEP-5116's streaming does), each plain and gzipped. B/op is the memory
// one list costs the server: the whole list for "whole", buffers for
// "streamed".
func BenchmarkListResponse(b *testing.B) {
	h := NewResource(storagetest.Definition(), nil).(*handler[*widget])
	items := benchWidgets(10000)
	pad := strings.Repeat("p", 600) // to about 1 KiB, as apiloom-load's objects
	raw := make([][]byte, len(items))
	for i, it := range items {
		it.Annotations["example.com/pad"] = pad
		var err error
		if raw[i], err = wire.EncodeObject(it, h.gvk); err != nil {
			b.Fatal(err)
		}
	}
	lm := metav1.ListMeta{ResourceVersion: "123456"}
	req := httptest.NewRequest("GET", "/", nil)
	for _, gz := range []bool{false, true} {
		name := "identity"
		if gz {
			name = "gzip"
		}
		b.Run("whole/"+name, func(b *testing.B) {
			w := &discardResponse{header: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				var buf bytes.Buffer
				if err := h.encodeList(&buf, items, raw, lm, negotiation.Output{}); err != nil {
					b.Fatal(err)
				}
				data := buf.Bytes()
				if gz {
					var zbuf bytes.Buffer
					zw, _ := gzip.NewWriterLevel(&zbuf, responsewriters.GzipLevel)
					_, _ = zw.Write(data)
					_ = zw.Close()
					data = zbuf.Bytes()
				}
				_, _ = w.Write(data)
			}
			b.SetBytes(w.n / int64(b.N))
		})
		b.Run("streamed/"+name, func(b *testing.B) {
			w := &discardResponse{header: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				if err := h.writeList(w, req, negotiation.Output{Gzip: gz}, items, raw, nil, lm); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(w.n / int64(b.N))
		})
	}
}
