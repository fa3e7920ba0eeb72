package traffic

import (
	"context"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// LiveHistory records etcd's changes under a prefix as they happen, from a
// watch opened before them: the history of a scenario that compacts etcd,
// which ReadHistory (a watch from revision 1, afterwards) cannot read.
type LiveHistory struct {
	c      *clientv3.Client
	wctx   context.Context // the watch's: a progress request names its stream
	cancel context.CancelFunc
	done   chan struct{} // closed when the recording goroutine ends

	// mu guards changes, synced and err: written by the recording
	// goroutine, read by Read.
	mu      sync.Mutex
	changes []Change
	synced  int64 // every change up to this revision is in changes
	err     error // why the recording stopped
}

// WatchHistory starts recording the changes under prefix after etcd's
// current revision, until Close.
func WatchHistory(ctx context.Context, c *clientv3.Client, prefix string) (*LiveHistory, error) {
	now, err := c.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(context.WithoutCancel(ctx)))
	h := &LiveHistory{c: c, wctx: wctx, cancel: cancel, done: make(chan struct{}), synced: now.Header.Revision}
	wch := c.Watch(wctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(now.Header.Revision+1), clientv3.WithPrevKV())
	go func() {
		defer close(h.done)
		for resp := range wch {
			h.mu.Lock()
			if err := resp.Err(); err != nil {
				// A compaction past the watch's revision (it fell behind
				// while reconnecting): the record has a hole.
				h.err = fmt.Errorf("traffic: history watch: %w", err)
				h.mu.Unlock()
				cancel()
				return
			}
			for _, ev := range resp.Events {
				h.changes = append(h.changes, toChange(prefix, ev))
			}
			h.synced = max(h.synced, resp.Header.Revision)
			h.mu.Unlock()
		}
	}()
	return h, nil
}

// Read returns every change recorded up to etcd's current revision,
// waiting for the watch to confirm it has caught up with it.
func (h *LiveHistory) Read(ctx context.Context) ([]Change, error) {
	now, err := h.c.Get(ctx, "health", clientv3.WithCountOnly())
	if err != nil {
		return nil, err
	}
	target := now.Header.Revision
	for {
		h.mu.Lock()
		synced, err := h.synced, h.err
		h.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if synced >= target {
			h.mu.Lock()
			defer h.mu.Unlock()
			var out []Change
			for _, c := range h.changes {
				if c.Revision <= target {
					out = append(out, c)
				}
			}
			return out, nil
		}
		// A synced watch answers with a progress notification at the
		// current revision.
		h.c.RequestProgress(h.wctx)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-h.done:
		case <-afterProgress():
		}
	}
}

// Close stops the recording and waits for it.
func (h *LiveHistory) Close() {
	h.cancel()
	<-h.done
}

// afterProgress paces Read's requests for progress notifications.
func afterProgress() <-chan time.Time { return time.After(progressEvery) }
