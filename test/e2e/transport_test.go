package e2e

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/websocket"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/testserver"
)

const watchPath = "/apis/example.apiloom.dev/v1/namespaces/shop/databases?watch=true&resourceVersion=0&timeoutSeconds=30"

func tlsConfig(t *testing.T, ts *testserver.TestServer, protos ...string) *tls.Config {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ts.Config.CAData) {
		t.Fatal("bad CA")
	}
	return &tls.Config{RootCAs: pool, NextProtos: protos}
}

// firstWatchEvent opens a watch with client and reads its first event.
func firstWatchEvent(t *testing.T, ts *testserver.TestServer, client *http.Client) (*http.Response, metav1.WatchEvent) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.Config.Host+watchPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+ts.Config.BearerToken)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("watch: %s %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	var ev metav1.WatchEvent
	line, err := bufio.NewReader(resp.Body).ReadBytes('\n')
	if err != nil {
		t.Fatalf("read event: %v", err)
	}
	if err := json.Unmarshal(line, &ev); err != nil {
		t.Fatalf("decode %q: %v", line, err)
	}
	return resp, ev
}

func TestWatchTransports(t *testing.T) {
	ts, cs := startServer(t)
	ts.CreateNamespaces(t, "shop")
	if _, err := cs.ExampleV1().Databases("shop").Create(t.Context(), newDatabase("orders"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("http1.1-chunked", func(t *testing.T) {
		tr := &http.Transport{TLSClientConfig: tlsConfig(t, ts, "http/1.1"), TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}
		defer tr.CloseIdleConnections()
		resp, ev := firstWatchEvent(t, ts, &http.Client{Transport: tr})
		if resp.ProtoMajor != 1 || len(resp.TransferEncoding) == 0 || resp.TransferEncoding[0] != "chunked" {
			t.Fatalf("proto %s, transfer-encoding %v; want HTTP/1.1 chunked", resp.Proto, resp.TransferEncoding)
		}
		if ev.Type != "ADDED" || !strings.Contains(string(ev.Object.Raw), `"kind":"Database"`) {
			t.Fatalf("event %s %s", ev.Type, ev.Object.Raw)
		}
	})

	t.Run("http2-alpn", func(t *testing.T) {
		tr := &http2.Transport{TLSClientConfig: tlsConfig(t, ts, "h2", "http/1.1")}
		defer tr.CloseIdleConnections()
		resp, ev := firstWatchEvent(t, ts, &http.Client{Transport: tr})
		if resp.ProtoMajor != 2 || resp.TLS == nil || resp.TLS.NegotiatedProtocol != "h2" {
			t.Fatalf("proto %s, ALPN %q; want h2", resp.Proto, resp.TLS.NegotiatedProtocol)
		}
		if ev.Type != "ADDED" {
			t.Fatalf("event %s", ev.Type)
		}
	})

	t.Run("websocket", func(t *testing.T) {
		ws := dialWebSocket(t, ts, watchPath)
		defer ws.Close()
		var msg string
		if err := websocket.Message.Receive(ws, &msg); err != nil {
			t.Fatalf("receive: %v", err)
		}
		var ev metav1.WatchEvent
		if err := json.Unmarshal([]byte(msg), &ev); err != nil || ev.Type != "ADDED" {
			t.Fatalf("message %q: %v", msg, err)
		}
	})
}

// dialWebSocket opens a WebSocket to path as the server's loopback user.
func dialWebSocket(t *testing.T, ts *testserver.TestServer, path string) *websocket.Conn {
	t.Helper()
	cfg, err := websocket.NewConfig(strings.Replace(ts.Config.Host, "https://", "wss://", 1)+path, ts.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	cfg.TlsConfig = tlsConfig(t, ts, "http/1.1")
	cfg.Header.Set("Authorization", "Bearer "+ts.Config.BearerToken)
	ws, err := websocket.DialConfig(cfg)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	return ws
}
