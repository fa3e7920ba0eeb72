package apiserver

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/apiloom/apiloom/server/detach"
)

// TestConfigureHTTP2 serves h2 with each --http2-server and checks, on the
// wire, what the choice means: who answers (only our connection lets a
// handler detach its body), the stream limit advertised in SETTINGS, and
// the idle timeout ending the connection with GOAWAY.
func TestConfigureHTTP2(t *testing.T) {
	for _, impl := range []string{HTTP2ServerApiloom, HTTP2ServerGo} {
		t.Run(impl, func(t *testing.T) {
			o := DefaultOptions()
			o.HTTP2Server = impl
			o.HTTP2MaxStreamsPerConnection = 7
			ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, detachable := detach.Find(w)
				fmt.Fprintf(w, "%s detachable=%t", r.Proto, detachable)
			}))
			ts.Config.IdleTimeout = 300 * time.Millisecond
			if err := configureHTTP2(ts.Config, &o, nil); err != nil {
				t.Fatal(err)
			}
			ts.TLS = ts.Config.TLSConfig // StartTLS listens with ts.TLS: offer h2 there
			ts.StartTLS()
			defer ts.Close()

			fr := dialH2(t, ts)
			var hbuf bytes.Buffer
			enc := hpack.NewEncoder(&hbuf)
			for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "example.com"}, {":path", "/"}} {
				_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
			}
			if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hbuf.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
				t.Fatal(err)
			}

			var maxStreams uint32
			var body strings.Builder
			ended := false
			for {
				f, err := fr.ReadFrame()
				if err != nil {
					t.Fatalf("read frame (body so far %q): %v", body.String(), err)
				}
				switch f := f.(type) {
				case *http2.SettingsFrame:
					if f.IsAck() {
						continue
					}
					if v, ok := f.Value(http2.SettingMaxConcurrentStreams); ok {
						maxStreams = v
					}
					_ = fr.WriteSettingsAck()
				case *http2.DataFrame:
					body.Write(f.Data())
					ended = ended || f.StreamEnded()
				case *http2.MetaHeadersFrame:
					if st := f.PseudoValue("status"); st != "200" {
						t.Fatalf("status %s", st)
					}
					ended = ended || f.StreamEnded()
				case *http2.RSTStreamFrame:
					t.Fatalf("stream %d reset: %v", f.StreamID, f.ErrCode)
				case *http2.GoAwayFrame:
					if !ended {
						t.Fatalf("GOAWAY %v before the response ended", f.ErrCode)
					}
					if f.ErrCode != http2.ErrCodeNo {
						t.Fatalf("idle connection ended with GOAWAY %v, want NO_ERROR", f.ErrCode)
					}
					if maxStreams != 7 {
						t.Fatalf("SETTINGS_MAX_CONCURRENT_STREAMS %d, want --http2-max-streams-per-connection 7", maxStreams)
					}
					want := fmt.Sprintf("HTTP/2.0 detachable=%t", impl == HTTP2ServerApiloom)
					if body.String() != want {
						t.Fatalf("response %q, want %q", body.String(), want)
					}
					return
				}
			}
		})
	}
}

// TestGoHTTP2ServerWindows: the Go server gets kube-apiserver's windows,
// and the connection's, the stream window times the stream limit, stays a
// valid HTTP/2 window however many streams are allowed.
func TestGoHTTP2ServerWindows(t *testing.T) {
	o := DefaultOptions()
	s := goHTTP2Server(&o, 90*time.Second)
	if s.MaxConcurrentStreams != 100 || s.IdleTimeout != 90*time.Second || s.WriteByteTimeout != connWriteTimeout {
		t.Fatalf("limits: %+v", s)
	}
	if s.MaxReadFrameSize != 256<<10 || s.MaxUploadBufferPerStream != 256<<10 || s.MaxUploadBufferPerConnection != 100*256<<10 {
		t.Fatalf("windows: frame %d, stream %d, connection %d", s.MaxReadFrameSize, s.MaxUploadBufferPerStream, s.MaxUploadBufferPerConnection)
	}
	o.HTTP2MaxStreamsPerConnection = 1 << 20 // the flag's largest
	if s := goHTTP2Server(&o, 0); s.MaxUploadBufferPerConnection != math.MaxInt32 {
		t.Fatalf("connection window for %d streams: %d, want 2^31-1", o.HTTP2MaxStreamsPerConnection, s.MaxUploadBufferPerConnection)
	}
}

// dialH2 opens an HTTP/2 connection to ts at the frame level and sends the
// preface and SETTINGS.
func dialH2(t *testing.T, ts *httptest.Server) *http2.Framer {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	nc, err := tls.Dial("tcp", ts.Listener.Addr().String(), &tls.Config{RootCAs: pool, NextProtos: []string{"h2"}, ServerName: "example.com"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	if p := nc.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("ALPN negotiated %q", p)
	}
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second)) // a hung server fails the test
	fr := http2.NewFramer(nc, nc)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if _, err := nc.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	return fr
}

// TestHTTP2OverheadBudgetOption: --http2-overhead-budget reaches our
// HTTP/2 server: a PING flood beyond it ends the connection with
// GOAWAY(ENHANCE_YOUR_CALM).
func TestHTTP2OverheadBudgetOption(t *testing.T) {
	o := DefaultOptions()
	o.HTTP2OverheadBudget = 20
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	if err := configureHTTP2(ts.Config, &o, nil); err != nil {
		t.Fatal(err)
	}
	ts.TLS = ts.Config.TLSConfig
	ts.StartTLS()
	defer ts.Close()
	fr := dialH2(t, ts)
	go func() {
		for i := range 100 {
			if fr.WritePing(false, [8]byte{byte(i)}) != nil {
				return
			}
		}
	}()
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("connection ended without GOAWAY: %v", err)
		}
		if ga, ok := f.(*http2.GoAwayFrame); ok {
			if ga.ErrCode != http2.ErrCodeEnhanceYourCalm {
				t.Fatalf("GOAWAY %v, want ENHANCE_YOUR_CALM", ga.ErrCode)
			}
			return
		}
	}
}
