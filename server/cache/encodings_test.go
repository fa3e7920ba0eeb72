package cache

import (
	"bytes"
	"runtime"
	"testing"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/wire"
)

// checkCBOR fails the test unless e's CBOR frame is e's object framed as
// e's type, the bytes wire encodes, and returns the frame.
func checkCBOR(t *testing.T, e storage.Event[*widget]) []byte {
	t.Helper()
	if e.Encodings == nil {
		t.Fatalf("%s %s: no encodings", e.Type, e.Object.Name)
	}
	obj, err := wire.EncodeObjectCBOR(e.Object, e.Object.GroupVersionKind())
	if err != nil {
		t.Fatal(err)
	}
	frame, err := e.Encodings.Frame(wire.CBOR)
	if err != nil {
		t.Fatal(err)
	}
	if want := wire.AppendCBORWatchFrame(nil, string(e.Type), obj); !bytes.Equal(frame, want) {
		t.Fatalf("%s %s: CBOR frame\n%x\nwant\n%x", e.Type, e.Object.Name, frame, want)
	}
	if got, err := e.Encodings.Object(wire.CBOR); err != nil || !bytes.Equal(got, obj) {
		t.Fatalf("%s %s: CBOR object %x, %v", e.Type, e.Object.Name, got, err)
	}
	return frame
}

// TestCBOREncodedOnce: the cache's events and lists carry each object's
// CBOR, made on the first request and then shared by every watcher and
// list, with the frame of the type each watcher sees.
func TestCBOREncodedOnce(t *testing.T) {
	h := newHarness(t)
	from := storage.FormatResourceVersion(h.cache.Revision())
	live1 := h.watch(storage.ListOptions{ResourceVersion: from})
	live2 := h.watch(storage.ListOptions{ResourceVersion: from})
	h.create("ns", "a")
	h.create("ns", "b")
	h.update("ns", "a", func(w *widget) { w.Spec.Size = 5 })
	h.delete("ns", "b")

	ev1, ev2 := next(t, live1, 4, false), next(t, live2, 4, false)
	for i, want := range []watch.EventType{watch.Added, watch.Added, watch.Modified, watch.Deleted} {
		if ev1[i].Type != want {
			t.Fatalf("event %d is %s, want %s", i, ev1[i].Type, want)
		}
		f1, f2 := checkCBOR(t, ev1[i]), checkCBOR(t, ev2[i])
		if !sameBytes(f1, f2) {
			t.Fatalf("event %d: each watcher got its own CBOR encoding", i)
		}
	}

	// A new watcher's initial ADDED of a, last MODIFIED, is the MODIFIED
	// version's CBOR framed as ADDED, made once too.
	initial1 := next(t, h.watch(storage.ListOptions{ResourceVersion: "0"}), 1, false)[0]
	initial2 := next(t, h.watch(storage.ListOptions{ResourceVersion: "0"}), 1, false)[0]
	if initial1.Type != watch.Added || initial1.Object.Spec.Size != 5 {
		t.Fatalf("initial event %s %+v", initial1.Type, initial1.Object.Spec)
	}
	if f1, f2 := checkCBOR(t, initial1), checkCBOR(t, initial2); !sameBytes(f1, f2) {
		t.Fatal("each initial event got its own CBOR encoding")
	}
	modified, _ := ev1[2].Encodings.Object(wire.CBOR)
	added, _ := initial1.Encodings.Object(wire.CBOR)
	if !sameBytes(modified, added) {
		t.Fatal("the ADDED frame of a MODIFIED version encoded the object again")
	}

	// Lists hand out the same encodings.
	list, err := h.cache.GetList(h.ctx, storage.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Encodings == nil {
		t.Fatalf("list of %d items, encodings %v", len(list.Items), list.Encodings)
	}
	inList, err := list.Encodings.At(0).Object(wire.CBOR)
	if err != nil || !sameBytes(inList, added) {
		t.Fatalf("the list encoded a again (%v)", err)
	}
	if _, err := list.Encodings.At(0).Frame(wire.Format(99)); err == nil {
		t.Fatal("an unknown format was encoded")
	}
}

// TestEncodingsKeptOnlyInTheWindow: an item keeps its encodings in a
// format not kept for life while an event in the history window carries
// it, garbage collections included, and only while someone uses them once
// its event has left the window; made again, they are the same bytes. The
// test widget has no protobuf methods, so CBOR stands for such a format.
func TestEncodingsKeptOnlyInTheWindow(t *testing.T) {
	cbor, _ := slot(wire.CBOR)
	formats[cbor].forLife = false
	t.Cleanup(func() { formats[cbor].forLife = true })
	h := newHarness(t, WithWindow(2))
	h.create("ns", "a")
	a := h.listedItem("a")
	before := cborFrame(t, a)
	runtime.GC()
	if again := cborFrame(t, a); !sameBytes(before, again) {
		t.Fatal("the encodings of an item whose event is in the window were made again")
	}

	h.pushOutOfTheWindow()
	if got := h.listedItem("a"); got != a {
		t.Fatal("a's item changed")
	}
	runtime.GC()
	if held, weakly := a.heldIn(cbor); held != nil || weakly != nil {
		t.Fatalf("a's encoding outlived its event's time in the window: held %p, weakly %p", held, weakly)
	}
	after, err := a.encodingIn(wire.CBOR)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after.frame) || sameBytes(before, after.frame) {
		t.Fatal("a's encoding, made again, is not a new copy of the same bytes")
	}
	// While a caller holds it, others share it.
	if again := cborFrame(t, a); !sameBytes(after.frame, again) {
		t.Fatal("two requests while the encoding was in use each encoded the item")
	}
	runtime.KeepAlive(after)
}

