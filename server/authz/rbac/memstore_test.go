package rbac

import (
	"context"
	"io"
	"slices"
	"strconv"
	"sync"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// memStore is an in-memory storage.Interface with the parts the
// authorizer uses: GetList and Watch over a log of events, and expire,
// which compacts the log so that its watchers end with ErrExpired.
// The other methods are not implemented (nil embedded interface).
type memStore[O resource.Object] struct {
	storage.Interface[O]

	mu        sync.Mutex // guards the fields below
	objs      map[key]O
	log       []storage.Event[O] // log[i] has revision i+1
	compacted int64              // watches from before it are expired
	watchers  []*memWatcher[O]
	lists     int // GetList calls
}

func newMemStore[O resource.Object]() *memStore[O] { return &memStore[O]{objs: map[key]O{}} }

func (m *memStore[O]) GetList(ctx context.Context, opts storage.ListOptions) (*storage.List[O], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lists++
	out := &storage.List[O]{ResourceVersion: int64(len(m.log))}
	for _, o := range m.objs {
		out.Items = append(out.Items, o)
	}
	return out, nil
}

func (m *memStore[O]) Watch(ctx context.Context, opts storage.ListOptions) (storage.Watcher[O], error) {
	rv, err := strconv.ParseInt(opts.ResourceVersion, 10, 64)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if rv < m.compacted {
		return nil, &storage.Error{Err: storage.ErrExpired, ResourceVersion: rv}
	}
	w := &memWatcher[O]{m: m, next: int(rv)}
	m.watchers = append(m.watchers, w)
	return w, nil
}

// put stores o (a copy) and tells the watchers.
func (m *memStore[O]) put(o O) {
	o = o.DeepCopyObject().(O)
	m.mu.Lock()
	defer m.mu.Unlock()
	k := key{o.GetNamespace(), o.GetName()}
	typ := watch.Added
	if _, ok := m.objs[k]; ok {
		typ = watch.Modified
	}
	o.SetResourceVersion(strconv.Itoa(len(m.log) + 1))
	m.objs[k] = o
	m.appendLocked(storage.Event[O]{Type: typ, Object: o})
}

func (m *memStore[O]) remove(ns, name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := key{ns, name}
	o, ok := m.objs[k]
	if !ok {
		return
	}
	delete(m.objs, k)
	m.appendLocked(storage.Event[O]{Type: watch.Deleted, Object: o})
}

// expire compacts the log: current watchers end with ErrExpired, and a
// watch from any revision seen so far is refused.
func (m *memStore[O]) expire() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.compacted = int64(len(m.log))
	for _, w := range m.watchers {
		w.expired = true
		w.wakeLocked()
	}
}

// listCount is how many times the store was listed.
func (m *memStore[O]) listCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lists
}

// m.mu must be held.
func (m *memStore[O]) appendLocked(ev storage.Event[O]) {
	m.log = append(m.log, ev)
	for _, w := range m.watchers {
		w.wakeLocked()
	}
}

type memWatcher[O resource.Object] struct {
	m *memStore[O]
	// guarded by m.mu:
	next             int // index in m.log of the next event to deliver
	expired, stopped bool
	wake             func()
}

func (w *memWatcher[O]) Poll(ctx context.Context, buf []storage.Event[O]) ([]storage.Event[O], error) {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	switch {
	case w.stopped:
		return buf, io.EOF
	case w.expired:
		return buf, &storage.Error{Err: storage.ErrExpired}
	}
	buf = append(buf, w.m.log[w.next:]...)
	w.next = len(w.m.log)
	return buf, ctx.Err()
}

func (w *memWatcher[O]) NotifyOnce(wake func()) {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	w.wake = wake
	if w.stopped || w.expired || w.next < len(w.m.log) {
		w.wakeLocked()
	}
}

func (w *memWatcher[O]) Stop() {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	w.stopped = true
	w.m.watchers = slices.DeleteFunc(w.m.watchers, func(x *memWatcher[O]) bool { return x == w })
	w.wakeLocked()
}

// w.m.mu must be held.
func (w *memWatcher[O]) wakeLocked() {
	if w.wake != nil {
		wake := w.wake
		w.wake = nil
		wake()
	}
}

// memSources are in-memory stores of the four kinds.
type memSources struct {
	roles        *memStore[*rbacv1.Role]
	roleBindings *memStore[*rbacv1.RoleBinding]
	clusterRoles *memStore[*rbacv1.ClusterRole]
	crbs         *memStore[*rbacv1.ClusterRoleBinding]
}

func newMemSources() *memSources {
	return &memSources{newMemStore[*rbacv1.Role](), newMemStore[*rbacv1.RoleBinding](),
		newMemStore[*rbacv1.ClusterRole](), newMemStore[*rbacv1.ClusterRoleBinding]()}
}

func (s *memSources) sources() Sources {
	return Sources{Roles: s.roles, RoleBindings: s.roleBindings, ClusterRoles: s.clusterRoles, ClusterRoleBindings: s.crbs}
}

// add stores each of objs in the store of its kind.
func (s *memSources) add(t testing.TB, objs ...runtime.Object) {
	t.Helper()
	for _, o := range objs {
		switch o := o.(type) {
		case *rbacv1.Role:
			s.roles.put(o)
		case *rbacv1.RoleBinding:
			s.roleBindings.put(o)
		case *rbacv1.ClusterRole:
			s.clusterRoles.put(o)
		case *rbacv1.ClusterRoleBinding:
			s.crbs.put(o)
		default:
			t.Fatalf("not an RBAC object: %T", o)
		}
	}
}

// runAuthorizer starts an authorizer over s, waits until it has synced
// and stops it when the test ends.
func runAuthorizer(t testing.TB, s *memSources, opts ...Option) *Authorizer {
	t.Helper()
	a := New(s.sources(), opts...)
	// t.Context ends before cleanups run: Run has returned when the
	// test is over.
	done := make(chan struct{})
	go func() { defer close(done); a.Run(t.Context()) }()
	t.Cleanup(func() { <-done })
	if err := a.WaitForSync(t.Context()); err != nil {
		t.Fatal(err)
	}
	return a
}
