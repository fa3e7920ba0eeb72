package storagetest

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/storage"
)

// Config is what the suite needs from an implementation.
type Config struct {
	// NewStore returns the implementation under test, keeping Widgets
	// under Prefix through client. Required. It is called once per test,
	// each time with a client whose keys are isolated from other tests'
	// (the revision counter is shared). Resources the store holds are
	// released with t.Cleanup.
	NewStore func(t *testing.T, client *clientv3.Client) storage.Interface[*Widget]

	// Compact makes every revision below rev unavailable to store, so that
	// exact lists and watches from them fail with ErrExpired. nil compacts
	// etcd through client, which is enough for the etcd store; a cache
	// whose history outlives etcd's must also drop its own.
	Compact func(t *testing.T, client *clientv3.Client, store storage.Interface[*Widget], rev int64)

	// Etcd returns a client of the etcd-API server the suite runs on, for
	// all its tests; nil starts an embedded etcd. Another backend (kine)
	// comes in here.
	Etcd func(t *testing.T) *clientv3.Client

	// Skip names the suite's tests not run, with why: what a backend is
	// known to do otherwise (docs/backends.md).
	Skip map[string]string
}

// testTimeout bounds each test, so a watch that never delivers fails the
// test instead of hanging it.
const testTimeout = 30 * time.Second

// Run runs the conformance suite against cfg.NewStore. It starts one
// embedded etcd for all its tests, which run one after another.
func Run(t *testing.T, cfg Config) {
	if cfg.NewStore == nil {
		t.Fatal("storagetest: Config.NewStore is required")
	}
	var root *clientv3.Client
	if cfg.Etcd != nil {
		root = cfg.Etcd(t)
	} else {
		root = etcdtest.Start(t)
	}
	tests := []struct {
		name string
		fn   func(*testing.T, *env)
	}{
		{"Create", testCreate},
		{"Get", testGet},
		{"InvalidKeys", testInvalidKeys},
		{"GuaranteedUpdate", testGuaranteedUpdate},
		{"GuaranteedUpdateRetry", testGuaranteedUpdateRetry},
		{"GuaranteedUpdatePreconditions", testGuaranteedUpdatePreconditions},
		{"Delete", testDelete},
		{"DeletePreconditions", testDeletePreconditions},
		{"ListResourceVersions", testListResourceVersions},
		{"ListCompacted", testListCompacted},
		{"ListPagination", testListPagination},
		{"ListContinueErrors", testListContinueErrors},
		{"ListContinueExpired", testListContinueExpired},
		{"ListSelectors", testListSelectors},
		{"ListSelectorPagination", testListSelectorPagination},
		{"ListNamespace", testListNamespace},
		{"WatchFromResourceVersion", testWatchFromResourceVersion},
		{"WatchInitialState", testWatchInitialState},
		{"WatchList", testWatchList},
		{"WatchListOldResourceVersion", testWatchListOldResourceVersion},
		{"WatchNoInitialEvents", testWatchNoInitialEvents},
		{"WatchTooLargeResourceVersion", testWatchTooLargeResourceVersion},
		{"WatchPredicateTransitions", testWatchPredicateTransitions},
		{"WatchFieldSelector", testWatchFieldSelector},
		{"WatchNamespace", testWatchNamespace},
		{"WatchExpired", testWatchExpired},
		{"WatchStop", testWatchStop},
		{"WatchPollAndNotify", testWatchPollAndNotify},
		{"CorruptReads", testCorruptReads},
		{"CorruptListHistory", testCorruptListHistory},
		{"CorruptWatch", testCorruptWatch},
		{"CorruptWatchSelector", testCorruptWatchSelector},
		{"CorruptWatchInitial", testCorruptWatchInitial},
		{"DeleteCorrupt", testDeleteCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if why, ok := cfg.Skip[tc.name]; ok {
				t.Skip(why)
			}
			// Keys of the test's own, even on a database that several
			// runs of the suite share (make test-postgres).
			tc.fn(t, newEnv(t, root, cfg, "/"+t.Name()))
		})
	}
}

// env is one test's world: an isolated client, the store under test, and a
// record of every write made through it.
type env struct {
	t      *testing.T
	ctx    context.Context
	client *clientv3.Client
	store  storage.Interface[*Widget]
	cfg    Config
	log    history
}

