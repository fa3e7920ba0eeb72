package kine

import (
	"errors"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// TestRequestSizeLimits checks kine's request size limit against the
// store's: kine accepts gRPC messages of etcd's default request limit plus
// 512 KiB (2 MiB), so an object the store lets through with its default
// (--etcd-max-request-bytes, etcd's 1.5 MiB) is stored whole, and a store
// told to allow more than kine takes gets kine's refusal as ErrTooLarge,
// a 413 to the client, with nothing written.
func TestRequestSizeLimits(t *testing.T) {
	c := startKine(t)
	ctx := t.Context()
	def := storagetest.Definition()
	s := storage.New(c, keyspace(t), def)

	// The largest color the default limit lets through, near 1.5 MiB.
	big := strings.Repeat("x", storage.DefaultMaxRequestBytes-2048)
	w, err := s.Create(ctx, storage.Key("ns", "big"), storagetest.NewWidget("ns", "big", big))
	if err != nil {
		t.Fatalf("create of %d bytes: %v", len(big), err)
	}
	w, err = s.GuaranteedUpdate(ctx, storage.Key("ns", "big"), nil, func(w *storagetest.Widget) (*storagetest.Widget, error) {
		w.Spec.Color = big[1:]
		return w, nil
	})
	if err != nil {
		t.Fatalf("update of %d bytes: %v", len(big)-1, err)
	}
	got, err := s.Get(ctx, storage.Key("ns", "big"), storage.GetOptions{})
	if err != nil || got.Spec.Color != big[1:] || got.ResourceVersion != w.ResourceVersion {
		t.Fatalf("get after the update: %d bytes at %s, %v; want %d at %s", len(got.Spec.Color), got.ResourceVersion, err, len(big)-1, w.ResourceVersion)
	}
	_, err = s.Create(ctx, storage.Key("ns", "over"), storagetest.NewWidget("ns", "over", big+strings.Repeat("x", 4096)))
	if !errors.Is(err, storage.ErrTooLarge) {
		t.Errorf("create past the store's limit: %v, want ErrTooLarge", err)
	}

	// A store, and a client, that would send more than kine accepts.
	lax, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 10 * time.Second,
		MaxCallSendMsgSize: 16 << 20, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lax.Close() })
	ls := storage.New(lax, keyspace(t), def, storage.WithMaxRequestBytes(16<<20))
	_, err = ls.Create(ctx, storage.Key("ns", "huge"), storagetest.NewWidget("ns", "huge", strings.Repeat("x", 3<<20)))
	if !errors.Is(err, storage.ErrTooLarge) {
		t.Errorf("create past kine's limit: %v, want ErrTooLarge", err)
	}
	t.Logf("kine's refusal: %v", err)
	for _, name := range []string{"over", "huge"} {
		if _, err := s.Get(ctx, storage.Key("ns", name), storage.GetOptions{}); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("the refused create of %s stored something: %v", name, err)
		}
	}
}
