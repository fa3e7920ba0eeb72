package etcdclient

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"testing"
	"time"

	"go.etcd.io/etcd/pkg/v3/proxy"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"google.golang.org/grpc/connectivity"

	"github.com/apiloom/apiloom/server/storage"
)

// TestEtcdClientLeavesHalfOpenConnection: when the connection to an
// external etcd stops carrying bytes without being closed (a dead host, a
// partition: here etcd's proxy blackholes it), the client must find out by
// keepalive and drop the connection, rather than leave every request and
// watch routed to it hanging forever. Without keepalive the connection
// stays READY forever.
func TestEtcdClientLeavesHalfOpenConnection(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	etcdURL := startTCPEtcd(t)
	p := proxy.NewServer(proxy.ServerConfig{Logger: zap.NewNop(), From: url.URL{Scheme: "tcp", Host: freeAddr(t)}, To: etcdURL})
	defer p.Close()
	select {
	case <-p.Ready():
	case err := <-p.Error():
		t.Fatal(err)
	}
	go func() { // the proxy blocks a connection until its error is read
		for {
			select {
			case <-p.Error():
			case <-p.Done():
				return
			}
		}
	}()

	cfg := Config{
		Servers:         []string{"http://" + p.From()[len("tcp://"):]},
		Dir:             t.TempDir(),
		MaxRequestBytes: storage.DefaultMaxRequestBytes,
	}
	cfg.KeepaliveTime, cfg.KeepaliveTimeout = 10*time.Second, time.Second // gRPC's floor, to keep the test short
	var logs bytes.Buffer
	b, err := Connect(ctx, cfg, testLogger(&logs), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// Keepalive pings only while a stream is open; the server always has
	// its watches.
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	b.Client.Watch(wctx, "/keepalive-test")
	conn := b.Client.ActiveConnection()
	if !conn.WaitForStateChange(ctx, connectivity.Idle) && conn.GetState() != connectivity.Ready {
		t.Fatalf("connection %v, want READY", conn.GetState())
	}

	p.BlackholeTx()
	p.BlackholeRx()
	blackholed := time.Now()
	deadline, cancelDeadline := context.WithTimeout(ctx, cfg.KeepaliveTime+cfg.KeepaliveTimeout+15*time.Second)
	defer cancelDeadline()
	for s := conn.GetState(); s == connectivity.Ready; s = conn.GetState() {
		if !conn.WaitForStateChange(deadline, s) {
			t.Fatalf("the client still uses the half-open connection %v after it was blackholed", time.Since(blackholed).Round(time.Second))
		}
	}
	t.Logf("connection left READY %v after the blackhole", time.Since(blackholed).Round(time.Second))
}

// startTCPEtcd starts a single-member etcd serving clients on a loopback
// TCP port, stopped when t ends.
func startTCPEtcd(t *testing.T) url.URL {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = t.TempDir()
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	c := url.URL{Scheme: "http", Host: freeAddr(t)}
	p := url.URL{Scheme: "http", Host: freeAddr(t)}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{c}, []url.URL{c}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{p}, []url.URL{p}
	cfg.InitialCluster = cfg.Name + "=" + p.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		t.Fatal(err)
	case <-time.After(time.Minute):
		t.Fatal("etcd not ready after a minute")
	}
	return c
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr())
}
