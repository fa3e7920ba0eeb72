// Package etcdtest starts a real etcd inside a test process: embedded, on
// free loopback ports, in t.TempDir(), without fsync. Every storage and
// server test runs against it instead of a fake.
package etcdtest

import (
	"errors"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Option changes the embedded etcd's configuration before it starts, e.g.
// to give it a small space quota.
type Option func(*embed.Config)

// Start starts an embedded etcd for t and returns a client to it. Both are
// closed when t ends.
func Start(t testing.TB, opts ...Option) *clientv3.Client {
	t.Helper()
	e := StartServer(t, opts...)
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{e.Clients[0].Addr().String()},
		DialTimeout: 10 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// StartServer starts an embedded etcd for t and returns it; it is closed
// when t ends.
func StartServer(t testing.TB, opts ...Option) *embed.Etcd {
	t.Helper()
	// A free port is found by listening and closing, so another process
	// may take it before etcd binds it: then try again on other ports.
	var e *embed.Etcd
	var err error
	for attempt := 0; ; attempt++ {
		cfg := embed.NewConfig()
		cfg.Dir = t.TempDir()
		cfg.UnsafeNoFsync = true
		// Tests read failures from clients; etcd's own logs are only noise here.
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		client, peer := freeURL(t), freeURL(t)
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
		cfg.InitialCluster = cfg.Name + "=" + peer.String()
		for _, o := range opts {
			o(cfg)
		}
		e, err = embed.StartEtcd(cfg)
		if err == nil {
			break
		}
		// etcd may wrap the listener's error as text only.
		inUse := errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), "address already in use")
		if !inUse || attempt == 4 {
			t.Fatalf("start etcd: %v", err)
		}
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		t.Fatal("embedded etcd did not become ready within 60s")
	}
	return e
}

func freeURL(t testing.TB) url.URL {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return url.URL{Scheme: "http", Host: addr}
}
