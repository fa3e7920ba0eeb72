package convert

import (
	"sync"

	"k8s.io/apimachinery/pkg/watch"
)

// defaultFrameMemo is how many converted events a version keeps encoded.
// Watchers that keep up read the same few recent events, so a window far
// smaller than the watch cache's history serves them all; a watcher
// further behind converts and encodes its events again, which costs it
// time, never correctness.
const defaultFrameMemo = 1024

// memoKey names one event of the inner storage's shared history: its type
// and the object's key and resourceVersion. The watch cache makes one
// event, with one object, of each, and hands it to every watcher.
type memoKey struct {
	typ      watch.EventType
	ns, name string
	rv       string
}

type memoEntry struct {
	obj   any // the converted object, read-only
	frame []byte
}

// frameMemo keeps the last converted events of one version, encoded, so
// that N watchers of the version cost one conversion and one encoding per
// event rather than N: the watch cache's encode-once, per version.
type frameMemo struct {
	// mu guards entries, ring and next.
	mu      sync.Mutex
	entries map[memoKey]memoEntry
	// ring holds the keys in entries in insertion order; next is where
	// the next one goes, evicting the oldest.
	ring []memoKey
	next int
}

func newFrameMemo(size int) *frameMemo {
	return &frameMemo{entries: make(map[memoKey]memoEntry, size), ring: make([]memoKey, 0, size)}
}

func (m *frameMemo) get(k memoKey) (any, []byte, bool) {
	m.mu.Lock()
	e, ok := m.entries[k]
	m.mu.Unlock()
	return e.obj, e.frame, ok
}

// put keeps an event's conversion. Two watchers converting the same event
// at once both put it: the second one's replaces the first, equal, one.
func (m *frameMemo) put(k memoKey, obj any, frame []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.entries[k]; ok {
		m.entries[k] = memoEntry{obj: obj, frame: frame}
		return
	}
	if len(m.ring) < cap(m.ring) {
		m.ring = append(m.ring, k)
	} else {
		delete(m.entries, m.ring[m.next])
		m.ring[m.next] = k
		m.next = (m.next + 1) % len(m.ring)
	}
	m.entries[k] = memoEntry{obj: obj, frame: frame}
}
