package traffic

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/watch"
)

// Change is one change of etcd's history under a prefix: what the
// checkers compare the clients' records with (through ForCheckers).
type Change struct {
	Name     string // the key without the prefix
	Type     watch.EventType
	Revision int64
	// PrevRevision is the mod revision of the version a delete removed.
	PrevRevision int64
	// OpID is the stored object's OpIDAnnotation (of a put); PrevOpID
	// the deleted version's (of a delete).
	OpID, PrevOpID string
}

// progressEvery is how often ReadHistory asks etcd whether its watch has
// caught up with the revision it wants.
const progressEvery = 200 * time.Millisecond

// ReadHistory reads every change under prefix from revision 1 to the
// cluster's current revision, straight from etcd (a watch with previous
// values; the replicas run with compaction off, so nothing is gone).
func ReadHistory(ctx context.Context, c *clientv3.Client, prefix string) ([]Change, error) {
	now, err := c.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return nil, err
	}
	target := now.Header.Revision
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	wch := c.Watch(wctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(1), clientv3.WithPrevKV())
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	var out []Change
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
			// A synced watch answers with a progress notification at the
			// current revision: the end of the history we want.
			c.RequestProgress(wctx)
			continue
		case resp, ok := <-wch:
			if !ok {
				return nil, fmt.Errorf("traffic: history watch closed")
			}
			if err := resp.Err(); err != nil {
				return nil, err
			}
			for _, ev := range resp.Events {
				out = append(out, toChange(prefix, ev))
			}
			if resp.IsProgressNotify() && resp.Header.Revision >= target {
				return out, nil
			}
		}
	}
}

func toChange(prefix string, ev *clientv3.Event) Change {
	ch := Change{Name: strings.TrimPrefix(string(ev.Kv.Key), prefix), Revision: ev.Kv.ModRevision}
	switch {
	case ev.Type == mvccpb.DELETE:
		ch.Type = watch.Deleted
		if ev.PrevKv != nil {
			ch.PrevRevision = ev.PrevKv.ModRevision
		}
	case ev.Kv.CreateRevision == ev.Kv.ModRevision:
		ch.Type = watch.Added
	default:
		ch.Type = watch.Modified
	}
	if ev.Type == mvccpb.PUT {
		ch.OpID = opID(ev.Kv.Value)
	} else if ev.PrevKv != nil {
		ch.PrevOpID = opID(ev.PrevKv.Value)
	}
	return ch
}

// opID is the OpIDAnnotation of a stored object.
func opID(value []byte) string {
	var obj struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if json.Unmarshal(value, &obj) != nil {
		return ""
	}
	return obj.Metadata.Annotations[OpIDAnnotation]
}
