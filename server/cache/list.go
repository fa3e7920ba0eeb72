package cache

import (
	"context"
	"errors"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/internal/failpoint"
	"github.com/apiloom/apiloom/server/internal/tracing"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// Get implements storage.Interface. RV "" (a consistent read of one key)
// goes to the source: one quorum read there costs what learning the
// revision would. RV "0" is answered from memory, RV N once the cache has
// reached N (ErrTooLargeResourceVersion if it does not in time). A key the
// cache does not hold is answered with the error the store gave for it if
// its value does not decode, and asked of the source otherwise, which tells
// a missing key from an invalid one.
func (c *Cache[O]) Get(ctx context.Context, key string, opts storage.GetOptions) (O, error) {
	obj, _, err := c.GetEncoded(ctx, key, opts)
	return obj, err
}

// GetEncoded implements storage.EncodedGetter: Get, with the item's JSON
// when the cache answered, and then without decoding the object if
// opts.Encoded.
func (c *Cache[O]) GetEncoded(ctx context.Context, key string, opts storage.GetOptions) (O, []byte, error) {
	ctx, span := c.startSpan(ctx, spanGet, "key", key, opts.ResourceVersion)
	obj, raw, err := c.getEncoded(ctx, key, opts)
	tracing.End(span, err)
	return obj, raw, err
}

func (c *Cache[O]) getEncoded(ctx context.Context, key string, opts storage.GetOptions) (O, []byte, error) {
	var zero O
	fromSource := func() (O, []byte, error) {
		tracing.Event(ctx, eventFromSource)
		obj, err := c.src.Get(ctx, key, opts)
		return obj, nil, err
	}
	if !c.Ready() || opts.ResourceVersion == "" {
		return fromSource()
	}
	rv, err := storage.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return zero, nil, err
	}
	if err := c.reach(ctx, rv); err != nil {
		return zero, nil, c.waitError(err, rv)
	}
	c.mu.RLock()
	it, ok := c.tree.Get(&item[O]{key: key})
	corrupt := c.corrupt[key]
	c.mu.RUnlock()
	switch {
	case ok && opts.Encoded:
		return zero, it.raw, nil
	case ok:
		return it.object(), it.raw, nil
	case corrupt != nil:
		err := *corrupt // the caller's to keep
		return zero, nil, &err
	default:
		return fromSource()
	}
}

// GetList implements storage.Interface with the store's semantics (see
// storage.Store.GetList), from memory where it can:
//
//   - RV "" learns etcd's revision and waits for the cache to reach it;
//     if that takes longer than the wait timeout the source answers.
//   - RV "0" is the cache's state, whole: its limit is ignored, as by
//     kube-apiserver's watch cache; RV N (NotOlderThan) waits for N.
//   - Exact N, and continue tokens, are answered from a snapshot
//     reconstructed from the history when N is inside the window, and by
//     the source otherwise.
//
// Pages and their continue tokens are the store's: either implementation
// continues the other's lists.
func (c *Cache[O]) GetList(ctx context.Context, opts storage.ListOptions) (*storage.List[O], error) {
	ctx, span := c.startSpan(ctx, spanGetList, "namespace", opts.Namespace, opts.ResourceVersion)
	l, err := c.getList(ctx, opts)
	if err == nil && span.IsRecording() {
		span.SetAttributes(attribute.Int("count", l.Len()))
	}
	tracing.End(span, err)
	return l, err
}

func (c *Cache[O]) getList(ctx context.Context, opts storage.ListOptions) (*storage.List[O], error) {
	if !c.Ready() || !plainNamespace(opts.Namespace) {
		return c.listFromSource(ctx, opts)
	}
	if opts.Continue != "" {
		return c.listContinue(ctx, opts)
	}
	rv, err := storage.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	m := c.matcherFor(opts)
	switch match := opts.ResourceVersionMatch; {
	case match == metav1.ResourceVersionMatchExact || (match == "" && opts.Limit > 0 && rv > 0):
		if rv == 0 {
			break // invalid; the source says why
		}
		if err := c.reach(ctx, rv); err != nil {
			if errors.Is(err, errWaitTimeout) {
				break
			}
			return nil, err
		}
		if v, ok := c.viewAt(rv, m.ns); ok {
			return page(v, &m, opts.Limit, "", 0, opts.Encoded), nil
		}
	case match == "" || match == metav1.ResourceVersionMatchNotOlderThan:
		if opts.ResourceVersion == "" {
			if err := c.waitConsistent(ctx); errors.Is(err, errWaitTimeout) {
				break
			} else if err != nil {
				return nil, err
			}
		} else if err := c.reach(ctx, rv); err != nil {
			return nil, c.waitError(err, rv)
		}
		v := c.currentView(m.ns)
		if failpoint.Enabled && opts.ResourceVersion == "" && failpoint.Fire(failpoint.StaleConsistentList) {
			v = c.staleView(v)
		}
		limit := opts.Limit
		if opts.ResourceVersion == "0" {
			// kube-apiserver's watch cache ignores the limit of an RV "0"
			// list (computeListLimit): an informer's first LIST (RV 0,
			// limit 500) is one answer, not a traversal.
			limit = 0
		}
		l := page(v, &m, limit, "", 0, opts.Encoded)
		if failpoint.Enabled && opts.ResourceVersion == "" && l.Len() > 0 && failpoint.Fire(failpoint.ListDropItem) {
			l = c.dropItem(l)
		}
		return l, nil
	}
	return c.listFromSource(ctx, opts)
}

