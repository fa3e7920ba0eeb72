package storagetest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/storage"
)

// badValue is a stored value no Widget decodes from.
const badValue = "not json"

// putRaw writes value under key in etcd, around the store, as a broken
// writer would, and returns the revision of the write.
func (e *env) putRaw(ns, name, value string) int64 {
	e.t.Helper()
	resp, err := e.client.Put(e.ctx, Prefix+storage.Key(ns, name), value)
	if err != nil {
		e.t.Fatalf("put %s/%s: %v", ns, name, err)
	}
	return resp.Header.Revision
}

// putWidget writes w's stored form under its key around the store (a
// readable value repairing an unreadable one) and returns it as stored.
func (e *env) putWidget(w *Widget) *Widget {
	e.t.Helper()
	w.Kind, w.APIVersion = "Widget", "storagetest.apiloom.dev/v1"
	data, err := json.Marshal(w)
	if err != nil {
		e.t.Fatal(err)
	}
	w.ResourceVersion = rvs(e.putRaw(w.Namespace, w.Name, string(data)))
	e.log.record(w, false)
	return w
}

// checkCorrupt fails the test unless err is ErrCorrupt for key at rev.
func checkCorrupt(t *testing.T, what string, err error, key string, rev int64) {
	t.Helper()
	se, ok := storage.AsError(err)
	if !ok || !errors.Is(err, storage.ErrCorrupt) || se.Key != key || se.ResourceVersion != rev || se.Detail == "" {
		t.Fatalf("%s: %v (%+v), want ErrCorrupt for %s at %d with the decode error", what, err, se, key, rev)
	}
}

// testCorruptReads: an unreadable value fails the reads of its key with
// ErrCorrupt and is left out of every list, which keeps working.
func testCorruptReads(t *testing.T, e *env) {
	a := e.create("ns", "a", "red")
	badRev := e.putRaw("ns", "bad", badValue)
	e.create("ns", "c", "blue")
	key := storage.Key("ns", "bad")

	_, err := e.store.Get(e.ctx, key, storage.GetOptions{})
	checkCorrupt(t, "get", err, key, badRev)
	// At RV "0" an implementation may lag behind the write: wait for it.
	eventually(t, e.ctx, func() error {
		_, err := e.store.Get(e.ctx, key, storage.GetOptions{ResourceVersion: "0"})
		if !errors.Is(err, storage.ErrCorrupt) {
			return errors.New("get at 0: " + errString(err))
		}
		return nil
	})
	_, err = e.store.Get(e.ctx, key, storage.GetOptions{ResourceVersion: rvs(e.rev())})
	checkCorrupt(t, "get at the current revision", err, key, badRev)

	// The key is taken: a create is AlreadyExists, not a second object.
	if _, err := e.store.Create(e.ctx, key, NewWidget("ns", "bad", "red")); !errors.Is(err, storage.ErrExists) {
		t.Errorf("create over an unreadable value: %v, want ErrExists", err)
	}
	called := false
	_, err = e.store.GuaranteedUpdate(e.ctx, key, nil, func(w *Widget) (*Widget, error) { called = true; return w, nil })
	checkCorrupt(t, "update", err, key, badRev)
	if called {
		t.Error("update called tryUpdate without an object")
	}
	_, err = e.store.Delete(e.ctx, key, nil)
	checkCorrupt(t, "delete", err, key, badRev)

	// Lists skip it, consistent, from memory, exact, by namespace, paged
	// across it, with a selector.
	e.checkListAt(e.list(storage.ListOptions{}), nil)
	e.checkListAt(e.list(storage.ListOptions{Namespace: "ns", ResourceVersion: a.ResourceVersion, ResourceVersionMatch: notOlderThan}), nil)
	e.checkListAt(e.list(storage.ListOptions{ResourceVersion: rvs(e.rev()), ResourceVersionMatch: exact}), nil)
	var paged []*Widget
	opts := storage.ListOptions{Limit: 1}
	for {
		l := e.list(opts)
		paged = append(paged, l.Items...)
		if l.Continue == "" {
			break
		}
		opts.Continue = l.Continue
	}
	if got := items(t, paged); len(got) != 2 || got[0].key != "ns/a" || got[1].key != "ns/c" {
		t.Errorf("paged list: %v, want ns/a and ns/c", got)
	}
	blue := e.list(storage.ListOptions{Predicate: fieldPred(t, "spec.color=blue")})
	if got := items(t, blue.Items); len(got) != 1 || got[0].key != "ns/c" {
		t.Errorf("list with a selector: %v, want ns/c", got)
	}
}

