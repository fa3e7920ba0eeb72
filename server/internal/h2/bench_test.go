package h2_test

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/apiloom/apiloom/server/detach"
	"github.com/apiloom/apiloom/server/internal/h2"
)

// BenchmarkDetachedFanout is the transport half of a watch fan-out: one
// 1 KiB event pushed to every detached stream of a TLS connection, and
// read by a frame-level client. ns/delivered is what one stream's copy of
// an event costs, server and client together.
func BenchmarkDetachedFanout(b *testing.B) {
	for _, streams := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			benchmarkFanout(b, streams)
		})
	}
}

func benchmarkFanout(b *testing.B, streams int) {
	sources := make(chan *testSource, streams)
	ts, _, _ := newServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		src := newTestSource()
		w.(detach.Detacher).DetachBody(src)
		sources <- src
	}), func(s *h2.Server, _ *http.Transport) { s.MaxConcurrentStreams = uint32(streams) })

	conn, err := tls.Dial("tcp", ts.Listener.Addr().String(), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	fr := http2.NewFramer(conn, conn)
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		b.Fatal(err)
	}
	const window = 1<<31 - 1
	_ = fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: window})
	_ = fr.WriteWindowUpdate(0, window-65535)
	var hbuf bytes.Buffer
	enc := hpack.NewEncoder(&hbuf)
	for i := range streams {
		hbuf.Reset()
		for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "x"}, {":path", "/watch"}} {
			_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: uint32(2*i + 1), BlockFragment: hbuf.Bytes(), EndStream: true, EndHeaders: true})
	}
	all := make([]*testSource, 0, streams)
	for range streams {
		src := <-sources
		<-src.started
		all = append(all, src)
	}
	event := bytes.Repeat([]byte("e"), 1024)
	want := streams * len(event)

	b.ResetTimer()
	for range b.N {
		for _, src := range all {
			src.push(event, false)
		}
		got := 0
		for got < want {
			f, err := fr.ReadFrame()
			if err != nil {
				b.Fatal(err)
			}
			if d, ok := f.(*http2.DataFrame); ok {
				got += len(d.Data())
			}
		}
		_ = fr.WriteWindowUpdate(0, uint32(got))
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*streams), "ns/delivered")
}

// BenchmarkItemByItemResponse is a LIST's body as the server writes it: 4
// MiB in writes of 1.5 KiB, read whole by Go's HTTP/2 client. Its B/op
// (server and client together) shows what the handler's buffering
// allocates per response.
func BenchmarkItemByItemResponse(b *testing.B) {
	item := bytes.Repeat([]byte("i"), 1536)
	const items = 4 << 20 / 1536
	ts, c, _ := newServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for range items {
			_, _ = w.Write(item)
		}
	}))
	b.SetBytes(items * int64(len(item)))
	b.ReportAllocs()
	for b.Loop() {
		resp, err := c.Get(ts.URL)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || n != items*int64(len(item)) {
			b.Fatalf("read %d bytes: %v", n, err)
		}
	}
}
