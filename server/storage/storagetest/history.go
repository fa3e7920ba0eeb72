package storagetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/apiloom/apiloom/server/storage"
)

// history records every write a test makes, so that a list at any
// revision can be checked against what the state was then.
type history struct {
	writes []write
}

type write struct {
	rev     int64
	key     string
	obj     *Widget // the stored state, or the last state for a delete
	deleted bool
}

func (h *history) record(obj *Widget, deleted bool) {
	n, _ := storage.ParseResourceVersion(obj.ResourceVersion)
	h.writes = append(h.writes, write{rev: n, key: storage.Key(obj.Namespace, obj.Name), obj: obj, deleted: deleted})
}

// stateAt is the key → object map at revision rev.
func (h *history) stateAt(rev int64) map[string]*Widget {
	state := map[string]*Widget{}
	for _, w := range h.writes {
		if w.rev > rev {
			continue
		}
		if w.deleted {
			delete(state, w.key)
		} else {
			state[w.key] = w.obj
		}
	}
	return state
}

// item is what the suite compares of a listed object: key and revision.
type item struct {
	key string
	rev int64
}

func items(t *testing.T, objs []*Widget) []item {
	t.Helper()
	out := make([]item, len(objs))
	for i, o := range objs {
		out[i] = item{key: storage.Key(o.Namespace, o.Name), rev: rv(t, o)}
	}
	return out
}

// expectedItems is the state at rev filtered by keep, in key order.
func (h *history) expectedItems(t *testing.T, rev int64, keep func(*Widget) bool) []item {
	t.Helper()
	var objs []*Widget
	for _, o := range h.stateAt(rev) {
		if keep == nil || keep(o) {
			objs = append(objs, o)
		}
	}
	slices.SortFunc(objs, func(a, b *Widget) int {
		return strings.Compare(storage.Key(a.Namespace, a.Name), storage.Key(b.Namespace, b.Name))
	})
	return items(t, objs)
}

// checkListAt fails the test unless l holds exactly the state at its own
// resourceVersion (filtered by keep), in key order, with every object
// carrying its kind.
func (e *env) checkListAt(l *storage.List[*Widget], keep func(*Widget) bool) {
	e.t.Helper()
	got := items(e.t, l.Items)
	want := e.log.expectedItems(e.t, l.ResourceVersion, keep)
	if !slices.Equal(got, want) {
		e.t.Fatalf("list at %d:\n got %v\nwant %v", l.ResourceVersion, got, want)
	}
	for _, o := range l.Items {
		checkKind(e.t, o)
	}
}

// checkKind fails the test unless obj carries the Widget kind and version:
// watch and list clients decode objects without a default kind.
func checkKind(t *testing.T, obj *Widget) {
	t.Helper()
	if obj.Kind != "Widget" || obj.APIVersion != "storagetest.apiloom.dev/v1" {
		t.Fatalf("%s/%s: kind %q apiVersion %q, want Widget storagetest.apiloom.dev/v1", obj.Namespace, obj.Name, obj.Kind, obj.APIVersion)
	}
}
