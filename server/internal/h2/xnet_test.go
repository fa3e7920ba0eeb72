package h2_test

import (
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"golang.org/x/net/http2"

	"github.com/apiloom/apiloom/server/internal/h2"
)

// Behaviours of x/net/http2's server, from its server_test.go, that
// apply to this one, written anew against the raw client: what a request
// looks like to its handler, which malformed requests reset their stream
// and which frames end the connection, and how flow control is returned.
// Where the two servers differ by design, the test says so. All run in
// synctest bubbles over net.Pipe.

// reqHandler hands each request, body read, to the test.
func reqHandler(reqs chan<- *http.Request, bodies chan<- string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			b = []byte("error: " + err.Error())
		}
		reqs <- r
		bodies <- string(b)
	})
}

func wantRST(t *testing.T, rc *rawClient, id uint32, code http2.ErrCode) {
	t.Helper()
	if rst := rc.next(func(f http2.Frame) bool { return isRST(id)(f) || isGoAway(f) }); isGoAway(rst) {
		t.Fatalf("GOAWAY %v, want RST_STREAM(%v) on stream %d", rst.(*http2.GoAwayFrame).ErrCode, code, id)
	} else if got := rst.(*http2.RSTStreamFrame).ErrCode; got != code {
		t.Fatalf("RST_STREAM(%v) on stream %d, want %v", got, id, code)
	}
}

func wantGoAway(t *testing.T, rc *rawClient, code http2.ErrCode) {
	t.Helper()
	if ga := rc.next(isGoAway).(*http2.GoAwayFrame); ga.ErrCode != code {
		t.Fatalf("GOAWAY %v, want %v", ga.ErrCode, code)
	}
	waitClosed(t, rc.done, "the connection to end")
}

// alive checks the connection still serves a request on stream id.
func alive(t *testing.T, rc *rawClient, id uint32) {
	t.Helper()
	rc.get(id, "/")
	if f := rc.next(func(f http2.Frame) bool { return isEndOf(id)(f) || isGoAway(f) }); isGoAway(f) {
		t.Fatalf("the connection ended: %v", f.(*http2.GoAwayFrame).ErrCode)
	}
}

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	_, _ = io.WriteString(w, "ok")
})

// x/net: TestServer_Request_Get, _Get_Host, _Get_Authority, _CookieConcat,
// _Post_NoContentLength_EndStream.
func TestXNetRequestFields(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reqs, bodies := make(chan *http.Request, 1), make(chan string, 1)
		rc := newRawClient(t, &h2.Server{}, reqHandler(reqs, bodies))
		rc.headers(1, true, ":method", "GET", ":scheme", "https", ":authority", "example.com", ":path", "/a/b?q=1",
			"foo-bar", "some-value", "cookie", "a=b", "cookie", "c=d")
		r := <-reqs
		<-bodies
		switch {
		case r.Method != "GET" || r.URL.Path != "/a/b" || r.URL.RawQuery != "q=1" || r.RequestURI != "/a/b?q=1":
			t.Errorf("method %s, URL %v, RequestURI %s", r.Method, r.URL, r.RequestURI)
		case r.Host != "example.com" || r.Proto != "HTTP/2.0" || r.ProtoMajor != 2:
			t.Errorf("host %s, proto %s", r.Host, r.Proto)
		case r.Header.Get("Foo-Bar") != "some-value" || r.Header.Get("Cookie") != "a=b; c=d":
			t.Errorf("header %v", r.Header)
		case r.ContentLength != 0:
			t.Errorf("a request with END_STREAM has ContentLength %d", r.ContentLength)
		}
		// Without :authority, Host comes from the host header.
		rc.headers(3, true, ":method", "GET", ":scheme", "https", ":path", "/", "host", "from-header")
		if r := <-reqs; r.Host != "from-header" {
			t.Errorf("host %q, want the host header's", r.Host)
		}
		<-bodies
	})
}

