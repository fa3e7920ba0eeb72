package cluster

import (
	"context"
	"fmt"
	"net/url"

	"go.etcd.io/etcd/pkg/v3/proxy"
	"go.uber.org/zap"
)

// Proxy is etcd's own TCP proxy (go.etcd.io/etcd/pkg/v3/proxy, the one
// etcd's e2e and robustness tests use) on one link: it can delay
// (DelayTx/DelayRx, latency ± a random part), drop every byte without
// closing the connection (BlackholeTx/BlackholeRx: a half-open
// connection), or pause either direction. Tx is what the dialler sends,
// Rx what it receives.
type Proxy struct {
	proxy.Server
	// URL is where the proxy listens: what the dialler is given.
	URL string
}

// startProxy listens on 127.0.0.1:port (the proxy package listens on
// every address of that port) and forwards to target, a URL.
func startProxy(ctx context.Context, port int, target string) (*Proxy, error) {
	to, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	from := url.URL{Scheme: "tcp", Host: fmt.Sprintf("127.0.0.1:%d", port)}
	s := proxy.NewServer(proxy.ServerConfig{Logger: zap.NewNop(), From: from, To: *to})
	select {
	case <-s.Ready():
	case err := <-s.Error():
		s.Close()
		return nil, fmt.Errorf("cluster: proxy %s -> %s: %w", from.Host, to.Host, err)
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	}
	// The proxy reports each connection's copy error on a channel of 16
	// and blocks that connection until it is read: drain it. The
	// goroutine ends when the proxy is closed.
	go func() {
		for {
			select {
			case <-s.Error():
			case <-s.Done():
				return
			}
		}
	}()
	return &Proxy{Server: s, URL: "http://" + from.Host}, nil
}
