package cache

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// listedPages is a list of the source at one revision, page by page, made
// by listPages on a goroutine of its own so that etcd's read and the
// decoding of page n+1 overlap the encoding of page n (buildItems): at
// start the cache's fill is most of the time to ready.
//
// Receive from ch until it is closed; err then says why the listing
// stopped (nil: every page was sent). Cancelling the context given to
// listPages stops the goroutine; the caller must still drain ch.
type listedPages[O resource.Object] struct {
	ch  chan *storage.List[O]
	err error // read after ch is closed
}

// listPages starts listing with list, pageSize objects a page.
func listPages[O resource.Object](ctx context.Context, list func(context.Context, storage.ListOptions) (*storage.List[O], error), pageSize int64) *listedPages[O] {
	p := &listedPages[O]{ch: make(chan *storage.List[O], 1)}
	go func() {
		defer close(p.ch)
		opts := storage.ListOptions{Limit: pageSize}
		for {
			page, err := list(ctx, opts)
			if err != nil {
				p.err = fmt.Errorf("list: %w", err)
				return
			}
			select {
			case p.ch <- page:
			case <-ctx.Done():
				p.err = ctx.Err()
				return
			}
			if page.Continue == "" {
				return
			}
			opts.Continue = page.Continue
		}
	}()
	return p
}

// buildItems makes the items of a listed page (newItem: encode, then
// decode again aliasing the frame) on up to workers goroutines, each
// taking a contiguous share; the result is in the page's order.
func (c *Cache[O]) buildItems(objs []O, workers int) ([]*item[O], error) {
	items := make([]*item[O], len(objs))
	workers = max(1, min(workers, len(objs)/minItemsPerWorker))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	share := (len(objs) + workers - 1) / workers
	for w := range workers {
		from, to := w*share, min((w+1)*share, len(objs))
		build := func() {
			for i := from; i < to; i++ {
				it, err := c.newItem(objs[i], watch.Added, false)
				if err != nil {
					errs[w] = err
					return
				}
				items[i] = it
			}
		}
		if w == workers-1 {
			build() // the last share on this goroutine
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); build() }()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return items, nil
}

// minItemsPerWorker keeps small pages on one goroutine, where starting
// others would cost more than it saves.
const minItemsPerWorker = 256
