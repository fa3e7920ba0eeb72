package etcdclient

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3rpc"
	"go.etcd.io/etcd/server/v3/proxy/grpcproxy/adapter"
	etcdstorage "go.etcd.io/etcd/server/v3/storage"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
)

// Config says which etcd to connect to and how; the server's --etcd-*
// flags and --data-dir fill it.
type Config struct {
	// Servers lists external etcd client URLs; empty starts an embedded
	// etcd in Dir.
	Servers []string
	// CAFile, CertFile and KeyFile are the external etcd's client TLS.
	CAFile, CertFile, KeyFile string
	// Dir is the embedded etcd's data directory.
	Dir string
	// QuotaBackendBytes is the embedded etcd's space quota; 0 means
	// DefaultEmbeddedQuotaBytes.
	QuotaBackendBytes int64
	// DefragReclaimableBytes and DefragReclaimablePercent: after a
	// compaction the embedded etcd is defragmented when its file holds at
	// least this many bytes of free pages, making at least this share of
	// it (defragRule). Percent 0: never (the NOSPACE recovery still
	// defragments).
	DefragReclaimableBytes   int64
	DefragReclaimablePercent int
	// MinFreeDiskBytes is the free space the disk guard keeps under the
	// embedded etcd; 0 disables the guard.
	MinFreeDiskBytes int64
	// MaxRequestBytes is the largest request etcd accepts.
	MaxRequestBytes int
	// KeepaliveTime and KeepaliveTimeout are the client's gRPC keepalive.
	KeepaliveTime, KeepaliveTimeout time.Duration
	// TracerProvider traces the client's calls (tracing.go); nil: not.
	TracerProvider trace.TracerProvider
}

// Conn is a connected etcd client and, when embedded, the etcd server it
// talks to. Close stops the client first and the server last.
type Conn struct {
	// Client is what the stores, the watch caches and the compactor use;
	// set by Connect, closed by Close. Its KV is a spaceKV: writes meet
	// the disk guard, and etcd's NOSPACE is explained.
	Client   *clientv3.Client
	embedded *embed.Etcd
	// Embedded only.
	socket   *etcdSocket
	recovery *quotaRecovery // compacts, defragments and disarms NOSPACE
}

// Close stops the client, then the embedded etcd, and removes the
// socket's temporary directory, if any.
func (b *Conn) Close() {
	if b.Client != nil {
		_ = b.Client.Close()
	}
	if b.embedded != nil {
		b.embedded.Close()
	}
	if b.socket != nil {
		b.socket.remove()
	}
}

// Embedded reports whether the etcd is the embedded one.
func (b *Conn) Embedded() bool { return b.embedded != nil }

// Endpoint is the embedded etcd's client URL (unix:///path, reachable
// only by this user), or "" with an external etcd.
func (b *Conn) Endpoint() string {
	if b.socket == nil {
		return ""
	}
	u := b.socket.url()
	return u.String()
}

// RunQuotaRecovery recovers the embedded etcd from NOSPACE alarms, and
// defragments it after compactions that left its file mostly free pages,
// until ctx ends; with an external etcd, left to its operator, it returns
// at once.
func (b *Conn) RunQuotaRecovery(ctx context.Context) {
	if b.recovery != nil {
		b.recovery.Run(ctx)
	}
}

// Connect starts the embedded etcd or dials the external cluster, and
// returns once etcd answers. metrics may be nil.
func Connect(ctx context.Context, cfg Config, log *slog.Logger, metrics prometheus.Registerer) (*Conn, error) {
	b := &Conn{}
	endpoints := cfg.Servers
	var tlsCfg *tls.Config
	var guard *diskGuard
	quota := cfg.QuotaBackendBytes
	if quota == 0 {
		quota = etcdstorage.DefaultQuotaBytes // an external etcd's, for its message
	}
	if len(endpoints) == 0 {
		if cfg.QuotaBackendBytes == 0 {
			quota = DefaultEmbeddedQuotaBytes
		}
		dir := cfg.Dir
		socket, err := newEtcdSocket(dir, log)
		if err != nil {
			return nil, err
		}
		b.socket = socket
		if cfg.MinFreeDiskBytes > 0 {
			guard = newDiskGuard(dir, uint64(cfg.MinFreeDiskBytes), freeBytes, log)
			if err := checkStartSpace(guard); err != nil {
				b.Close()
				return nil, err
			}
		}
		e, err := startEmbeddedEtcd(ctx, dir, socket, quota, cfg.MaxRequestBytes)
		if err != nil {
			b.Close()
			return nil, err
		}
		b.embedded = e
		endpoint := socket.url()
		endpoints = []string{endpoint.String()}
		log.Info("embedded etcd serves only this user, on a unix socket; no TCP port, no peer port",
			"endpoint", endpoints[0], "etcdctl", "etcdctl --endpoints="+endpoints[0]+" endpoint status -w table")
	} else if cfg.CAFile != "" || cfg.CertFile != "" {
		info := transport.TLSInfo{TrustedCAFile: cfg.CAFile, CertFile: cfg.CertFile, KeyFile: cfg.KeyFile}
		var err error
		if tlsCfg, err = info.ClientConfig(); err != nil {
			return nil, fmt.Errorf("etcd client TLS: %w", err)
		}
	}
	c, err := dialEtcd(ctx, &cfg, endpoints, tlsCfg)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("connect etcd %v: %w", endpoints, err)
	}
	if b.embedded != nil {
		// In the same process, reads and writes call etcd's server
		// functions directly: no gRPC, no socket, no protobuf copy of each
		// request and response (12% of the server's CPU on creates, by
		// profile). Watches, leases and maintenance keep the gRPC client:
		// their cost per request is small, and a watch's flow control,
		// progress notifications and cancellation stay etcd's tested ones.
		c.KV = clientv3.NewKVFromKVClient(traceKV(adapter.KvServerToKvClient(v3rpc.NewQuotaKVServer(b.embedded.Server)), cfg.TracerProvider), c)
	}
	b.Client = c
	var onNoSpace func()
	kv := c.KV
	if b.embedded != nil {
		b.recovery = newQuotaRecovery(c.KV, c.Maintenance, endpoints[0], quota, guard, log, metrics)
		onNoSpace = b.recovery.notify
		rule := defragRule{minBytes: cfg.DefragReclaimableBytes, percent: int64(cfg.DefragReclaimablePercent)}
		if rule.percent > 0 {
			b.recovery.defrag = newCompactionDefrag(c.Maintenance, endpoints[0], guard, rule, log, metrics)
			kv = compactionKV{KV: kv, onCompacted: b.recovery.defrag.notify}
		}
	}
	c.KV = newSpaceKV(leaderKV{kv}, guard, quotaMessage(b.embedded != nil, quota), onNoSpace, metrics)

	// Fail fast on an unreachable cluster instead of at the first request.
	pingCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := c.Get(pingCtx, "health-check-key", clientv3.WithCountOnly()); err != nil {
		b.Close()
		return nil, fmt.Errorf("etcd %v not reachable: %w", endpoints, err)
	}
	return b, nil
}

