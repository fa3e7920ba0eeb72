package storage_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// txnContract is every transaction shape the store may send (the package
// doc's contract): kube-apiserver's, which kine and other etcd-API
// backends implement exactly, and nothing else.
var txnContract = map[string]string{
	"If(MOD(key)=0) Then(put)":                     "create",
	"If(MOD(key)=rev) Then(put) Else(get)":         "update",
	"If(MOD(key)=rev) Then(delete) Else(get)":      "delete",
	"If(VERSION(key)=version) Then(put) Else(get)": "compaction",
}

// txnLog counts the shapes of the transactions recordingKVs send.
type txnLog struct {
	mu     sync.Mutex // guards shapes
	shapes map[string]int
}

func (l *txnLog) record(shape string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.shapes[shape]++
}

// recordingKV is a clientv3.KV that logs the shape of every transaction
// sent through it.
type recordingKV struct {
	clientv3.KV
	log *txnLog
}

func (r *recordingKV) Txn(ctx context.Context) clientv3.Txn {
	return &recordedTxn{Txn: r.KV.Txn(ctx), log: r.log}
}

// Get logs a serializable read, which kube-apiserver never sends and kine
// does not serve (a shape outside the contract).
func (r *recordingKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if clientv3.OpGet(key, opts...).IsSerializable() {
		r.log.record("Get(serializable)")
	}
	return r.KV.Get(ctx, key, opts...)
}

type recordedTxn struct {
	clientv3.Txn
	log          *txnLog
	cmps         []clientv3.Cmp
	thens, elses []clientv3.Op
}

func (t *recordedTxn) If(cs ...clientv3.Cmp) clientv3.Txn {
	t.cmps = append(t.cmps, cs...)
	t.Txn = t.Txn.If(cs...)
	return t
}

func (t *recordedTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	t.thens = append(t.thens, ops...)
	t.Txn = t.Txn.Then(ops...)
	return t
}

func (t *recordedTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.elses = append(t.elses, ops...)
	t.Txn = t.Txn.Else(ops...)
	return t
}

func (t *recordedTxn) Commit() (*clientv3.TxnResponse, error) {
	t.log.record(txnShape(t.cmps, t.thens, t.elses))
	return t.Txn.Commit()
}

// txnShape names a transaction by what it compares and does, not by its
// keys and values: "If(MOD(key)=rev) Then(put) Else(get)".
func txnShape(cmps []clientv3.Cmp, thens, elses []clientv3.Op) string {
	var b strings.Builder
	b.WriteString("If(")
	for i := range cmps {
		c := cmps[i].GetCompare()
		if i > 0 {
			b.WriteString(", ")
		}
		target := c.Target.String()
		value := "rev"
		switch u := c.TargetUnion.(type) {
		case *pb.Compare_ModRevision:
			if u.ModRevision == 0 {
				value = "0"
			}
		case *pb.Compare_CreateRevision:
			if u.CreateRevision == 0 {
				value = "0"
			}
		case *pb.Compare_Version:
			value = "version"
		case *pb.Compare_Value:
			value = "value"
		}
		if len(c.RangeEnd) > 0 {
			target += "(range)"
		} else {
			target += "(key)"
		}
		fmt.Fprintf(&b, "%s%s%s", target, map[pb.Compare_CompareResult]string{
			pb.Compare_EQUAL: "=", pb.Compare_GREATER: ">", pb.Compare_LESS: "<", pb.Compare_NOT_EQUAL: "!="}[c.Result], value)
	}
	b.WriteString(")")
	for _, part := range []struct {
		name string
		ops  []clientv3.Op
	}{{"Then", thens}, {"Else", elses}} {
		if len(part.ops) == 0 {
			continue
		}
		names := make([]string, len(part.ops))
		for i, op := range part.ops {
			switch {
			case op.IsPut():
				names[i] = "put"
			case op.IsDelete():
				names[i] = "delete"
			case op.IsGet():
				names[i] = "get"
			default:
				names[i] = "txn"
			}
		}
		fmt.Fprintf(&b, " %s(%s)", part.name, strings.Join(names, ", "))
	}
	return b.String()
}

// TestTxnContract runs the storage conformance suite and the compactor
// through a KV that records every transaction (and serializable read),
// and fails on any shape not in txnContract: a new shape is a change of the contract with etcd-API
// backends (kine implements only kube-apiserver's), to be made on purpose.
func TestTxnContract(t *testing.T) {
	rec := &txnLog{shapes: map[string]int{}}
	storagetest.Run(t, storagetest.Config{
		NewStore: func(t *testing.T, c *clientv3.Client) storage.Interface[*storagetest.Widget] {
			c.KV = &recordingKV{KV: c.KV, log: rec}
			return newWidgetStore(t, c)
		},
	})

	root := etcdtest.Start(t)
	c := storagetest.NewClient(t, root, "/compact")
	c.KV = &recordingKV{KV: c.KV, log: rec}
	ticks := make(chan time.Time)
	cp := storage.NewCompactor(c, time.Hour, nil, storage.WithCompactTicks(ticks))
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { cp.Run(ctx); close(done) }()
	for range 3 {
		ticks <- time.Time{} // each send waits for the previous step
	}
	stop()
	<-done

	rec.mu.Lock()
	defer rec.mu.Unlock()
	var shapes []string
	for s := range rec.shapes {
		shapes = append(shapes, s)
	}
	sort.Strings(shapes)
	for _, s := range shapes {
		if _, ok := txnContract[s]; !ok {
			t.Errorf("a transaction outside the contract (package doc), sent %d times: %s", rec.shapes[s], s)
		}
	}
	for want, what := range txnContract {
		if !slices.Contains(shapes, want) {
			t.Errorf("the %s transaction was never sent: %s (sent: %q)", what, want, shapes)
		}
	}
}
