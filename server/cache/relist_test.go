package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// TestBuildItemsInOrder: items built on several goroutines come back in the
// page's order, each the item one goroutine would have built.
func TestBuildItemsInOrder(t *testing.T) {
	h := newHarness(t)
	const n = 4*minItemsPerWorker + 7 // four workers, the last share short
	objs := func() []*widget {
		out := make([]*widget, n)
		for i := range out {
			out[i] = storagetest.NewWidget(fmt.Sprintf("ns%d", i%3), fmt.Sprintf("w%05d", i), "red", "i", fmt.Sprint(i))
		}
		return out
	}
	one, err := h.cache.buildItems(objs(), 1)
	if err != nil {
		t.Fatal(err)
	}
	four, err := h.cache.buildItems(objs(), 4)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		a, b := one[i], four[i]
		if a.key != b.key || !bytes.Equal(a.frame, b.frame) || a.labels["i"] != fmt.Sprint(i) || b.labels["i"] != fmt.Sprint(i) {
			t.Fatalf("item %d: one worker built %q %s, four %q %s", i, a.key, a.frame, b.key, b.frame)
		}
	}
}

// TestRelistListErrorMidway: a list that fails after its first page leaves
// the cache's state as it was; the cache lists again and then has
// everything.
func TestRelistListErrorMidway(t *testing.T) {
	h := newHarness(t, withListPageSize(2))
	for i := range 5 {
		h.create("ns", fmt.Sprintf("w%d", i))
	}
	failing := &pagedFailSource{faultySource: h.src}
	c := newReadyCache[*widget](t, storagetest.Definition(), failing, withListPageSize(2))
	if failing.failed == 0 {
		t.Fatal("the source never failed a page")
	}
	if n := c.tree.Len(); n != 5 {
		t.Fatalf("cache holds %d objects after the retried list, want 5", n)
	}
}

// pagedFailSource fails the second page of its first list. Only the
// cache's lister calls it, one call at a time.
type pagedFailSource struct {
	*faultySource
	failed int
}

func (s *pagedFailSource) GetList(ctx context.Context, opts storage.ListOptions) (*storage.List[*widget], error) {
	if opts.Continue != "" && s.failed == 0 {
		s.failed++
		return nil, errors.New("injected: page failed")
	}
	return s.faultySource.GetList(ctx, opts)
}
