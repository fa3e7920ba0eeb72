package storage_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// kine's answers to requests outside what it implements (kine
// pkg/server/types.go: ErrNotSupported, unsupported(field)).
var (
	errKineTxn  = status.New(codes.InvalidArgument, "etcdserver: unsupported operations in txn request").Err()
	errKineRead = status.New(codes.Unimplemented, "limit is not implemented by kine").Err()
)

// faultyKV is a clientv3.KV that, once armed, fails every transaction
// with txnErr and every read with getErr, or changes the response of
// every committed transaction with mangle: an etcd-API backend answering
// what it does not implement, or answering wrongly.
type faultyKV struct {
	clientv3.KV

	mu     sync.Mutex // guards the fields below
	txnErr error
	getErr error
	mangle func(*clientv3.TxnResponse)
}

func (f *faultyKV) arm(txnErr, getErr error, mangle func(*clientv3.TxnResponse)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.txnErr, f.getErr, f.mangle = txnErr, getErr, mangle
}

func (f *faultyKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	f.mu.Lock()
	err := f.getErr
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return f.KV.Get(ctx, key, opts...)
}

func (f *faultyKV) Txn(ctx context.Context) clientv3.Txn {
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

// faultyStore is a widget store over a faultyKV, with one widget "ns/a"
// stored before the KV is armed.
func faultyStore(t *testing.T, root *clientv3.Client, keyspace string) (*storage.Store[*storagetest.Widget], *faultyKV) {
	t.Helper()
	c := storagetest.NewClient(t, root, keyspace)
	kv := &faultyKV{KV: c.KV}
	c.KV = kv
	s := newWidgetStore(t, c)
	if _, err := s.Create(t.Context(), "ns/a", storagetest.NewWidget("ns", "a", "blue")); err != nil {
		t.Fatal(err)
	}
	return s, kv
}

// TestBackendErrorsNameTheOperation: a request the backend refuses (kine's
// answers to what it does not implement) fails with an error that names
// the operation and the key or key range, keeps the backend's error for
// errors.Is, and is none of storage's sentinels, which handlers would
// turn into a 404, 409 or 410: never a silent wrong answer.
func TestBackendErrorsNameTheOperation(t *testing.T) {
	root := etcdtest.Start(t)
	s, kv := faultyStore(t, root, "/backend-errors")
	ctx := t.Context()
	kv.arm(errKineTxn, errKineRead, nil)
	setColor := func(w *storagetest.Widget) (*storagetest.Widget, error) { w.Spec.Color = "red"; return w, nil }
	for _, tc := range []struct {
		op, key string
		want    error
		call    func() error
	}{
		{"create", `"ns/b"`, errKineTxn, func() error {
			_, err := s.Create(ctx, "ns/b", storagetest.NewWidget("ns", "b", "blue"))
			return err
		}},
		{"get", `"ns/a"`, errKineRead, func() error { _, err := s.Get(ctx, "ns/a", storage.GetOptions{}); return err }},
		{"list", `"` + storagetest.Prefix + `ns/`, errKineRead, func() error {
			_, err := s.GetList(ctx, storage.ListOptions{Namespace: "ns"})
			return err
		}},
		{"get revision", `"` + storagetest.Prefix, errKineRead, func() error { _, err := s.CurrentRevision(ctx); return err }},
	} {
		t.Run(tc.op, func(t *testing.T) { checkBackendError(t, tc.call(), tc.op, tc.key, tc.want) })
	}

	// Writes that read first: the read succeeds, the transaction fails.
	kv.arm(errKineTxn, nil, nil)
	_, err := s.GuaranteedUpdate(ctx, "ns/a", nil, setColor)
	t.Run("update", func(t *testing.T) { checkBackendError(t, err, "update", `"ns/a"`, errKineTxn) })
	_, err = s.Delete(ctx, "ns/a", nil)
	t.Run("delete", func(t *testing.T) { checkBackendError(t, err, "delete", `"ns/a"`, errKineTxn) })
}

func checkBackendError(t *testing.T, err error, op, key string, backend error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s succeeded on a backend that refuses it", op)
	}
	if !errors.Is(err, backend) {
		t.Errorf("%s: %v does not wrap the backend's error", op, err)
	}
	if se, ok := storage.AsError(err); ok {
		t.Errorf("%s: the backend's refusal became storage's %v", op, se.Err)
	}
	if msg := err.Error(); !strings.Contains(msg, "etcd "+op+" ") || !strings.Contains(msg, key) {
		t.Errorf("%s: message %q does not name the operation and %s", op, msg, key)
	}
}

// TestBadResponses: answers etcd's API never gives (a failed transaction
// without its Else branch's get, a success without a new revision) are
// ErrBadResponse naming the operation and key, not "not found" or an
// object with a wrong resourceVersion.
func TestBadResponses(t *testing.T) {
	root := etcdtest.Start(t)
	noElse := func(r *clientv3.TxnResponse) { r.Succeeded, r.Responses = false, nil }
	noRevision := func(r *clientv3.TxnResponse) { r.Header.Revision = 0 }
	setColor := func(w *storagetest.Widget) (*storagetest.Widget, error) { w.Spec.Color = "red"; return w, nil }
	for _, tc := range []struct {
		name, op string
		mangle   func(*clientv3.TxnResponse)
		call     func(ctx context.Context, s *storage.Store[*storagetest.Widget]) error
	}{
		{"update without else", "update", noElse, func(ctx context.Context, s *storage.Store[*storagetest.Widget]) error {
			_, err := s.GuaranteedUpdate(ctx, "ns/a", nil, setColor)
			return err
		}},
		{"delete without else", "delete", noElse, func(ctx context.Context, s *storage.Store[*storagetest.Widget]) error {
			_, err := s.Delete(ctx, "ns/a", nil)
			return err
		}},
		{"create at revision 0", "create", noRevision, func(ctx context.Context, s *storage.Store[*storagetest.Widget]) error {
			_, err := s.Create(ctx, "ns/b", storagetest.NewWidget("ns", "b", "blue"))
			return err
		}},
		{"update at revision 0", "update", noRevision, func(ctx context.Context, s *storage.Store[*storagetest.Widget]) error {
			_, err := s.GuaranteedUpdate(ctx, "ns/a", nil, setColor)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, kv := faultyStore(t, root, "/bad-responses/"+strings.ReplaceAll(tc.name, " ", "-"))
			kv.arm(nil, nil, tc.mangle)
			err := tc.call(t.Context(), s)
			if !errors.Is(err, storage.ErrBadResponse) {
				t.Fatalf("got %v, want ErrBadResponse", err)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.op+":") {
				t.Errorf("message %q does not name the operation %s", msg, tc.op)
			}
		})
	}
}
