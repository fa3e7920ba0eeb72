package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// listPlan is what a ListOptions asks etcd for, worked out before reading.
type listPlan struct {
	start, end string // full keys: read [start, end)
	// rev is the revision to read at; 0 means the latest, fixed by the first
	// read and used for every further read of the same list.
	rev int64
	// minRev is the lowest acceptable revision when rev is 0.
	minRev int64
	// continued: the list resumes a continue token, so compaction is
	// answered with a fresh token rather than a plain ErrExpired.
	continued bool
	// pinned: the client asked for rev, so compaction is its ErrExpired;
	// an unpinned list that meets compaction between reads starts over.
	pinned bool
}

// errRestartList makes GetList start an unpinned list over at the latest
// revision: etcd compacted the revision it pinned after its first read.
var errRestartList = errors.New("storage: list revision compacted mid-list")

// GetList implements Interface. The resourceVersion rules
// (docs/architecture.md):
//
//   - RV "" and "0" read the latest revision with a quorum (etcd-API
//     backends such as kine serve no serializable read, and kube-apiserver
//     sends none; the watch cache answers "0" from memory).
//   - RV N with NotOlderThan (or no match and no limit) reads the latest
//     revision and fails with ErrTooLargeResourceVersion if that is below N.
//     It never fails with ErrExpired.
//   - RV N with Exact (or no match and a limit: the legacy rule) reads
//     exactly N: ErrExpired if compacted, ErrTooLargeResourceVersion if
//     ahead of etcd.
//   - Continue resumes at the token's revision and key; RV must be "" or
//     "0". If the revision was compacted the error carries a fresh token
//     that continues at the latest revision from the same key. A token
//     resumes only a list of the namespace it came from; in another it is
//     ErrInvalidContinue.
//
// With a limit, a page holds at most Limit items. With a selector, etcd is
// read in growing chunks until Limit objects match or the range ends, so a
// page is short only at the end of the list. RemainingItemCount is set only
// for unfiltered lists with more items.
//
// A value that does not decode is skipped like an object the selector
// rejects (it still counts in RemainingItemCount, which is an estimate),
// reported (decodeErrors) and listed in the page's Corrupt.
func (s *Store[O]) GetList(ctx context.Context, opts ListOptions) (*List[O], error) {
	plan, err := s.planList(opts)
	if err != nil {
		return nil, err
	}
	for {
		list, err := s.readList(ctx, plan, opts)
		if errors.Is(err, errRestartList) {
			continue
		}
		return list, err
	}
}

// planList validates opts and turns them into a listPlan.
func (s *Store[O]) planList(opts ListOptions) (listPlan, error) {
	rangePrefix, nsRel := s.prefix, ""
	if s.namespaced && opts.Namespace != "" {
		if !validSegment(opts.Namespace) {
			return listPlan{}, &Error{Err: ErrInvalidKey, Key: opts.Namespace, Detail: "invalid namespace"}
		}
		nsRel = opts.Namespace + "/"
		rangePrefix += nsRel
	}
	p := listPlan{start: rangePrefix, end: clientv3.GetPrefixRangeEnd(rangePrefix)}

	if opts.Continue != "" {
		if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
			return listPlan{}, invalidContinue("specifying resource version is not allowed when using continue")
		}
		start, rev, err := DecodeContinue(opts.Continue)
		if err != nil {
			return listPlan{}, err
		}
		if !strings.HasPrefix(start, nsRel) || (!s.namespaced && strings.Contains(start, "/")) {
			return listPlan{}, invalidContinue("token does not belong to this list")
		}
		p.start = s.prefix + start
		p.continued = true
		if rev > 0 {
			p.rev, p.pinned = rev, true
		}
		return p, nil
	}

	rv, err := ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return listPlan{}, err
	}
	switch opts.ResourceVersionMatch {
	case metav1.ResourceVersionMatchNotOlderThan:
		p.minRev = rv
	case metav1.ResourceVersionMatchExact:
		p.rev, p.pinned = rv, rv > 0
	case "":
		if opts.Limit > 0 && rv > 0 {
			// Legacy: before resourceVersionMatch existed, a paginated
			// list at an RV was a read at exactly that RV.
			p.rev, p.pinned = rv, true
		} else {
			p.minRev = rv
		}
	default:
		return listPlan{}, &Error{Err: ErrInvalidResourceVersion, Detail: fmt.Sprintf("unknown resourceVersionMatch %q", opts.ResourceVersionMatch)}
	}
	return p, nil
}

