package storage_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// faultyStore is a widget store over a storagetest.FaultyKV, with one widget "ns/a"
// stored before the KV is armed.
func faultyStore(t *testing.T, root *clientv3.Client, keyspace string) (*storage.Store[*storagetest.Widget], *storagetest.FaultyKV) {
	t.Helper()
	c := storagetest.NewClient(t, root, keyspace)
	kv := &storagetest.FaultyKV{KV: c.KV}
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
	kv.Arm(storagetest.ErrKineTxn, storagetest.ErrKineRead, nil)
	setColor := func(w *storagetest.Widget) (*storagetest.Widget, error) { w.Spec.Color = "red"; return w, nil }
	for _, tc := range []struct {
		op, key string
		want    error
		call    func() error
	}{
		{"create", `"ns/b"`, storagetest.ErrKineTxn, func() error {
			_, err := s.Create(ctx, "ns/b", storagetest.NewWidget("ns", "b", "blue"))
			return err
		}},
		{"get", `"ns/a"`, storagetest.ErrKineRead, func() error { _, err := s.Get(ctx, "ns/a", storage.GetOptions{}); return err }},
		{"list", `"` + storagetest.Prefix + `ns/`, storagetest.ErrKineRead, func() error {
			_, err := s.GetList(ctx, storage.ListOptions{Namespace: "ns"})
			return err
		}},
		{"get revision", `"` + storagetest.Prefix, storagetest.ErrKineRead, func() error { _, err := s.CurrentRevision(ctx); return err }},
	} {
		t.Run(tc.op, func(t *testing.T) { checkBackendError(t, tc.call(), tc.op, tc.key, tc.want) })
	}

	// Writes that read first: the read succeeds, the transaction fails.
	kv.Arm(storagetest.ErrKineTxn, nil, nil)
	_, err := s.GuaranteedUpdate(ctx, "ns/a", nil, setColor)
	t.Run("update", func(t *testing.T) { checkBackendError(t, err, "update", `"ns/a"`, storagetest.ErrKineTxn) })
	_, err = s.Delete(ctx, "ns/a", nil)
	t.Run("delete", func(t *testing.T) { checkBackendError(t, err, "delete", `"ns/a"`, storagetest.ErrKineTxn) })
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
	noRevision := func(r *clientv3.TxnResponse) { r.Header.Revision = 0 }
	setColor := func(w *storagetest.Widget) (*storagetest.Widget, error) { w.Spec.Color = "red"; return w, nil }
	for _, tc := range []struct {
		name, op string
		mangle   func(*clientv3.TxnResponse)
		call     func(ctx context.Context, s *storage.Store[*storagetest.Widget]) error
	}{
		{"update without else", "update", storagetest.DropElse, func(ctx context.Context, s *storage.Store[*storagetest.Widget]) error {
			_, err := s.GuaranteedUpdate(ctx, "ns/a", nil, setColor)
			return err
		}},
		{"delete without else", "delete", storagetest.DropElse, func(ctx context.Context, s *storage.Store[*storagetest.Widget]) error {
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
			kv.Arm(nil, nil, tc.mangle)
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