// TestCBORKeptForLife: CBOR, costly to make, stays with the item after its
// event has left the window, and is kept when first made after it.
func TestCBORKeptForLife(t *testing.T) {
	h := newHarness(t, WithWindow(2))
	h.create("ns", "a")
	h.create("ns", "b")
	a := h.listedItem("a")
	before := cborFrame(t, a)
	h.pushOutOfTheWindow()
	b := h.listedItem("b")
	bBefore := cborFrame(t, b)
	runtime.GC()
	if after := cborFrame(t, a); !sameBytes(before, after) {
		t.Fatal("the CBOR encoding was made again after the item's event left the window")
	}
	if after := cborFrame(t, b); !sameBytes(bBefore, after) {
		t.Fatal("the CBOR encoding first made outside the window was not kept")
	}
}

// cborFrame returns the item's CBOR frame as a list or an initial event
// sends it.
func cborFrame(t *testing.T, it *item[*widget]) []byte {
	t.Helper()
	frame, err := it.addedEncodings().Frame(wire.CBOR)
	if err != nil {
		t.Fatal(err)
	}
	return frame
}

// pushOutOfTheWindow writes two objects, whose events push the events
// before them out of a window of two.
func (h *harness) pushOutOfTheWindow() {
	h.create("ns", "pushed-1")
	h.create("ns", "pushed-2")
	h.listedItem("pushed-2")
}

// heldIn returns what the item holds, strongly and weakly, of its
// encoding in formats[i].
func (it *item[O]) heldIn(i int) (held, weakly *encoding) {
	a := it.alt.Load()
	if a == nil {
		return nil, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.slots[i].held.Load(), a.slots[i].weak.Value()
}

// listedItem returns the cache's item for ns/name, read by a consistent
// list (which waits for the cache to catch up with etcd).
func (h *harness) listedItem(name string) *item[*widget] {
	h.t.Helper()
	list, err := h.cache.GetList(h.ctx, storage.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	for i, obj := range list.Items {
		if obj.Name == name {
			return (*item[*widget])(list.Encodings.At(i).(*addedEncodings[*widget]))
		}
	}
	h.t.Fatalf("%s is not in the list", name)
	return nil
}

// BenchmarkHeldEncoding is what each watcher of a fan-out pays for an
// event's CBOR frame once it is made: every watcher asks for it at once.
func BenchmarkHeldEncoding(b *testing.B) {
	it := keptItem("ns/x", "ns", benchWidget("ns", "x", 7, "web"))
	it.frameType = watch.Modified
	it.pinned.Store(true)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := it.encodings().Frame(wire.CBOR); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