// testCorruptListHistory: lists at exact revisions show an object while
// its value was readable and never while it was not.
func testCorruptListHistory(t *testing.T, e *env) {
	x := e.create("ns", "x", "red")
	e.create("ns", "y", "red")
	e.putRaw("ns", "x", badValue)
	unreadable := e.rev()
	e.putRaw("ns", "y", badValue)
	if err := e.store.DeleteCorrupt(e.ctx, storage.Key("ns", "x"), false); err != nil {
		t.Fatal(err)
	}
	e.create("ns", "z", "red")
	for _, tc := range []struct {
		rev  int64
		want []string
	}{
		{rvOf(x), []string{"ns/x"}},
		{unreadable, []string{"ns/y"}},
		{e.rev(), []string{"ns/z"}},
	} {
		l := e.list(storage.ListOptions{ResourceVersion: rvs(tc.rev), ResourceVersionMatch: exact})
		got := []string{}
		for _, it := range items(t, l.Items) {
			got = append(got, it.key)
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("list at %d: %v, want %v", tc.rev, got, tc.want)
		}
	}
}

// testCorruptWatch: an unreadable value never ends a watch; for watchers
// it is the object's absence.
func testCorruptWatch(t *testing.T, e *env) {
	s := e.watch(storage.ListOptions{ResourceVersion: rvs(e.rev())})

	x := e.create("w", "x", "red")
	s.expect(added(x))

	// The readable state leaves: a DELETED of it at the write's revision.
	r := e.putRaw("w", "x", badValue)
	ev := s.expect(want{watch.Deleted, "x", r})[0]
	if ev.Object.Spec != x.Spec || ev.Object.UID != x.UID {
		t.Errorf("DELETED carries %+v, want x's last readable state", ev.Object)
	}
	checkCorrupt(t, "the DELETED's Corrupt", corruptOf(ev), "w/x", r)

	// A key created unreadable, or unreadable over unreadable: a DELETED
	// built from the key, since the previous state cannot be told.
	r = e.putRaw("w", "y", badValue)
	ev = s.expect(want{watch.Deleted, "y", r})[0]
	checkKeyObject(t, ev.Object, "w", "y")
	checkCorrupt(t, "the DELETED's Corrupt", corruptOf(ev), "w/y", r)
	r = e.putRaw("w", "x", "{also not a widget")
	ev = s.expect(want{watch.Deleted, "x", r})[0]
	checkKeyObject(t, ev.Object, "w", "x")
	checkCorrupt(t, "the DELETED's Corrupt", corruptOf(ev), "w/x", r)

	// Other objects' events flow.
	z := e.create("w", "z", "red")
	s.expect(added(z))

	// A readable value over an unreadable one: the object appears again.
	x2 := e.putWidget(NewWidget("w", "x", "blue"))
	ev = s.expect(added(x2))[0]
	if ev.Object.Spec.Color != "blue" || ev.Corrupt != nil {
		t.Errorf("ADDED after repair: %+v (corrupt %v)", ev.Object, ev.Corrupt)
	}
	// And a readable value over that is an ordinary MODIFIED.
	x3 := e.update("w", "x", func(w *Widget) { w.Spec.Size = 3 })
	s.expect(modified(x3))

	// Deleting an unreadable value: a DELETED built from the key.
	e.putRaw("w", "x", badValue)
	s.next(1)
	if err := e.store.DeleteCorrupt(e.ctx, storage.Key("w", "y"), false); err != nil {
		t.Fatal(err)
	}
	ev = s.expect(want{watch.Deleted, "y", e.rev()})[0]
	checkKeyObject(t, ev.Object, "w", "y")
	if ev.Corrupt != nil {
		t.Errorf("DELETED of a deleted value carries Corrupt %v", ev.Corrupt)
	}
	z2 := e.update("w", "z", func(w *Widget) { w.Spec.Size = 2 })
	s.expect(modified(z2))
}

// testCorruptWatchSelector: a watcher hears of an unreadable value only if
// it may hold the object: the previous state matched, or only the key is
// known and it may match.
func testCorruptWatchSelector(t *testing.T, e *env) {
	web := e.watch(storage.ListOptions{ResourceVersion: rvs(e.rev()), Predicate: labelPred(t, "tier=web")})
	named := e.watch(storage.ListOptions{ResourceVersion: rvs(e.rev()), Predicate: fieldPred(t, "metadata.name=x")})

	x := e.create("w", "x", "red", "tier", "web")
	e.create("w", "y", "red", "tier", "db")
	web.expect(added(x))
	named.expect(added(x))

	rx := e.putRaw("w", "x", badValue) // matched: both drop it
	e.putRaw("w", "y", badValue)       // did not match: nobody held it
	rq := e.putRaw("w", "q", badValue) // only the key: labels may match, the name does not
	web.expect(want{watch.Deleted, "x", rx}, want{watch.Deleted, "q", rq})
	named.expect(want{watch.Deleted, "x", rx})

	// Repaired into the selection: ADDED.
	x2 := NewWidget("w", "x", "red", "tier", "web")
	x2.UID = x.UID
	e.putWidget(x2)
	web.expect(added(x2))
	named.expect(added(x2))
	// Nothing else came between.
	z := e.create("w", "z", "red", "tier", "web")
	web.expect(added(z))
	x3 := e.update("w", "x", func(w *Widget) { w.Spec.Size = 3 })
	named.expect(modified(x3))
}

