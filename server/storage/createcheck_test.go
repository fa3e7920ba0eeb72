package storage_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// createLie is how a backend misanswers the next create transaction.
type createLie int

const (
	truthful createLie = iota
	// ackUncommitted: success at the current revision, nothing written
	// (kine when its insert failed and the key is absent).
	ackUncommitted
	// existsAfterCommit: written, then reported as "the key exists"
	// (kine when its commit's answer was lost).
	existsAfterCommit
)

// lyingKV misanswers create transactions as kine's logstructured.Create
// does while its database fails.
type lyingKV struct {
	clientv3.KV

	mu  sync.Mutex // guards lie
	lie createLie
}

func (k *lyingKV) set(l createLie) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.lie = l
}

func (k *lyingKV) Txn(ctx context.Context) clientv3.Txn {
	k.mu.Lock()
	defer k.mu.Unlock()
	return &lyingTxn{Txn: k.KV.Txn(ctx), ctx: ctx, kv: k.KV, lie: k.lie}
}

type lyingTxn struct {
	clientv3.Txn
	ctx context.Context
	kv  clientv3.KV
	lie createLie
}

func (t *lyingTxn) If(cs ...clientv3.Cmp) clientv3.Txn   { t.Txn = t.Txn.If(cs...); return t }
func (t *lyingTxn) Then(ops ...clientv3.Op) clientv3.Txn { t.Txn = t.Txn.Then(ops...); return t }
func (t *lyingTxn) Else(ops ...clientv3.Op) clientv3.Txn { t.Txn = t.Txn.Else(ops...); return t }

func (t *lyingTxn) Commit() (*clientv3.TxnResponse, error) {
	switch t.lie {
	case ackUncommitted:
		cur, err := t.kv.Get(t.ctx, "\x00", clientv3.WithCountOnly())
		if err != nil {
			return nil, err
		}
		h := &etcdserverpb.ResponseHeader{Revision: cur.Header.Revision}
		return &clientv3.TxnResponse{Header: h, Succeeded: true, Responses: []*etcdserverpb.ResponseOp{
			{Response: &etcdserverpb.ResponseOp_ResponsePut{ResponsePut: &etcdserverpb.PutResponse{Header: h}}}}}, nil
	case existsAfterCommit:
		resp, err := t.Txn.Commit()
		if err != nil || !resp.Succeeded {
			return resp, err
		}
		return &clientv3.TxnResponse{Header: resp.Header, Succeeded: false}, nil
	}
	return t.Txn.Commit()
}

// TestVerifiedCreates: with WithVerifiedCreates, a create the backend
// acknowledged without storing it fails with ErrBadResponse, and a create
// the backend stored but reported as existing succeeds at the revision it
// was stored at; a real conflict is still ErrExists. Without the option
// both lies pass through, which is what the option is for.
func TestVerifiedCreates(t *testing.T) {
	root := etcdtest.Start(t)
	for _, verified := range []bool{true, false} {
		name := map[bool]string{true: "verified", false: "trusted"}[verified]
		t.Run(name, func(t *testing.T) {
			c := storagetest.NewClient(t, root, "/verified-creates-"+name)
			kv := &lyingKV{KV: c.KV}
			c.KV = kv
			s := newWidgetStore(t, c, storage.WithVerifiedCreates(verified))
			ctx := t.Context()

			kv.set(ackUncommitted)
			_, err := s.Create(ctx, "ns/lost", storagetest.NewWidget("ns", "lost", "blue"))
			_, gerr := s.Get(ctx, "ns/lost", storage.GetOptions{})
			if !errors.Is(gerr, storage.ErrNotFound) {
				t.Fatalf("the lying backend stored the create: get = %v", gerr)
			}
			if verified && !errors.Is(err, storage.ErrBadResponse) {
				t.Errorf("create acknowledged but not stored: got %v, want ErrBadResponse", err)
			}
			if !verified && err != nil {
				t.Errorf("trusted create: %v (the lie should pass through)", err)
			}

			kv.set(existsAfterCommit)
			own := storagetest.NewWidget("ns", "own", "blue")
			own.UID = "uid-of-own" // what the handlers give every new object
			got, err := s.Create(ctx, "ns/own", own)
			stored, gerr := s.Get(ctx, "ns/own", storage.GetOptions{})
			if gerr != nil {
				t.Fatalf("get of the stored create: %v", gerr)
			}
			if verified {
				if err != nil {
					t.Errorf("own create reported as existing: got %v, want success", err)
				} else if got.ResourceVersion != stored.ResourceVersion {
					t.Errorf("own create answered at resourceVersion %s, stored at %s", got.ResourceVersion, stored.ResourceVersion)
				}
			} else if !errors.Is(err, storage.ErrExists) {
				t.Errorf("trusted create: %v, want the backend's ErrExists", err)
			}

			// A real conflict, even with the same bytes but no uid, and
			// an honest create are unchanged.
			kv.set(truthful)
			if _, err := s.Create(ctx, "ns/own", storagetest.NewWidget("ns", "own", "red")); !errors.Is(err, storage.ErrExists) {
				t.Errorf("create of an existing key: %v, want ErrExists", err)
			}
			if _, err := s.Create(ctx, "ns/new", storagetest.NewWidget("ns", "new", "blue")); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Create(ctx, "ns/new", storagetest.NewWidget("ns", "new", "blue")); !errors.Is(err, storage.ErrExists) {
				t.Errorf("create of an existing key, same bytes, no uid: %v, want ErrExists", err)
			}
			created, err := s.Create(ctx, "ns/newer", storagetest.NewWidget("ns", "newer", "blue"))
			if err != nil {
				t.Fatalf("honest create: %v", err)
			}
			if stored, err := s.Get(ctx, "ns/newer", storage.GetOptions{}); err != nil || stored.ResourceVersion != created.ResourceVersion {
				t.Errorf("honest create at %s; stored %v, %v", created.ResourceVersion, stored, err)
			}
		})
	}
}
