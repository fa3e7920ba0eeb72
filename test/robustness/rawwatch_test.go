package robustness

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"k8s.io/client-go/rest"

	"github.com/apiloom/apiloom/test/robustness/cluster"
)

// rawWatch is a watch over a TLS connection of its own, spoken as
// HTTP/1.1 by hand so that the test controls the socket: it can stop
// reading altogether (with a tiny receive buffer, so the server's writes
// block at once) or reset the connection (SO_LINGER 0: an RST, no FIN).
type rawWatch struct {
	conn *tls.Conn
	tcp  *net.TCPConn
	body io.ReadCloser // the response's body: the watch's JSON events
}

// rawDialer dials replica r as its admin.
type rawDialer struct {
	addr string
	tls  *tls.Config
}

func newRawDialer(r *cluster.Replica) (*rawDialer, error) {
	cfg, err := r.Config()
	if err != nil {
		return nil, err
	}
	tc, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, err
	}
	tc = tc.Clone()
	tc.NextProtos = []string{"http/1.1"}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	if tc.ServerName == "" {
		tc.ServerName = u.Hostname()
	}
	return &rawDialer{addr: u.Host, tls: tc}, nil
}

// watch opens a watch of path (e.g. the databases of a namespace) and
// waits for the response's header. rcvbuf > 0 sets the socket's receive
// buffer before connecting.
func (d *rawDialer) watch(ctx context.Context, path string, rcvbuf int) (*rawWatch, error) {
	return d.watchQuery(ctx, path, "", rcvbuf)
}

// watchQuery is watch with more query parameters (query: "&a=b...").
func (d *rawDialer) watchQuery(ctx context.Context, path, query string, rcvbuf int) (*rawWatch, error) {
	dialer := net.Dialer{Timeout: 5 * time.Second}
	if rcvbuf > 0 {
		dialer.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf) })
			if err != nil {
				return err
			}
			return serr
		}
	}
	c, err := dialer.DialContext(ctx, "tcp", d.addr)
	if err != nil {
		return nil, err
	}
	tc := tls.Client(c, d.tls)
	w := &rawWatch{conn: tc, tcp: c.(*net.TCPConn)}
	tc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, err
	}
	if _, err := fmt.Fprintf(tc, "GET %s?watch=1&allowWatchBookmarks=true%s HTTP/1.1\r\nHost: %s\r\nAccept: application/json\r\n\r\n", path, query, d.addr); err != nil {
		c.Close()
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReaderSize(tc, 512), nil)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("watch %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		c.Close()
		return nil, fmt.Errorf("watch %s: %s", path, resp.Status)
	}
	tc.SetDeadline(time.Time{})
	w.body = resp.Body
	return w, nil
}

// reset closes the connection with an RST, as a crashed client's kernel
// or a middlebox does.
func (w *rawWatch) reset() {
	w.tcp.SetLinger(0)
	w.tcp.Close()
}

// drainUntilClosed reads until the server ends the connection; it fails
// when the server still sends after within (it did not cut the watch).
func (w *rawWatch) drainUntilClosed(within time.Duration) error {
	defer w.tcp.Close()
	w.tcp.SetReadDeadline(time.Now().Add(within))
	buf := make([]byte, 64<<10)
	for {
		if _, err := w.tcp.Read(buf); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				return fmt.Errorf("still open after %v", within)
			}
			return nil // EOF or reset: the server ended it
		}
	}
}