// x/net: TestServer_Request_Post_Body_ImmediateEOF, _OneData, _TwoData,
// _ContentLength_Correct, and request trailers (TestServerReadsTrailers,
// whose fields this server drops).
func TestXNetRequestBodies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reqs, bodies := make(chan *http.Request, 1), make(chan string, 1)
		rc := newRawClient(t, &h2.Server{}, reqHandler(reqs, bodies))
		post := func(id uint32, kv ...string) {
			rc.headers(id, false, append([]string{":method", "POST", ":scheme", "https", ":authority", "x", ":path", "/"}, kv...)...)
		}
		post(1)
		if err := rc.fr.WriteData(1, true, nil); err != nil {
			t.Fatal(err)
		}
		if <-reqs; <-bodies != "" {
			t.Error("an empty body was not empty")
		}
		post(3, "content-length", "8")
		_ = rc.fr.WriteData(3, false, []byte("abcd"))
		_ = rc.fr.WriteData(3, true, []byte("efgh"))
		if r := <-reqs; r.ContentLength != 8 {
			t.Errorf("ContentLength %d", r.ContentLength)
		}
		if b := <-bodies; b != "abcdefgh" {
			t.Errorf("body %q", b)
		}
		post(5)
		_ = rc.fr.WriteData(5, false, []byte("body"))
		rc.headers(5, true, "x-trailer", "v")
		if r := <-reqs; r.ContentLength != -1 {
			t.Errorf("ContentLength %d for a body of unknown length", r.ContentLength)
		}
		if b := <-bodies; b != "body" {
			t.Errorf("body with trailers %q", b)
		}
	})
}

// x/net: TestServer_Request_Post_Body_ContentLength_TooLarge and
// _TooSmall: a body that disagrees with its Content-Length resets the
// stream with PROTOCOL_ERROR, and its handler's read fails.
func TestXNetContentLengthMismatch(t *testing.T) {
	for _, tc := range []struct {
		name, declared, body string
	}{{"too large", "3", "abcd"}, {"too small", "5", "abcd"}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				reqs, bodies := make(chan *http.Request, 1), make(chan string, 1)
				rc := newRawClient(t, &h2.Server{}, reqHandler(reqs, bodies))
				rc.headers(1, false, ":method", "POST", ":scheme", "https", ":authority", "x", ":path", "/", "content-length", tc.declared)
				if err := rc.fr.WriteData(1, true, []byte(tc.body)); err != nil {
					t.Fatal(err)
				}
				wantRST(t, rc, 1, http2.ErrCodeProtocol)
				<-reqs
				if b := <-bodies; len(b) < 6 || b[:6] != "error:" {
					t.Errorf("the handler read %q", b)
				}
			})
		})
	}
}

// x/net: TestServer_Request_Reject_* and TestServer_Rejects_ConnHeaders:
// a malformed request resets its stream with PROTOCOL_ERROR, and the
// connection goes on.
func TestXNetMalformedRequests(t *testing.T) {
	base := []string{":method", "GET", ":scheme", "https", ":authority", "x", ":path", "/"}
	for _, tc := range []struct {
		name   string
		fields []string
	}{
		{"capital header", append(base, "Foo", "bar")},
		{"colon in name", append(base, "foo:bar", "v")},
		{"NUL in name", append(base, "foo\x00bar", "v")},
		{"empty name", append(base, "", "v")},
		{"newline in value", append(base, "foo", "a\nb")},
		{"CR in value", append(base, "foo", "a\rb")},
		{"DEL in value", append(base, "foo", "a\x7fb")},
		{"no :method", []string{":scheme", "https", ":path", "/"}},
		{"no :path", []string{":method", "GET", ":scheme", "https"}},
		{"no :scheme", []string{":method", "GET", ":path", "/"}},
		{"two :method", append(base, ":method", "POST")},
		{"pseudo after regular", []string{":method", "GET", "foo", "bar", ":scheme", "https", ":path", "/"}},
		{"unknown pseudo", append(base[:len(base):len(base)], ":unknown", "x")},
		{"connection header", append(base, "connection", "close")},
		{"transfer-encoding", append(base, "transfer-encoding", "chunked")},
		{"te other than trailers", append(base, "te", "gzip")},
		{"bad content-length", append(base, "content-length", "+5")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rc := newRawClient(t, &h2.Server{}, okHandler)
				rc.headers(1, true, tc.fields...)
				wantRST(t, rc, 1, http2.ErrCodeProtocol)
				alive(t, rc, 3)
			})
		})
	}
}

