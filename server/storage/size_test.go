package storage_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// TestObjectTooLarge: an object whose stored form etcd would refuse is
// ErrTooLarge, whether the store's own limit or etcd's catches it, and
// nothing is written. It used to reach handlers as an unknown etcd error,
// a 500.
func TestObjectTooLarge(t *testing.T) {
	ctx := t.Context()
	c := storagetest.NewClient(t, etcdtest.Start(t), "/size")
	s := newWidgetStore(t, c, storage.WithMaxRequestBytes(4096))
	tooLarge := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, storage.ErrTooLarge) {
			t.Errorf("%s: %v, want ErrTooLarge", what, err)
		}
	}

	_, err := s.Create(ctx, "ns/big", storagetest.NewWidget("ns", "big", strings.Repeat("x", 8192)))
	tooLarge("create", err)
	small, err := s.Create(ctx, "ns/small", storagetest.NewWidget("ns", "small", "red"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.GuaranteedUpdate(ctx, "ns/small", nil, func(w *storagetest.Widget) (*storagetest.Widget, error) {
		w.Spec.Color = strings.Repeat("x", 8192)
		return w, nil
	})
	tooLarge("update", err)
	if got, err := s.Get(ctx, "ns/small", storage.GetOptions{}); err != nil || got.ResourceVersion != small.ResourceVersion {
		t.Errorf("after the refused update: %v, %v", got, err)
	}
	if _, err := s.Get(ctx, "ns/big", storage.GetOptions{}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("the refused create stored something: %v", err)
	}

	// A store that believes etcd takes more than it does: etcd's refusal
	// (1.5 MiB by default) is ErrTooLarge too.
	lax := newWidgetStore(t, c, storage.WithMaxRequestBytes(64<<20))
	_, err = lax.Create(ctx, "ns/huge", storagetest.NewWidget("ns", "huge", strings.Repeat("x", 2<<20)))
	tooLarge("create past etcd's limit", err)
}
