package cache

import (
	"reflect"
	"sync/atomic"
	"unsafe"
	"weak"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/wire"
)

// item is one version of one object: its encoding and what selectors
// test, computed once when the version enters the cache, and its decoded
// object, made from the encoding when asked for (object). Items are shared
// by the state, the history, lists and watchers and never change, except
// for the encodings made on first use (encodings.go), the ADDED frame
// made on demand (sharedFrame) and the decoded object.
//
// The cache keeps one copy of each object: its JSON, in the frame. Every
// hot path reads the bytes (a JSON list at RV "0", a watch's fan-out, a
// JSON GET; labels and fields for selectors are kept apart, their strings
// pointing into the frame), and the decoded object, which only in-process
// readers, Tables, metadata-only lists and the other formats need, is made
// again from the frame on demand (a decode of about 1 KiB of JSON, its
// strings pointing into the frame). It is held strongly while the item is
// what an event in the history window carries (pinned), so that every
// in-process watcher of a recent event gets the same object, made once,
// and otherwise weakly, shared while someone uses it. Measured at 100,000
// objects of about 1 KiB shaped like the load tool's (BenchmarkItemHeap),
// the decoded objects were 29% of the items' live heap (992 of 3,416
// bytes an object) although their strings already pointed into the frame;
// the frames cannot go instead: every list and watch would encode again,
// and the objects' strings would need copies of their own. See
// docs/benchmarks.md.
type item[O resource.Object] struct {
	key string // storage key: "namespace/name", or "name" if cluster-scoped
	ns  string
	// newObj makes the empty object the JSON is decoded into; ref is the
	// decoded object, nil until first asked for unless the item is pinned
	// or kept (object).
	newObj func() O
	ref    atomic.Pointer[objectRef[O]]
	kept   bool // the object is held for the item's life: raw does not alias (DecodeAliasing)
	// labels and fields are what label and field selectors match.
	labels labels.Set
	fields fieldSet
	// frame is the watch frame of the event that made this version, of
	// type frameType (ADDED or MODIFIED; ADDED for listed objects), and raw
	// the object's JSON inside it.
	frame     []byte
	frameType watch.EventType
	raw       []byte

	added sharedFrame // the ADDED frame when frameType is MODIFIED

	alt atomic.Pointer[altEncodings] // encodings besides JSON (encodings.go)
	// pinned: an event in the history window carries this item, which
	// holds its encodings besides JSON meanwhile (altEncodings).
	pinned atomic.Bool
}

// objectRef is a decoded object, held strongly (held) or weakly.
type objectRef[O resource.Object] struct {
	held   bool
	strong O
	weak   weak.Pointer[byte]
}

// object returns the item's decoded object, read-only: the one held, or
// one decoded from raw. Decodes racing for an item all return correct
// objects; the last one is the one kept.
func (it *item[O]) object() O {
	if r := it.ref.Load(); r != nil {
		if r.held {
			return r.strong
		}
		if obj, ok := fromWeak[O](r.weak); ok {
			return obj
		}
	}
	obj := it.newObj()
	if !wire.DecodeAliasing(it.raw, obj) {
		// Never: an item whose JSON does not alias is kept.
		panic("cache: an item's JSON no longer decodes")
	}
	it.hold(obj)
	return obj
}

// hold makes obj the item's object: strongly if the item is pinned or
// kept, weakly otherwise.
func (it *item[O]) hold(obj O) {
	r := &objectRef[O]{held: true, strong: obj}
	if !it.kept && !it.pinned.Load() {
		r = weakRef(obj)
	}
	it.ref.Store(r)
	if r.held && !it.kept && !it.pinned.Load() {
		// unpin ran after pinned was read above and may have missed r.
		it.ref.CompareAndSwap(r, weakRef(obj))
	}
}

// unpinObject holds the object weakly once the item has left the window.
// pinned must be false already.
func (it *item[O]) unpinObject() {
	if r := it.ref.Load(); r != nil && r.held && !it.kept {
		it.ref.CompareAndSwap(r, weakRef(r.strong))
	}
}

// weakRef is a weak reference to obj; an object type that is not a
// pointer (no resource's) is held strongly instead.
func weakRef[O resource.Object](obj O) *objectRef[O] {
	if reflect.TypeFor[O]().Kind() != reflect.Pointer {
		return &objectRef[O]{held: true, strong: obj}
	}
	p := *(*unsafe.Pointer)(unsafe.Pointer(&obj))
	return &objectRef[O]{weak: weak.Make((*byte)(p))}
}

// fromWeak is the object w refers to, if it is still alive.
func fromWeak[O resource.Object](w weak.Pointer[byte]) (O, bool) {
	var obj O
	p := w.Value()
	if p == nil {
		return obj, false
	}
	*(*unsafe.Pointer)(unsafe.Pointer(&obj)) = unsafe.Pointer(p)
	return obj, true
}

// addedFrame is the frame that announces this version as ADDED: the
// initial events of a watch, and a MODIFIED event for a watcher whose
// selector the object has just entered.
func (it *item[O]) addedFrame() []byte {
	if it.frameType == watch.Added {
		return it.frame
	}
	return it.added.get(func() []byte {
		frame, _ := newFrame(watch.Added, it.raw)
		return frame
	})
}

// addedEvent is the ADDED event of this version, without the decoded
// object unless withObject (storage.ListOptions.Encoded).
func (it *item[O]) addedEvent(withObject bool) storage.Event[O] {
	ev := storage.Event[O]{Type: watch.Added, Frame: it.addedFrame(), Encodings: it.addedEncodings()}
	if withObject {
		ev.Object = it.object()
	}
	return ev
}

// fieldSet is an item's selectable fields as key, value pairs in one
// slice: a handful of fields held for every item, where a map (what the
// definition returns) costs about three times as much memory (the heap
// profile at 100,000 objects had 43 MiB in the maps).
type fieldSet []string

// compactFields is f as a fieldSet.
func compactFields(f fields.Set) fieldSet {
	s := make(fieldSet, 0, 2*len(f))
	for k, v := range f {
		s = append(s, k, v)
	}
	return s
}

// Has implements fields.Fields.
func (s fieldSet) Has(field string) bool {
	for i := 0; i < len(s); i += 2 {
		if s[i] == field {
			return true
		}
	}
	return false
}

// Get implements fields.Fields.
func (s fieldSet) Get(field string) string {
	for i := 0; i < len(s); i += 2 {
		if s[i] == field {
			return s[i+1]
		}
	}
	return ""
}

// matcher is a watcher's or list's filter: namespace, labels and fields.
// The zero matcher matches everything.
type matcher struct {
	ns    string // "" is every namespace
	label labels.Selector
	field fields.Selector
}

// newMatcher drops empty selectors, so that the common unfiltered case
// costs one comparison.
func newMatcher(ns string, label labels.Selector, field fields.Selector) matcher {
	m := matcher{ns: ns}
	if label != nil && !label.Empty() {
		m.label = label
	}
	if field != nil && !field.Empty() {
		m.field = field
	}
	return m
}

// selective reports whether the matcher has a label or field selector.
func (m *matcher) selective() bool { return m.label != nil || m.field != nil }

// matches reports whether it passes m's label and field selectors; the
// namespace is checked by the caller, once per event.
func matches[O resource.Object](m *matcher, it *item[O]) bool {
	if m.label != nil && !m.label.Matches(it.labels) {
		return false
	}
	return m.field == nil || m.field.Matches(it.fields)
}