// x/net: TestRejectFrameOnIdle_*, TestServer_Rejects_HeadersNoEnd_Then_*,
// _HeadersEnd_Then_Continuation, _Headers0, _Continuation0, _Priority0,
// _PushPromise, TestServer_Send_GoAway_After_Bogus_WindowUpdate,
// TestServer_RejectsLargeFrames: connection errors.
func TestXNetConnectionErrors(t *testing.T) {
	block := []byte{0x82, 0x87, 0x84} // :method GET, :scheme https, :path /
	for _, tc := range []struct {
		name string
		send func(fr *http2.Framer) error
		code http2.ErrCode
	}{
		{"WINDOW_UPDATE on an idle stream", func(fr *http2.Framer) error { return fr.WriteWindowUpdate(123, 456) }, http2.ErrCodeProtocol},
		{"DATA on an idle stream", func(fr *http2.Framer) error { return fr.WriteData(123, true, []byte("x")) }, http2.ErrCodeProtocol},
		{"RST_STREAM on an idle stream", func(fr *http2.Framer) error { return fr.WriteRSTStream(123, http2.ErrCodeCancel) }, http2.ErrCodeProtocol},
		{"HEADERS on an even stream", func(fr *http2.Framer) error {
			return fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 2, BlockFragment: block, EndStream: true, EndHeaders: true})
		}, http2.ErrCodeProtocol},
		{"HEADERS without END_HEADERS, then HEADERS", func(fr *http2.Framer) error {
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block, EndStream: true})
			return fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: block, EndStream: true, EndHeaders: true})
		}, http2.ErrCodeProtocol},
		{"HEADERS without END_HEADERS, then PING", func(fr *http2.Framer) error {
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block, EndStream: true})
			return fr.WritePing(false, [8]byte{})
		}, http2.ErrCodeProtocol},
		{"CONTINUATION on another stream", func(fr *http2.Framer) error {
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block, EndStream: true})
			return fr.WriteContinuation(3, true, []byte{0x86})
		}, http2.ErrCodeProtocol},
		{"CONTINUATION after END_HEADERS", func(fr *http2.Framer) error {
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block, EndStream: true, EndHeaders: true})
			return fr.WriteContinuation(1, true, []byte{0x86})
		}, http2.ErrCodeProtocol},
		{"HEADERS on stream 0", func(fr *http2.Framer) error {
			return fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 0, BlockFragment: block, EndStream: true, EndHeaders: true})
		}, http2.ErrCodeProtocol},
		{"PRIORITY on stream 0", func(fr *http2.Framer) error {
			return fr.WritePriority(0, http2.PriorityParam{StreamDep: 1})
		}, http2.ErrCodeProtocol},
		{"PUSH_PROMISE", func(fr *http2.Framer) error {
			return fr.WritePushPromise(http2.PushPromiseParam{StreamID: 1, PromiseID: 2, BlockFragment: block, EndHeaders: true})
		}, http2.ErrCodeProtocol},
		{"connection window overflow", func(fr *http2.Framer) error { return fr.WriteWindowUpdate(0, 1<<31-1) }, http2.ErrCodeFlowControl},
		{"frame larger than SETTINGS_MAX_FRAME_SIZE", func(fr *http2.Framer) error {
			return fr.WriteRawFrame(http2.FramePing, 0, 0, make([]byte, 16<<10+1))
		}, http2.ErrCodeFrameSize},
		{"dynamic table larger than advertised", func(fr *http2.Framer) error {
			// A dynamic table size update to 8192, then :method GET.
			return fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: []byte{0x3f, 0xe1, 0x3f, 0x82}, EndStream: true, EndHeaders: true})
		}, http2.ErrCodeCompression},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rc := newRawClient(t, &h2.Server{}, okHandler)
				rc.fr.AllowIllegalWrites = true
				l := rc.readAll() // the server may stop reading before the frame's end
				if err := tc.send(rc.fr); err != nil && !errors.Is(err, io.ErrClosedPipe) {
					t.Fatal(err)
				}
				<-l.done
				if ga := l.goneAway(); ga == nil || ga.ErrCode != tc.code {
					t.Fatalf("GOAWAY %v, want %v", ga, tc.code)
				}
			})
		})
	}
}

