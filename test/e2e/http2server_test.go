package e2e

import (
	"bytes"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiloomserver "github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/testserver"
)

// TestIdleWatchGoroutines: the suite's servers serve HTTP/2 with the
// implementation APILOOM_E2E_HTTP2_SERVER names, told apart by what an idle
// watch costs: nothing on our connection, which carries the watch without
// a goroutine, and its handler's goroutine on Go's. So the run with Go's
// server is known to be one, and ours is known to keep its promise.
func TestIdleWatchGoroutines(t *testing.T) {
	// No controllers: their informers start goroutines of their own.
	ts, cs := startServer(t, testserver.WithControllers())
	ts.CreateNamespaces(t, "shop")
	if _, err := cs.ExampleV1().Databases("shop").Create(t.Context(), newDatabase("orders"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const watches = 100
	// The server runs in this process, so go_goroutines counts the
	// client's goroutines too: the watches are opened on a raw connection,
	// which has none per stream.
	before := metric(t, ts.Config, "go_goroutines")
	openRawWatches(t, ts, watches)
	added := metric(t, ts.Config, "go_goroutines") - before
	switch impl := http2Server(t); impl {
	case apiloomserver.HTTP2ServerApiloom:
		if added >= watches/2 {
			t.Fatalf("%d idle watches over our HTTP/2 added %.0f goroutines, want none per watch", watches, added)
		}
	case apiloomserver.HTTP2ServerGo:
		if added < watches {
			t.Fatalf("%d idle watches over Go's HTTP/2 added %.0f goroutines, want one per watch: is Go's server serving?", watches, added)
		}
	}
	t.Logf("%s: %d idle watches added %.0f goroutines", http2Server(t), watches, added)
}

// openRawWatches opens n watches of databases in "shop" on one HTTP/2
// connection, driven by a framer on the test's goroutine, and returns once
// each has sent its first event. The connection closes when t ends.
func openRawWatches(t *testing.T, ts *testserver.TestServer, n int) {
	t.Helper()
	nc, err := tls.Dial("tcp", strings.TrimPrefix(ts.Config.Host, "https://"), tlsConfig(t, ts, "h2"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(60 * time.Second)) // a hung server fails the test
	fr := http2.NewFramer(nc, nc)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if _, err := nc.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	if err := fr.WriteWindowUpdate(0, 1<<30); err != nil { // room for every stream's first event
		t.Fatal(err)
	}
	var hbuf bytes.Buffer
	enc := hpack.NewEncoder(&hbuf)
	began := make(map[uint32]bool, n)
	for i := range n {
		hbuf.Reset()
		for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "x"},
			{":path", watchPath}, {"authorization", "Bearer " + ts.Config.BearerToken}} {
			_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		id := uint32(2*i + 1)
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hbuf.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
		// One watch at a time: the server's handler goroutines serve one
		// request after another and linger a few seconds when idle, so
		// watches opened all at once would leave as many idle handler
		// goroutines as had run at once, which say nothing of what a
		// watch costs once open.
		readUntilBegan(t, fr, began, id)
	}
}

// readUntilBegan reads frames until stream id has sent its first event,
// noting in began every stream that has.
func readUntilBegan(t *testing.T, fr *http2.Framer, began map[uint32]bool, id uint32) {
	t.Helper()
	for !began[id] {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("read frame (%d watches began): %v", len(began), err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		case *http2.MetaHeadersFrame:
			if st := f.PseudoValue("status"); st != "200" {
				t.Fatalf("watch on stream %d: status %s", f.StreamID, st)
			}
		case *http2.DataFrame:
			if !bytes.Contains(f.Data(), []byte(`"type":"ADDED"`)) {
				t.Fatalf("watch on stream %d began with %q", f.StreamID, f.Data())
			}
			began[f.StreamID] = true
		case *http2.RSTStreamFrame:
			t.Fatalf("watch on stream %d reset: %v", f.StreamID, f.ErrCode)
		case *http2.GoAwayFrame:
			t.Fatalf("GOAWAY %v", f.ErrCode)
		}
	}
}