// readList reads one list (one page, with a limit) according to p.
func (s *Store[O]) readList(ctx context.Context, p listPlan, opts ListOptions) (*List[O], error) {
	paging := opts.Limit > 0
	chunk := opts.Limit
	rev, start := p.rev, p.start
	var (
		items     []O
		lastKey   string // relative key of the last object evaluated
		hasMore   bool
		remaining *int64
		corrupt   []*Error // values skipped because they do not decode
	)
	if paging {
		items = make([]O, 0, min(opts.Limit, 1024))
	}
	for {
		ops := []clientv3.OpOption{clientv3.WithRange(p.end)}
		if rev > 0 {
			ops = append(ops, clientv3.WithRev(rev))
		}
		if paging {
			ops = append(ops, clientv3.WithLimit(chunk))
		}
		resp, err := s.kv.Get(ctx, start, ops...)
		if err != nil {
			return nil, s.listError(ctx, err, p, rev, start)
		}
		if rev == 0 {
			rev = resp.Header.Revision
			if p.minRev > rev {
				return nil, &Error{Err: ErrTooLargeResourceVersion, ResourceVersion: p.minRev, CurrentRevision: rev}
			}
		}
		consumed := 0
		for _, kv := range resp.Kvs {
			if paging && int64(len(items)) >= opts.Limit {
				hasMore = true
				break
			}
			consumed++
			lastKey = s.relKey(kv.Key)
			obj, err := s.decode(ctx, kv.Value, kv.ModRevision, lastKey)
			if err != nil {
				se, ok := corruptError(err)
				if !ok {
					return nil, err
				}
				corrupt = append(corrupt, se)
				continue
			}
			if s.matches(opts.Predicate, obj) {
				items = append(items, obj)
			}
		}
		if !hasMore && resp.More && paging && int64(len(items)) >= opts.Limit {
			hasMore = true
		}
		if hasMore {
			if opts.Predicate.Empty() {
				// Count is the number of keys in [start, end) at rev,
				// including those this read returned.
				n := resp.Count - int64(consumed)
				remaining = &n
			}
			break
		}
		if !resp.More {
			break
		}
		if len(resp.Kvs) == 0 {
			return nil, fmt.Errorf("storage: etcd reported more keys after %q but returned none", start)
		}
		// A selector left the page short: read on, in bigger chunks.
		start = s.prefix + lastKey + "\x00"
		chunk = min(chunk*2, s.cfg.maxListChunk)
	}
	if items == nil {
		items = []O{}
	}
	list := &List[O]{Items: items, ResourceVersion: rev, RemainingItemCount: remaining, Corrupt: corrupt}
	if hasMore {
		list.Continue = ContinueAfter(lastKey, rev)
	}
	return list, nil
}

// listError maps an etcd read error of a list at rev, reading from the
// full key start, to what GetList returns.
func (s *Store[O]) listError(ctx context.Context, err error, p listPlan, rev int64, start string) error {
	switch {
	case isCompacted(err):
		if p.continued {
			// The client may start over, or accept an inconsistent list
			// by continuing at the latest revision from where it was.
			return &Error{Err: ErrExpired, ResourceVersion: rev, Continue: EncodeContinue(s.relKey([]byte(start)), -1),
				Detail: "the continue token is too old to display a consistent list"}
		}
		if p.pinned {
			return &Error{Err: ErrExpired, ResourceVersion: rev}
		}
		return errRestartList
	case isFutureRev(err):
		cur, cerr := s.CurrentRevision(ctx)
		if cerr != nil {
			cur = 0
		}
		return &Error{Err: ErrTooLargeResourceVersion, ResourceVersion: rev, CurrentRevision: cur}
	default:
		return etcdError("list", start, err)
	}
}