// x/net: TestServer_Rejects_HeadersSelfDependence,
// _PrioritySelfDependence, TestServer_Send_RstStream_After_Bogus_WindowUpdate,
// TestServer_Headers_HalfCloseRemote: stream errors, after which the
// connection goes on.
func TestXNetStreamErrors(t *testing.T) {
	block := []byte{0x83, 0x87, 0x84} // :method POST, :scheme https, :path /
	for _, tc := range []struct {
		name string
		send func(rc *rawClient) error
		code http2.ErrCode
	}{
		{"HEADERS depending on itself", func(rc *rawClient) error {
			return rc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block, EndStream: true, EndHeaders: true,
				Priority: http2.PriorityParam{StreamDep: 1, Weight: 1}})
		}, http2.ErrCodeProtocol},
		{"PRIORITY depending on itself", func(rc *rawClient) error {
			return rc.fr.WritePriority(1, http2.PriorityParam{StreamDep: 1})
		}, http2.ErrCodeProtocol},
		{"stream window overflow", func(rc *rawClient) error {
			_ = rc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block, EndHeaders: true})
			return rc.fr.WriteWindowUpdate(1, 1<<31-1)
		}, http2.ErrCodeFlowControl},
		{"HEADERS on a half-closed stream", func(rc *rawClient) error {
			_ = rc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block, EndHeaders: true})
			_ = rc.fr.WriteData(1, true, nil)
			return rc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: []byte{0x86}, EndStream: true, EndHeaders: true})
		}, http2.ErrCodeStreamClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rc := newRawClient(t, &h2.Server{}, budgetHandler)
				rc.fr.AllowIllegalWrites = true
				if err := tc.send(rc); err != nil {
					t.Fatal(err)
				}
				wantRST(t, rc, 1, tc.code)
				rc.get(3, "/answer")
				rc.next(isEndOf(3))
			})
		})
	}
}

// x/net: TestServer_RSTStream_Unblocks_Read: a handler waiting for its
// body sees an error once the client resets the stream.
func TestXNetResetUnblocksBodyRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errs := make(chan error, 1)
		rc := newRawClient(t, &h2.Server{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, err := r.Body.Read(make([]byte, 1))
			errs <- err
		}))
		rc.headers(1, false, ":method", "POST", ":scheme", "https", ":authority", "x", ":path", "/")
		synctest.Wait() // the handler waits for its body
		if err := rc.fr.WriteRSTStream(1, http2.ErrCodeCancel); err != nil {
			t.Fatal(err)
		}
		if err := <-errs; err == nil || errors.Is(err, io.EOF) {
			t.Fatalf("the body read returned %v, want an error", err)
		}
	})
}

// x/net: TestServer_Handler_Sends_WindowUpdate,
// TestServerReturnsStreamAndConnFlowControlOnBodyClose,
// TestUnreadFlowControlReturned_Server: what the handler reads is
// returned to both windows, and what it closes unread to the connection's.
func TestXNetFlowControlReturned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const size = 300 << 10 // above the batching threshold (a quarter of a window)
		closeIt := make(chan bool, 2)
		rc := newRawClient(t, &h2.Server{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if <-closeIt {
				_ = r.Body.Close()
			} else {
				_, _ = io.ReadFull(r.Body, make([]byte, size))
			}
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}))
		send := func(id uint32) (stream, conn uint32) {
			rc.headers(id, false, ":method", "POST", ":scheme", "https", ":authority", "x", ":path", "/")
			// Exactly size: a byte the handler leaves unread keeps its last
			// read from draining the body, and the stream's window is then
			// returned only in batches of a quarter window.
			for sent := 0; sent < size; sent += 16 << 10 {
				if err := rc.fr.WriteData(id, false, make([]byte, min(16<<10, size-sent))); err != nil {
					t.Fatal(err)
				}
			}
			synctest.Wait()
			for _, f := range rc.sync() {
				if wu, ok := f.(*http2.WindowUpdateFrame); ok && wu.StreamID == id {
					stream += wu.Increment
				} else if ok && wu.StreamID == 0 {
					conn += wu.Increment
				}
			}
			return stream, conn
		}
		closeIt <- false
		if stream, conn := send(1); stream < size/2 || conn < size/2 {
			t.Errorf("read: %d bytes returned to the stream, %d to the connection, of %d", stream, conn, size)
		}
		closeIt <- true
		if _, conn := send(3); conn < size/2 {
			t.Errorf("closed unread: %d bytes returned to the connection, of %d", conn, size)
		}
	})
}

// x/net: TestServer_Response_Empty_Data_Not_FlowControlled: a response
// that ends with no more data ends with an empty DATA frame even when the
// client grants no window.
func TestXNetEmptyDataNeedsNoWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRawClient(t, &h2.Server{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.(http.Flusher).Flush()
		}))
		rc.zeroWindow()
		rc.get(1, "/")
		if h := rc.next(isHeaders(1)); h.Header().Flags.Has(http2.FlagHeadersEndStream) {
			t.Fatal("the flushed header ended the stream")
		}
		if d := rc.next(isEndOf(1)).(*http2.DataFrame); len(d.Data()) != 0 {
			t.Fatalf("last DATA of %d bytes", len(d.Data()))
		}
	})
}