// listContinue serves the next page of a list from the snapshot at the
// token's revision if the history reaches back to it, and passes the
// request to the source otherwise (including every invalid request, so
// that the errors are the store's).
func (c *Cache[O]) listContinue(ctx context.Context, opts storage.ListOptions) (*storage.List[O], error) {
	if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
		return c.listFromSource(ctx, opts)
	}
	m := c.matcherFor(opts)
	start, rev, before, err := storage.DecodeCountedContinue(opts.Continue, m.ns)
	if err != nil || rev <= 0 {
		return c.listFromSource(ctx, opts)
	}
	r := namespaceRange(m.ns)
	if !strings.HasPrefix(start, r.from) || (!c.def.Namespaced && strings.Contains(start, "/")) {
		return c.listFromSource(ctx, opts)
	}
	v, ok := c.viewAt(rev, m.ns)
	if !ok {
		return c.listFromSource(ctx, opts)
	}
	return page(v, &m, opts.Limit, start, before, opts.Encoded), nil
}

// page lists the items of v that m matches, from the key start on, at most
// limit of them if limit > 0. Like the store, it sets a continue token
// when the page is full and more keys follow (matching or not), and the
// number of keys left when there is no selector.
//
// before is how many keys of m's namespace (or of all, for a list of every
// namespace) precede start in v, or -1 if unknown. A list without
// selectors knows it, and the view knows the namespace's size, so its
// remaining count is arithmetic and a page costs O(limit), not O(keys after
// it); a list whose token did not count counts the rest of its range.
//
// Items are decoded from the items' JSON (item.object) unless encoded
// (storage.ListOptions.Encoded): then the list has Raw only.
func page[O resource.Object](v view[O], m *matcher, limit int64, start string, before int64, encoded bool) *storage.List[O] {
	r := namespaceRange(m.ns)
	if start > r.from {
		r.from = start
	}
	var raw [][]byte
	var src listEncodings[O]
	switch {
	case limit > 0:
		n := min(limit, 1024)
		raw, src = make([][]byte, 0, n), make(listEncodings[O], 0, n)
	case m.ns == "" && !m.selective():
		n := v.tree.Len() // about right; the exact count at an older revision differs a little
		raw, src = make([][]byte, 0, n), make(listEncodings[O], 0, n)
	}
	var lastKey string
	var visited int64
	more := false
	v.ascend(r, func(it *item[O]) bool {
		if limit > 0 && int64(len(raw)) >= limit {
			more = true
			return false
		}
		lastKey = it.key
		visited++
		if matches(m, it) {
			raw = append(raw, it.raw)
			src = append(src, it)
		}
		return true
	})
	if raw == nil {
		raw = [][]byte{}
	}
	list := &storage.List[O]{Raw: raw, Encodings: src, ResourceVersion: v.rev}
	if !encoded {
		list.Items = make([]O, len(src))
		for i, it := range src {
			list.Items[i] = it.object()
		}
	}
	if more {
		list.Continue = storage.ContinueAfter(lastKey, v.rev)
		if !m.selective() {
			var n int64
			total, sized := v.size(m.ns)
			if sized && before >= 0 && before+visited <= total {
				n = total - before - visited
			} else {
				v.ascend(keyRange{from: lastKey + "\x00", to: r.to}, func(*item[O]) bool { n++; return true })
			}
			if sized && n <= total {
				// The next page will not count: total-n keys precede it.
				list.Continue = storage.ContinueAfterCounted(lastKey, v.rev, m.ns, total-n)
			}
			list.RemainingItemCount = &n
		}
	}
	return list
}
