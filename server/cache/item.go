package cache

import (
	"sync/atomic"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/resource"
)

// item is one version of one object: the decoded object, its encoding,
// and what selectors test, all computed once when the version enters the
// cache. Items are shared by the state, the history, lists and watchers and
// never change, except for the encodings made on first use (encodings.go)
// and the ADDED frame made on demand (sharedFrame).
type item[O resource.Object] struct {
	key string // storage key: "namespace/name", or "name" if cluster-scoped
	ns  string
	obj O // read-only
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
