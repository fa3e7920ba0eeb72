package apiserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/internal/h2"
)

// Servers over net.Pipe for tests of the request filters in synctest
// bubbles: net/http's own HTTP/1.1 server and our HTTP/2 connection, so
// that the deadlines the filters set are those of the real thing, and
// time is the bubble's.

// pipeListener hands one connection to an http.Server.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// serveHTTP1 serves h over HTTP/1.1 on one in-memory connection and
// returns the client's end.
func serveHTTP1(t *testing.T, h http.Handler) net.Conn {
	t.Helper()
	client, server := net.Pipe()
	l := &pipeListener{conns: make(chan net.Conn, 1), done: make(chan struct{})}
	l.conns <- server
	srv := &http.Server{Handler: h}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(l)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		_ = client.Close()
		<-served
	})
	return client
}

// http1Request writes a request with a body that declares contentLength
// bytes and sends only body.
func http1Request(t *testing.T, c net.Conn, method, path string, contentLength int, body string) *bufio.Reader {
	t.Helper()
	req := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", method, path, contentLength, body)
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	return bufio.NewReader(c)
}

// h2Client drives our HTTP/2 connection frame by frame.
type h2Client struct {
	t    *testing.T
	nc   net.Conn
	fr   *http2.Framer
	hbuf bytes.Buffer
	enc  *hpack.Encoder
}

// serveHTTP2 serves h with server/internal/h2 on one in-memory connection
// whose client starts with the given SETTINGS.
func serveHTTP2(t *testing.T, h http.Handler, settings ...http2.Setting) *h2Client {
	t.Helper()
	client, server := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		(&h2.Server{}).ServeConn(context.Background(), server, h)
	}()
	t.Cleanup(func() {
		_ = client.Close()
		<-done
	})
	c := &h2Client{t: t, nc: client, fr: http2.NewFramer(client, client)}
	c.enc = hpack.NewEncoder(&c.hbuf)
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if _, err := client.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	if err := c.fr.WriteSettings(settings...); err != nil {
		t.Fatal(err)
	}
	return c
}

// request opens stream id; a body of "" with end sends no DATA.
func (c *h2Client) request(id uint32, method, path string, contentLength int, body string, end bool) {
	c.t.Helper()
	c.hbuf.Reset()
	fields := [][2]string{{":method", method}, {":scheme", "https"}, {":authority", "x"}, {":path", path}}
	if contentLength >= 0 {
		fields = append(fields, [2]string{"content-length", fmt.Sprint(contentLength)})
	}
	for _, f := range fields {
		_ = c.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	noBody := body == "" && end
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: c.hbuf.Bytes(), EndStream: noBody, EndHeaders: true}); err != nil {
		c.t.Fatal(err)
	}
	if !noBody {
		if err := c.fr.WriteData(id, end, []byte(body)); err != nil {
			c.t.Fatal(err)
		}
	}
}

// h2Response is what the client read of one stream.
type h2Response struct {
	status string
	body   []byte
	reset  http2.ErrCode // set when the stream was reset
	ended  bool          // END_STREAM or RST_STREAM came
}

func (r h2Response) String() string {
	return fmt.Sprintf("status %s, body %q, reset %v, ended %v", r.status, r.body, r.reset, r.ended)
}

// read reads frames until stream id ends (END_STREAM or RST_STREAM);
// frames of other streams are skipped.
func (c *h2Client) read(id uint32) h2Response {
	c.t.Helper()
	var r h2Response
	for !r.ended {
		f, err := c.fr.ReadFrame()
		if err != nil {
			c.t.Fatalf("read frame: %v", err)
		}
		if f.Header().StreamID != id {
			continue
		}
		switch f := f.(type) {
		case *http2.MetaHeadersFrame:
			r.status = f.PseudoValue("status")
			r.ended = f.StreamEnded()
		case *http2.DataFrame:
			r.body = append(r.body, f.Data()...)
			r.ended = f.StreamEnded()
		case *http2.RSTStreamFrame:
			r.reset, r.ended = f.ErrCode, true
		}
	}
	return r
}

// readStatus decodes a Status body.
func readStatus(t *testing.T, body []byte) metav1.Status {
	t.Helper()
	var s metav1.Status
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatalf("not a Status: %q: %v", body, err)
	}
	return s
}

// checkTimeoutStatus checks kube-apiserver's 504 for a request that ran
// out of time.
func checkTimeoutStatus(t *testing.T, body []byte) {
	t.Helper()
	s := readStatus(t, body)
	if s.Kind != "Status" || s.Code != http.StatusGatewayTimeout || s.Reason != metav1.StatusReasonTimeout ||
		s.Message != "Timeout: request did not complete within the allotted timeout" {
		t.Fatalf("got %+v, want kube-apiserver's 504 Timeout Status", s)
	}
}

// blocked is what a handler saw of a call that blocked: its error and for
// how long.
type blocked struct {
	err   error
	after time.Duration
}