// dialEtcd connects a gRPC client to an external etcd cluster.
func dialEtcd(ctx context.Context, cfg *Config, endpoints []string, tlsCfg *tls.Config) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		TLS:         tlsCfg,
		DialTimeout: 20 * time.Second,
		// Without keepalive a connection that stops carrying bytes but is
		// never closed hangs every request and watch routed to it forever.
		DialKeepAliveTime:    cfg.KeepaliveTime,
		DialKeepAliveTimeout: cfg.KeepaliveTimeout,
		Logger:               zap.NewNop(),
		Context:              context.WithoutCancel(ctx),
		// Requests up to etcd's limit must leave; etcd itself refuses
		// larger ones, with an error storage maps to 413.
		MaxCallSendMsgSize: max(8<<20, cfg.MaxRequestBytes+1<<20),
		MaxCallRecvMsgSize: 0, // unlimited: large lists
		DialOptions:        tracedDialOptions(cfg.TracerProvider),
	})
}

// checkStartSpace decides how the server starts on the embedded etcd's
// disk. Below the guard's threshold it starts read-only, exactly as if the
// disk had filled while it ran: reads are served, writes get 507, and
// writes resume by themselves once space is freed, with no restart. Below
// etcdStartFloorBytes it refuses to start: etcd's own start preallocates
// WAL segments, and a failed preallocation does not fail the start but
// crashes etcd at a later segment cut, even after space has returned.
func checkStartSpace(g *diskGuard) error {
	free, err := g.freeNow()
	if err != nil {
		return nil // logged by the guard; etcd's start will tell
	}
	if free < uint64(etcdStartFloorBytes) {
		return fmt.Errorf("the disk holding the embedded etcd's data (%s) has %s free; etcd needs at least %s to start safely "+
			"(it preallocates %s WAL segments): free space on it (the server then serves read-only until %s are free)",
			g.dir, formatBytes(free), formatBytes(uint64(etcdStartFloorBytes)), formatBytes(uint64(MinMinFreeDiskBytes)), formatBytes(g.resumeFree))
	}
	return nil // below the threshold the guard refuses writes and has logged why
}

// embeddedSnapshotCatchUpEntries overrides etcd's SnapshotCatchUpEntries
// when positive; BenchmarkEmbeddedEtcdChurn sets it to measure what the
// raft log etcd keeps in memory costs.
var embeddedSnapshotCatchUpEntries uint64

// startEmbeddedEtcd runs a single-member etcd in dir, serving clients on
// socket only. quota is etcd's space quota,
// maxRequest the largest request it accepts.
func startEmbeddedEtcd(ctx context.Context, dir string, socket *etcdSocket, quota int64, maxRequest int) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(embeddedEtcdLogger())
	client := socket.url()
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	// No peer listener: a single member has no peer to hear from. etcd
	// still names the member by an advertised peer URL (it is part of the
	// member's ID); nothing listens there, and port 0 cannot be dialled.
	// Data directories made by earlier versions advertise this very URL,
	// so they keep starting.
	peer, err := url.Parse(EmbeddedPeerURL)
	if err != nil {
		return nil, err
	}
	cfg.Name, cfg.InitialClusterToken = EmbeddedMemberName, EmbeddedClusterToken
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = nil, []url.URL{*peer}
	cfg.InitialCluster = EmbeddedInitialCluster()
	cfg.QuotaBackendBytes = quota
	if maxRequest > 0 {
		cfg.MaxRequestBytes = uint(maxRequest)
	}
	if embeddedSnapshotCatchUpEntries > 0 {
		cfg.SnapshotCatchUpEntries = embeddedSnapshotCatchUpEntries
	}
	// Progress notifications let the watch cache advance through idle periods.
	cfg.WatchProgressNotifyInterval = 5 * time.Second
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("start embedded etcd in %s: %w", dir, err)
	}
	if err := socket.restrict(); err != nil {
		e.Close()
		return nil, fmt.Errorf("embedded etcd socket: %w", err)
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
