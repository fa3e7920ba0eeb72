package apiserver

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// etcdBackend is a connected etcd client and, when embedded, the etcd
// server it talks to. close stops the client first and the server last.
type etcdBackend struct {
	client   *clientv3.Client
	embedded *embed.Etcd
}

func (b *etcdBackend) close() {
	if b.client != nil {
		_ = b.client.Close()
	}
	if b.embedded != nil {
		b.embedded.Close()
	}
}

// connectEtcd starts the embedded etcd or dials the external cluster, and
// returns once etcd answers.
func connectEtcd(ctx context.Context, o *Options) (*etcdBackend, error) {
	b := &etcdBackend{}
	endpoints := o.EtcdServers
	var tlsCfg *tls.Config
	if len(endpoints) == 0 {
		e, err := startEmbeddedEtcd(ctx, o.path("etcd"))
		if err != nil {
			return nil, err
		}
		b.embedded = e
		endpoints = []string{e.Clients[0].Addr().String()}
	} else if o.EtcdCAFile != "" || o.EtcdCertFile != "" {
		info := transport.TLSInfo{TrustedCAFile: o.EtcdCAFile, CertFile: o.EtcdCertFile, KeyFile: o.EtcdKeyFile}
		var err error
		if tlsCfg, err = info.ClientConfig(); err != nil {
			return nil, fmt.Errorf("etcd client TLS: %w", err)
		}
	}
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		TLS:         tlsCfg,
		DialTimeout: 20 * time.Second,
		Logger:      zap.NewNop(),
		Context:     context.WithoutCancel(ctx),
		// Objects up to the 3 MiB request limit plus envelope must fit.
		MaxCallSendMsgSize: 8 << 20,
		MaxCallRecvMsgSize: 0, // unlimited: large lists
	})
	if err != nil {
		b.close()
		return nil, fmt.Errorf("connect etcd %v: %w", endpoints, err)
	}
	b.client = c
	// Fail fast on an unreachable cluster instead of at the first request.
	pingCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := c.Get(pingCtx, "health-check-key", clientv3.WithCountOnly()); err != nil {
		b.close()
		return nil, fmt.Errorf("etcd %v not reachable: %w", endpoints, err)
	}
	return b, nil
}

// startEmbeddedEtcd runs a single-member etcd in dir on loopback ports the
// kernel picks, so several servers (and tests) can run side by side.
func startEmbeddedEtcd(ctx context.Context, dir string) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(embeddedEtcdLogger())
	client := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	peer := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	// Progress notifications let the watch cache advance through idle periods.
	cfg.WatchProgressNotifyInterval = 5 * time.Second
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("start embedded etcd in %s: %w", dir, err)
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd: %w", err)
	case <-ctx.Done():
		e.Close()
		return nil, ctx.Err()
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, fmt.Errorf("embedded etcd in %s not ready after 60s", dir)
	}
}