// testCorruptWatchInitial: a watch's initial events leave unreadable
// values out, and its live events follow.
func testCorruptWatchInitial(t *testing.T, e *env) {
	a := e.create("w", "a", "red")
	e.putRaw("w", "bad", badValue)
	for i, opts := range []storage.ListOptions{
		{Namespace: "w"},
		{Namespace: "w", SendInitialEvents: ptr(true), ResourceVersionMatch: notOlderThan, AllowBookmarks: true},
	} {
		s := e.watch(opts)
		if i == 0 {
			s.expect(added(a))
		} else {
			initial := s.next(2) // a and the first round's c
			sortEvents(initial)
			checkEvents(t, initial, added(a), want{watch.Added, "c", 0})
		}
		if opts.AllowBookmarks {
			if end := s.next(1)[0]; end.Type != watch.Bookmark {
				t.Fatalf("after the initial events: %s %s, want the BOOKMARK", end.Type, end.Object.Name)
			}
		}
		name := "c"
		if i > 0 {
			name = "d"
		}
		c := e.create("w", name, "red")
		s.expect(added(c))
	}
}

// testDeleteCorrupt: the unsafe delete removes only values that do not
// decode.
func testDeleteCorrupt(t *testing.T, e *env) {
	a := e.create("ns", "a", "red")
	for _, dryRun := range []bool{true, false} {
		if err := e.store.DeleteCorrupt(e.ctx, storage.Key("ns", "a"), dryRun); !errors.Is(err, storage.ErrNotCorrupt) {
			t.Errorf("unsafe delete (dry run %v) of a readable object: %v, want ErrNotCorrupt", dryRun, err)
		} else if se, _ := storage.AsError(err); se.StoredKey != Prefix+"ns/a" {
			t.Errorf("ErrNotCorrupt names %q, want the etcd key %q", se.StoredKey, Prefix+"ns/a")
		}
		if err := e.store.DeleteCorrupt(e.ctx, storage.Key("ns", "missing"), dryRun); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("unsafe delete (dry run %v) of a missing key: %v, want ErrNotFound", dryRun, err)
		}
	}
	if got, err := e.store.Get(e.ctx, storage.Key("ns", "a"), storage.GetOptions{}); err != nil || got.UID != a.UID {
		t.Fatalf("readable object after a refused unsafe delete: %+v, %v", got, err)
	}
	if err := e.store.DeleteCorrupt(e.ctx, "ns/a/b", false); !errors.Is(err, storage.ErrInvalidKey) {
		t.Errorf("unsafe delete of an invalid key: %v, want ErrInvalidKey", err)
	}

	badRev := e.putRaw("ns", "bad", badValue)
	if err := e.store.DeleteCorrupt(e.ctx, storage.Key("ns", "bad"), true); err != nil {
		t.Fatalf("unsafe delete, dry run: %v", err)
	}
	_, err := e.store.Get(e.ctx, storage.Key("ns", "bad"), storage.GetOptions{})
	checkCorrupt(t, "get after a dry run", err, "ns/bad", badRev)
	if err := e.store.DeleteCorrupt(e.ctx, storage.Key("ns", "bad"), false); err != nil {
		t.Fatalf("unsafe delete: %v", err)
	}
	if _, err := e.store.Get(e.ctx, storage.Key("ns", "bad"), storage.GetOptions{}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("get after the unsafe delete: %v, want ErrNotFound", err)
	}
	// The name is free again.
	e.create("ns", "bad", "red")
}

// corruptOf is ev.Corrupt as an error, nil when unset.
func corruptOf(ev storage.Event[*Widget]) error {
	if ev.Corrupt == nil {
		return nil
	}
	return ev.Corrupt
}

// checkKeyObject fails the test unless obj is built from the key alone.
func checkKeyObject(t *testing.T, obj *Widget, ns, name string) {
	t.Helper()
	checkKind(t, obj)
	if obj.Namespace != ns || obj.Name != name || obj.UID != "" || obj.Spec != (WidgetSpec{}) {
		t.Errorf("DELETED carries %+v, want an object built from the key %s/%s", obj, ns, name)
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}
