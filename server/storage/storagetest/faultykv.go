package storagetest

import (
	"context"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// kine's answers to requests outside what it implements (kine
// pkg/server/types.go: ErrNotSupported, unsupported(field)).
var (
	ErrKineTxn  = status.New(codes.InvalidArgument, "etcdserver: unsupported operations in txn request").Err()
	ErrKineRead = status.New(codes.Unimplemented, "limit is not implemented by kine").Err()
)

// FaultyKV is a clientv3.KV that, once armed, fails every transaction
// with a txn error and every read with a get error, or changes the
// response of every committed transaction with a mangle function: an
// etcd-API backend answering what it does not implement, or answering
// wrongly. Put it in place of a client's KV: c.KV = &FaultyKV{KV: c.KV}.
type FaultyKV struct {
	clientv3.KV

	mu     sync.Mutex // guards the fields below
	txnErr error
	getErr error
	mangle func(*clientv3.TxnResponse)
}

// Arm sets the faults of the next requests; Arm(nil, nil, nil) clears them.
func (f *FaultyKV) Arm(txnErr, getErr error, mangle func(*clientv3.TxnResponse)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.txnErr, f.getErr, f.mangle = txnErr, getErr, mangle
}

// DropElse is a mangle: a transaction comes back failed without its Else
// branch's responses.
func DropElse(resp *clientv3.TxnResponse) { resp.Succeeded, resp.Responses = false, nil }

func (f *FaultyKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	f.mu.Lock()
	err := f.getErr
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return f.KV.Get(ctx, key, opts...)
}

func (f *FaultyKV) Txn(ctx context.Context) clientv3.Txn {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &faultyTxn{Txn: f.KV.Txn(ctx), err: f.txnErr, mangle: f.mangle}
}

type faultyTxn struct {
	clientv3.Txn
	err    error
	mangle func(*clientv3.TxnResponse)
}

func (t *faultyTxn) If(cs ...clientv3.Cmp) clientv3.Txn   { t.Txn = t.Txn.If(cs...); return t }
func (t *faultyTxn) Then(ops ...clientv3.Op) clientv3.Txn { t.Txn = t.Txn.Then(ops...); return t }
func (t *faultyTxn) Else(ops ...clientv3.Op) clientv3.Txn { t.Txn = t.Txn.Else(ops...); return t }

func (t *faultyTxn) Commit() (*clientv3.TxnResponse, error) {
	if t.err != nil {
		return nil, t.err
	}
	resp, err := t.Txn.Commit()
	if err == nil && t.mangle != nil {
		t.mangle(resp)
	}
	return resp, err
}
