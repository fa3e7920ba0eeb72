package storagetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/storage"
)

// eventTimeout bounds the wait for one expected event.
const eventTimeout = 10 * time.Second

// stream reads a watch for a test.
type stream struct {
	t       *testing.T
	ctx     context.Context
	w       storage.Watcher[*Widget]
	events  *storage.Blocking[*Widget] // w, read from this goroutine
	pending []storage.Event[*Widget]   // read from w, not yet consumed
	// skipBookmarks drops BOOKMARKs other than the initial-events-end one:
	// with AllowBookmarks an implementation may send them at any time.
	skipBookmarks bool
}

// next returns the next n events, failing the test if the watch ends or
// they do not arrive in time.
func (s *stream) next(n int) []storage.Event[*Widget] {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.ctx, eventTimeout)
	defer cancel()
	for len(s.pending) < n {
		have := len(s.pending)
		var err error
		s.pending, err = s.events.Next(ctx, s.pending)
		if err != nil {
			s.t.Fatalf("waiting for %d events, have %v: %v", n, describe(s.pending), err)
		}
		if s.skipBookmarks {
			kept := slices.DeleteFunc(s.pending[have:], isPeriodicBookmark)
			s.pending = s.pending[:have+len(kept)]
		}
	}
	out := s.pending[:n:n]
	s.pending = s.pending[n:]
	return out
}

// isPeriodicBookmark reports whether e is a BOOKMARK other than the one
// ending a watch-list's initial events.
func isPeriodicBookmark(e storage.Event[*Widget]) bool {
	return e.Type == watch.Bookmark && e.Object.Annotations[metav1.InitialEventsAnnotationKey] != "true"
}

// err reads until the watch fails and returns the error; events before it
// are discarded.
func (s *stream) err() error {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.ctx, eventTimeout)
	defer cancel()
	for {
		var err error
		s.pending, err = s.events.Next(ctx, s.pending[:0])
		if err != nil {
			if ctx.Err() != nil {
				s.t.Fatalf("watch did not fail in time")
			}
			return err
		}
	}
}

// want describes an expected event: its type, object name and, unless 0,
// resourceVersion.
type want struct {
	typ  watch.EventType
	name string
	rv   int64
}

func added(obj *Widget) want    { return want{watch.Added, obj.Name, rvOf(obj)} }
func modified(obj *Widget) want { return want{watch.Modified, obj.Name, rvOf(obj)} }
func deleted(obj *Widget) want  { return want{watch.Deleted, obj.Name, rvOf(obj)} }

func rvOf(obj *Widget) int64 {
	n, _ := storage.ParseResourceVersion(obj.ResourceVersion)
	return n
}

// expect reads len(ws) events and fails the test unless they match ws in
// order.
func (s *stream) expect(ws ...want) []storage.Event[*Widget] {
	s.t.Helper()
	got := s.next(len(ws))
	for i, w := range ws {
		if !w.matches(got[i]) {
			s.t.Fatalf("event %d: got %v, want %v\nall: %v", i, describe(got[i:i+1]), w, describe(got))
		}
	}
	return got
}

func (w want) matches(e storage.Event[*Widget]) bool {
	if e.Type != w.typ || e.Object.Name != w.name {
		return false
	}
	return w.rv == 0 || w.rv == rvOf(e.Object)
}

func (w want) String() string { return fmt.Sprintf("%s %s@%d", w.typ, w.name, w.rv) }

func describe(es []storage.Event[*Widget]) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = fmt.Sprintf("%s %s@%s", e.Type, e.Object.Name, e.Object.ResourceVersion)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
