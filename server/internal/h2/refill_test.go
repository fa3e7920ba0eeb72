package h2_test

import (
	"bytes"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/net/http2"

	"github.com/apiloom/apiloom/server/internal/h2"
)

// Tests of when a stream waiting for window is taken again (refill.go):
// once the client has granted a write's worth (a quarter of its initial
// window, for these clients' small windows), or enough for the rest of the
// response, and not before.

// defaultWindow is a client's initial stream window when its SETTINGS
// leave it out, as the raw client's do.
const defaultWindow = 65535

// readStream reads stream id's DATA until it has n bytes, failing on a
// reset.
func readStream(rc *rawClient, id uint32, n int) {
	rc.t.Helper()
	for got := 0; got < n; {
		switch f := rc.next(isRSTOrData(id)).(type) {
		case *http2.RSTStreamFrame:
			rc.t.Fatalf("reset (%v) after %d bytes", f.ErrCode, got)
		case *http2.DataFrame:
			got += len(f.Data())
		}
	}
}

// TestSmallGrantsAreGathered: a client that grants 1 KiB at a time, each
// within StreamWriteTimeout, gets nothing until its grants add up to a
// quarter of its initial window, then all of it in one DATA frame; the
// grants keep the stream from being reset meanwhile.
func TestSmallGrantsAreGathered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRawClient(t, &h2.Server{StreamWriteTimeout: stallTimeout}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write(bytes.Repeat([]byte("x"), defaultWindow+64<<10))
		}))
		if err := rc.fr.WriteWindowUpdate(0, 1<<20); err != nil { // the connection's window is not the one waited for
			t.Fatal(err)
		}
		rc.get(1, "/")
		readStream(rc, 1, defaultWindow)
		granted := 0
		for granted+1024 < defaultWindow/4 {
			time.Sleep(stallTimeout - time.Second)
			if err := rc.fr.WriteWindowUpdate(1, 1024); err != nil {
				t.Fatal(err)
			}
			granted += 1024
			for _, f := range rc.sync() {
				if f.Header().StreamID == 1 {
					t.Fatalf("after %d bytes of grants: %v", granted, f.Header())
				}
			}
		}
		if err := rc.fr.WriteWindowUpdate(1, 1024); err != nil {
			t.Fatal(err)
		}
		granted += 1024
		switch f := rc.next(isRSTOrData(1)).(type) {
		case *http2.RSTStreamFrame:
			t.Fatalf("reset (%v) though each grant came within the timeout", f.ErrCode)
		case *http2.DataFrame:
			if len(f.Data()) != granted {
				t.Fatalf("DATA of %d bytes after %d granted, want all of it in one frame", len(f.Data()), granted)
			}
		}
	})
}

// TestLastBytesWaitForNoMoreWindow: a response whose rest is smaller than
// a frame goes out as soon as the client grants enough for it.
func TestLastBytesWaitForNoMoreWindow(t *testing.T) {
	const rest = 100
	rc := newRawClient(t, &h2.Server{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(bytes.Repeat([]byte("x"), defaultWindow+rest))
	}))
	if err := rc.fr.WriteWindowUpdate(0, 1<<20); err != nil {
		t.Fatal(err)
	}
	rc.get(1, "/")
	readStream(rc, 1, defaultWindow)
	if err := rc.fr.WriteWindowUpdate(1, rest); err != nil {
		t.Fatal(err)
	}
	// The end may follow in an empty frame of its own, once the handler
	// has returned.
	got := 0
	for {
		d, ok := rc.next(isRSTOrData(1)).(*http2.DataFrame)
		if !ok {
			t.Fatalf("reset after %d of the last %d bytes", got, rest)
		}
		got += len(d.Data())
		if d.StreamEnded() {
			break
		}
	}
	if got != rest {
		t.Fatalf("the stream ended after %d more bytes, want %d", got, rest)
	}
}