// x/net: TestServerSettingsFlowControlUpdateBeyondLimit: a new initial
// window that takes a stream's window past 2^31-1 ends the connection
// with FLOW_CONTROL_ERROR. (x/net notices at the stream's next write;
// this server when it applies the setting.)
func TestXNetInitialWindowOverflow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRawClient(t, &h2.Server{}, budgetHandler)
		rc.get(1, "/wait")
		if err := rc.fr.WriteWindowUpdate(1, 1000); err != nil {
			t.Fatal(err)
		}
		if err := rc.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1<<31 - 1 - 1000 + 1}); err != nil {
			t.Fatal(err)
		}
		wantGoAway(t, rc, http2.ErrCodeFlowControl)
	})
}

// x/net: TestProtocolErrorAfterGoAway: after the client's GOAWAY, a
// connection error still ends the connection, and (unlike x/net, which
// closes without a word) the server says why in a second GOAWAY.
func TestXNetProtocolErrorAfterGoAway(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRawClient(t, &h2.Server{}, okHandler)
		rc.headers(1, false, ":method", "POST", ":scheme", "https", ":authority", "x", ":path", "/", "content-length", "12")
		_ = rc.fr.WriteData(1, false, []byte("some "))
		_ = rc.fr.WriteGoAway(1, http2.ErrCodeNo, nil)
		_ = rc.fr.WriteWindowUpdate(0, 1<<31-1)
		if ga := rc.next(isGoAway).(*http2.GoAwayFrame); ga.LastStreamID != 1 || ga.ErrCode != http2.ErrCodeNo {
			t.Fatalf("GOAWAY %v, last stream %d; want NO_ERROR, 1", ga.ErrCode, ga.LastStreamID)
		}
		// The error that ends the connection is told in a second GOAWAY.
		if ga := rc.next(isGoAway).(*http2.GoAwayFrame); ga.LastStreamID != 1 || ga.ErrCode != http2.ErrCodeFlowControl {
			t.Fatalf("second GOAWAY %v, last stream %d; want FLOW_CONTROL_ERROR, 1", ga.ErrCode, ga.LastStreamID)
		}
		waitClosed(t, rc.done, "the connection to end")
	})
}

// x/net: TestServerInitialFlowControlWindow, TestServerDoS_MaxHeaderListSize
// (its SETTINGS part): the server's first SETTINGS advertise its stream
// limit, window and header list size, and a WINDOW_UPDATE raises the
// connection's window.
func TestXNetServerSettings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRawClient(t, &h2.Server{MaxConcurrentStreams: 7, MaxHeaderListSize: 8 << 10}, okHandler)
		sf := rc.next(func(f http2.Frame) bool {
			sf, ok := f.(*http2.SettingsFrame)
			return ok && !sf.IsAck()
		}).(*http2.SettingsFrame)
		for id, want := range map[http2.SettingID]uint32{
			http2.SettingMaxConcurrentStreams: 7,
			http2.SettingInitialWindowSize:    1 << 20,
			http2.SettingMaxHeaderListSize:    8 << 10,
		} {
			if v, ok := sf.Value(id); !ok || v != want {
				t.Errorf("%v = %d (set %v), want %d", id, v, ok, want)
			}
		}
		wu := rc.next(func(f http2.Frame) bool { return f.Header().Type == http2.FrameWindowUpdate }).(*http2.WindowUpdateFrame)
		if wu.StreamID != 0 || wu.Increment != 4<<20-65535 {
			t.Errorf("WINDOW_UPDATE stream %d +%d, want the connection's window raised to 4 MiB", wu.StreamID, wu.Increment)
		}
	})
}

// x/net: TestServerContinuationFlood: header fields beyond the header list
// limit, in CONTINUATIONs, end the connection without an answer.
func TestXNetContinuationFlood(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var served atomic.Int64
		rc := newRawClient(t, &h2.Server{MaxHeaderListSize: 4096}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) }))
		l := rc.readAll()
		_ = rc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: rc.encode(":method", "GET", ":scheme", "https", ":path", "/"), EndStream: true})
		for i := range 1000 {
			if rc.fr.WriteContinuation(1, false, rc.encode("x-"+string(rune('a'+i%26))+string(rune('a'+i/26%26)), "1234567890")) != nil {
				break
			}
		}
		<-l.done
		if l.goneAway() == nil || served.Load() != 0 || l.count(isHeaders(1)) != 0 {
			t.Fatalf("GOAWAY %v, %d served", l.goneAway(), served.Load())
		}
	})
}