func newEnv(t *testing.T, root *clientv3.Client, cfg Config, keyspace string) *env {
	t.Helper()
	c := NewClient(t, root, keyspace)
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return &env{t: t, ctx: ctx, client: c, store: cfg.NewStore(t, c), cfg: cfg}
}

// NewClient returns a new client to root's etcd whose KV, Watcher and Lease
// see only keys under keyspace (e.g. "/t1"), so tests sharing one etcd do
// not see each other's objects. The revision counter and compaction are
// shared. The client is closed when t ends.
func NewClient(t testing.TB, root *clientv3.Client, keyspace string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   root.Endpoints(),
		DialTimeout: 10 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	c.KV = namespace.NewKV(c.KV, keyspace)
	c.Watcher = namespace.NewWatcher(c.Watcher, keyspace)
	c.Lease = namespace.NewLease(c.Lease, keyspace)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// rev is etcd's current revision, read with a quorum.
func (e *env) rev() int64 {
	e.t.Helper()
	resp, err := e.client.Get(e.ctx, "revision-probe")
	if err != nil {
		e.t.Fatalf("read revision: %v", err)
	}
	return resp.Header.Revision
}

// compact makes revisions below rev unavailable.
func (e *env) compact(rev int64) {
	e.t.Helper()
	if e.cfg.Compact != nil {
		e.cfg.Compact(e.t, e.client, e.store, rev)
		return
	}
	if _, err := e.client.Compact(e.ctx, rev); err != nil {
		e.t.Fatalf("compact at %d: %v", rev, err)
	}
}

// create stores a new Widget and fails the test on error. labels are
// key, value pairs.
func (e *env) create(ns, name, color string, labels ...string) *Widget {
	e.t.Helper()
	w := NewWidget(ns, name, color, labels...)
	w.UID = types.UID("uid-" + ns + "-" + name)
	out, err := e.store.Create(e.ctx, storage.Key(ns, name), w)
	if err != nil {
		e.t.Fatalf("create %s/%s: %v", ns, name, err)
	}
	e.log.record(out, false)
	return out
}

// update changes a Widget with fn and fails the test on error.
func (e *env) update(ns, name string, fn func(*Widget)) *Widget {
	e.t.Helper()
	out, err := e.store.GuaranteedUpdate(e.ctx, storage.Key(ns, name), nil, func(w *Widget) (*Widget, error) {
		fn(w)
		return w, nil
	})
	if err != nil {
		e.t.Fatalf("update %s/%s: %v", ns, name, err)
	}
	e.log.record(out, false)
	return out
}

// delete deletes a Widget and fails the test on error.
func (e *env) delete(ns, name string) *Widget {
	e.t.Helper()
	out, err := e.store.Delete(e.ctx, storage.Key(ns, name), nil)
	if err != nil {
		e.t.Fatalf("delete %s/%s: %v", ns, name, err)
	}
	e.log.record(out, true)
	return out
}

// list lists and fails the test on error.
func (e *env) list(opts storage.ListOptions) *storage.List[*Widget] {
	e.t.Helper()
	l, err := e.store.GetList(e.ctx, opts)
	if err != nil {
		e.t.Fatalf("list %+v: %v", opts, err)
	}
	return l
}

// watch starts a watch and fails the test on error; it is stopped when the
// test ends.
func (e *env) watch(opts storage.ListOptions) *stream {
	e.t.Helper()
	w, err := e.store.Watch(e.ctx, opts)
	if err != nil {
		e.t.Fatalf("watch %+v: %v", opts, err)
	}
	e.t.Cleanup(w.Stop)
	return &stream{t: e.t, ctx: e.ctx, w: w, events: storage.NewBlocking(w), skipBookmarks: opts.AllowBookmarks}
}

// rv is the revision in obj's resourceVersion.
func rv(t *testing.T, obj *Widget) int64 {
	t.Helper()
	n, err := storage.ParseResourceVersion(obj.ResourceVersion)
	if err != nil || n <= 0 {
		t.Fatalf("%s/%s: resourceVersion %q is not a revision", obj.Namespace, obj.Name, obj.ResourceVersion)
	}
	return n
}
