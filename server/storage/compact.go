package storage

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

const (
	// DefaultCompactInterval is how much history etcd keeps: watches and
	// continue tokens older than about this fail with ErrExpired and the
	// client relists. It is kube-apiserver's default.
	DefaultCompactInterval = 5 * time.Minute
	// DefaultCompactKey is the key replicas coordinate through. It is
	// kube-apiserver's, so apiloom and kube-apiserver sharing an etcd also
	// share one compaction schedule.
	DefaultCompactKey = "compact_rev_key"
)

// Compactor removes etcd history older than one interval, once per
// interval across every apiloom replica sharing the etcd.
//
// The replicas agree through the compact key, whose etcd version serves as
// a logical clock. At each tick a replica writes the key only if its
// version is still the one the replica saw at its previous tick; the one
// replica that succeeds compacts up to the revision it saw then, one
// interval ago. The others learn the new version and try again next tick.
// So history is compacted once per interval, and if the replica doing it
// stops, another takes over within two intervals. Clock skew does not
// matter: etcd's transaction decides.
type Compactor struct {
	// Immutable after NewCompactor.
	kv       clientv3.KV
	interval time.Duration
	key      string
	log      *slog.Logger
	after    func(time.Duration) <-chan time.Time

	// Owned by the goroutine calling Run (or step, in tests).
	version int64 // the compact key's version at our last step
	rev     int64 // etcd's revision at our last step: what we compact next

	compacted atomic.Int64 // highest revision known to be compacted
}

// CompactorOption configures a Compactor.
type CompactorOption func(*Compactor)

// WithCompactKey sets the coordination key (default DefaultCompactKey).
func WithCompactKey(key string) CompactorOption {
	return func(c *Compactor) {
		if key != "" {
			c.key = key
		}
	}
}

// NewCompactor returns a compactor for client's etcd that compacts every
// interval (DefaultCompactInterval if interval <= 0) and reports failed
// compactions to log (slog.Default() if nil). It does nothing until Run.
func NewCompactor(client *clientv3.Client, interval time.Duration, log *slog.Logger, opts ...CompactorOption) *Compactor {
	if interval <= 0 {
		interval = DefaultCompactInterval
	}
	if log == nil {
		log = slog.Default()
	}
	c := &Compactor{
		kv:       client.KV,
		interval: interval,
		key:      DefaultCompactKey,
		log:      log,
		after:    time.After,
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Run compacts every interval until ctx ends. The first compaction happens
// two intervals after Run starts: the first tick only records the revision
// to compact. A failed step is logged and retried at the next tick.
//
// While etcd has no space for writes (ErrInsufficientStorage: the disk
// under the embedded etcd is nearly full, or etcd's quota is reached),
// compaction pauses: compacting writes to etcd's database too, so each
// tick's first write is refused before anything is written, and the
// compactor logs the pause once and resumes at the first tick after space
// returns.
func (c *Compactor) Run(ctx context.Context) {
	paused := false
	for {
		select {
		case <-c.after(c.interval):
		case <-ctx.Done():
			return
		}
		_, err := c.step(ctx)
		switch {
		case ctx.Err() != nil:
		case errors.Is(err, ErrInsufficientStorage):
			if !paused {
				c.log.Warn("etcd compaction paused: etcd has no space for writes", "key", c.key, "error", err)
			}
			paused = true
		case err != nil:
			c.log.Error("etcd compaction failed", "key", c.key, "error", err)
		case paused:
			c.log.Info("etcd compaction resumed", "key", c.key)
			paused = false
		}
	}
}

// CompactedRevision is the highest revision this compactor compacted or
// saw another replica record as compacted; 0 before either.
func (c *Compactor) CompactedRevision() int64 { return c.compacted.Load() }

// step is one tick: take the compact key's next version, or learn that
// another replica took it. It returns the revision it compacted, or 0.
func (c *Compactor) step(ctx context.Context) (int64, error) {
	resp, err := c.kv.Txn(ctx).
		If(clientv3.Compare(clientv3.Version(c.key), "=", c.version)).
		Then(clientv3.OpPut(c.key, strconv.FormatInt(c.rev, 10))).
		Else(clientv3.OpGet(c.key)).
		Commit()
	if err != nil {
		return 0, etcdError("compaction txn", c.key, err)
	}
	seen := resp.Header.Revision
	if !resp.Succeeded {
		// Another replica moved the clock; follow it.
		c.version, c.rev = 0, seen
		kvs, err := elseKVs("compaction txn", c.key, resp)
		if err != nil {
			return 0, err
		}
		if len(kvs) > 0 {
			c.version = kvs[0].Version
			if r, err := strconv.ParseInt(string(kvs[0].Value), 10, 64); err == nil {
				c.noteCompacted(r)
			}
		}
		return 0, nil
	}
	c.version++
	target := c.rev
	c.rev = seen
	if target == 0 {
		return 0, nil // nothing seen an interval ago yet
	}
	if _, err := c.kv.Compact(ctx, target); err != nil && !isCompacted(err) {
		return 0, etcdError("compact", "", err)
	}
	c.noteCompacted(target)
	return target, nil
}

func (c *Compactor) noteCompacted(rev int64) {
	for {
		old := c.compacted.Load()
		if rev <= old || c.compacted.CompareAndSwap(old, rev) {
			return
		}
	}
}
