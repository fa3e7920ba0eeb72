package e2e

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/apiserver"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	apiloomserver "github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/snapshot"
	"github.com/apiloom/apiloom/server/testserver"
)

// Phases of the snapshot, as writers see them around each write.
const (
	beforeSnapshot int32 = iota
	duringSnapshot
	afterSnapshot
)

// ack is one acknowledged create and the snapshot's phase just before it
// was sent and just after it was acknowledged.
type ack struct {
	name, rv              string
	sentPhase, ackedPhase int32
}

// TestSnapshotSaveAndRestore backs a server up with `apiloom snapshot
// save` while writers and an informer run, restores the snapshot with
// `apiloom snapshot restore` into a new data directory (with the old one's
// certificates and token, as docs/backup.md says), and starts
// a server on it at the same address. Every write acknowledged before the
// save began is there with its resourceVersion, none sent after it ended
// is, and the informer, which saw those later writes, is told 410 and
// relists to the restored set.
func TestSnapshotSaveAndRestore(t *testing.T) {
	if externalEtcd() != nil {
		t.Skip("restores the embedded etcd; an external etcd is restored with etcdutl (docs/backup.md)")
	}
	const ns = "backup"
	oldDir, newDir := t.TempDir(), filepath.Join(t.TempDir(), "restored")
	file := filepath.Join(t.TempDir(), "snapshot.db")
	ctx := t.Context()

	var port int
	var cfg *rest.Config
	var acks []ack
	var expired atomic.Int32 // 410s the informer's watch got
	var relists atomic.Int32 // lists served to the informer after the first server stopped
	var stopped atomic.Bool
	var informer cache.SharedIndexInformer
	informerCtx, stopInformer := context.WithCancel(ctx)
	var informerDone chan struct{}
	defer func() {
		stopInformer()
		if informerDone != nil {
			<-informerDone
		}
	}()

	t.Run("first server", func(t *testing.T) {
		ts, cs := startServer(t, testserver.WithDataDir(oldDir))
		ts.CreateNamespaces(t, ns)
		dbs := cs.ExampleV1().Databases(ns)
		var phase atomic.Int32
		var mu sync.Mutex
		record := func(a ack) { mu.Lock(); acks = append(acks, a); mu.Unlock() }
		create := func(name string) {
			sent := phase.Load()
			d, err := dbs.Create(ctx, newDatabase(name), metav1.CreateOptions{})
			if err != nil {
				t.Errorf("create %s: %v", name, err)
				return
			}
			record(ack{name: name, rv: d.ResourceVersion, sentPhase: sent, ackedPhase: phase.Load()})
		}
		for i := range 20 {
			create(fmt.Sprintf("before-%d", i))
		}

		// The informer outlives this server: it talks to whatever serves
		// this address with this CA and token.
		cfg = rest.CopyConfig(ts.Config)
		_, portStr, _ := net.SplitHostPort(ts.Server.Address())
		port, _ = strconv.Atoi(portStr)
		informerCS := versioned.NewForConfigOrDie(cfg).ExampleV1().Databases(ns)
		// The 410 comes as the watch's error event (the reflector then
		// relists quietly) or as the watch request's answer (then it goes
		// to the watch error handler): both are counted.
		lw := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				l, err := informerCS.List(ctx, o)
				if err == nil && stopped.Load() {
					relists.Add(1)
				}
				return l, err
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				w, err := informerCS.Watch(ctx, o)
				if err != nil {
					return nil, err
				}
				if stopped.Load() && o.SendInitialEvents != nil && *o.SendInitialEvents {
					relists.Add(1) // a watch-list: the list, streamed
				}
				return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
					if ev.Type == watch.Error && apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)) {
						expired.Add(1)
					}
					return ev, true
				}), nil
			},
		}
		informer = cache.NewSharedIndexInformer(lw, &examplev1.Database{}, 0, cache.Indexers{})
		if err := informer.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				expired.Add(1)
			}
			cache.DefaultWatchErrorHandler(ctx, r, err)
		}); err != nil {
			t.Fatal(err)
		}
		informerDone = make(chan struct{})
		go func() { defer close(informerDone); informer.RunWithContext(informerCtx) }()
		if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
			t.Fatal("informer did not sync")
		}

		// Writers run through the snapshot.
		stopWriters := make(chan struct{})
		var writers sync.WaitGroup
		var afterWrites atomic.Int32
		for w := range 3 {
			writers.Go(func() {
				for n := 0; ; n++ {
					select {
					case <-stopWriters:
						return
					default:
					}
					sent := phase.Load()
					create(fmt.Sprintf("w%d-%d", w, n))
					if sent == afterSnapshot {
						afterWrites.Add(1)
					}
				}
			})
		}
		// Some writes first, so that the snapshot starts amid them.
		eventually(t, "writers to write", func(context.Context) (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			return len(acks) >= 40, nil
		})
		phase.Store(duringSnapshot)
		var stderr bytes.Buffer
		if code := apiloomserver.Command(ctx, "apiloom", apiserver.Install, []string{"snapshot", "save", file, "--data-dir", oldDir}, &stderr); code != 0 {
			t.Fatalf("snapshot save: exit %d: %s", code, stderr.String())
		}
		phase.Store(afterSnapshot)
		eventually(t, "writes after the snapshot", func(context.Context) (bool, error) { return afterWrites.Load() >= 10, nil })
		close(stopWriters)
		writers.Wait()
		for i := range 5 {
			create(fmt.Sprintf("after-%d", i))
		}
		// The informer has seen every write, those the restore will undo too.
		want := map[string]string{}
		for _, a := range acks {
			want[a.name] = a.rv
		}
		waitInformer(t, informer, "every write", want)
	}) // the first server stops here; the informer keeps retrying
	stopped.Store(true)
	if t.Failed() {
		return
	}

	var stderr bytes.Buffer
	if code := apiloomserver.Command(ctx, "apiloom", apiserver.Install, []string{"snapshot", "restore", file, "--data-dir", newDir}, &stderr); code != 0 {
		t.Fatalf("snapshot restore: exit %d: %s", code, stderr.String())
	}
	for _, name := range []string{"pki", "admin-token", "kubeconfig"} {
		if _, err := os.Stat(filepath.Join(newDir, name)); !os.IsNotExist(err) {
			t.Fatalf("restore made %s (%v); it should make etcd/ only", name, err)
		}
	}
	if err := os.CopyFS(filepath.Join(newDir, "pki"), os.DirFS(filepath.Join(oldDir, "pki"))); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"admin-token", "kubeconfig"} {
		b, err := os.ReadFile(filepath.Join(oldDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(newDir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	_, cs := startServer(t, testserver.WithDataDir(newDir), func(o *apiloomserver.Options) { o.SecurePort = port })
	list, err := cs.ExampleV1().Databases(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	restored := map[string]string{}
	for _, d := range list.Items {
		restored[d.Name] = d.ResourceVersion
	}
	var must, mustNot, either int
	for _, a := range acks {
		rv, ok := restored[a.name]
		switch {
		case a.ackedPhase == beforeSnapshot:
			must++
			if !ok || rv != a.rv {
				t.Errorf("%s, acknowledged at %s before the snapshot began: restored %v at %q", a.name, a.rv, ok, rv)
			}
		case a.sentPhase == afterSnapshot:
			mustNot++
			if ok {
				t.Errorf("%s, sent after the snapshot ended: restored at %s", a.name, rv)
			}
		default:
			either++
			if ok && rv != a.rv {
				t.Errorf("%s: restored at %s, acknowledged at %s", a.name, rv, a.rv)
			}
		}
	}
	if len(restored) > must+either {
		t.Errorf("restored %d objects; only %d were written before the snapshot ended", len(restored), must+either)
	}
	t.Logf("%d writes acknowledged before the snapshot, %d during it (%d restored), %d after; list at %s",
		must, either, len(restored)-must, mustNot, list.ResourceVersion)

	// The informer relisted and holds the restored set. Whether it was
	// told 410 depends on how its reflector met the outage: a watch
	// resumed at a resourceVersion from before the restore is (checked
	// below); a reflector that gave up its watch while the server was down
	// relists anyway.
	waitInformer(t, informer, "the restored set", restored)
	if relists.Load() == 0 {
		t.Error("the informer converged without relisting")
	}
	t.Logf("the informer relisted %d times after the restart, after %d 410s", relists.Load(), expired.Load())

	// A watch from before the restore is expired too, and so is a list at
	// exactly an old resourceVersion.
	old := acks[len(acks)-1].rv
	if _, err := cs.ExampleV1().Databases(ns).List(ctx, metav1.ListOptions{ResourceVersion: acks[0].rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact}); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Errorf("exact list at %s: %v; want 410 Expired", acks[0].rv, err)
	}
	w, err := cs.ExampleV1().Databases(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: old})
	if err == nil {
		defer w.Stop()
		select {
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type != watch.Error || !apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)) {
				t.Errorf("watch at %s: %v %v %+v; want 410 Expired", old, ok, ev.Type, ev.Object)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("watch at %s: no event; want 410 Expired", old)
		}
	} else if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Errorf("watch at %s: %v; want 410 Expired", old, err)
	}
}

// waitInformer waits up to a minute (the reflector backs off while the
// server is down) for informer's store to hold exactly want, names and
// resourceVersions.
func waitInformer(t *testing.T, informer cache.SharedIndexInformer, what string, want map[string]string) {
	t.Helper()
	var got map[string]string
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		got = map[string]string{}
		for _, o := range informer.GetStore().List() {
			d := o.(*examplev1.Database)
			got[d.Name] = d.ResourceVersion
		}
		return maps.Equal(got, want), nil
	})
	if err != nil {
		var missing, extra []string
		for n := range want {
			if got[n] != want[n] {
				missing = append(missing, n+"@"+want[n])
			}
		}
		for n := range got {
			if _, ok := want[n]; !ok {
				extra = append(extra, n)
			}
		}
		slices.Sort(missing)
		slices.Sort(extra)
		t.Fatalf("informer never held %s: missing or at another version %v, extra %v", what, missing, extra)
	}
}

// TestScheduledSnapshots: a server with a one-second schedule takes
// verified snapshots of its embedded etcd into --etcd-snapshot-dir and
// keeps the newest --etcd-snapshot-retention.
func TestScheduledSnapshots(t *testing.T) {
	if externalEtcd() != nil {
		t.Skip("scheduled snapshots are off with --etcd-servers by default")
	}
	dir := filepath.Join(t.TempDir(), "snapshots")
	ts, cs := startServer(t, func(o *apiloomserver.Options) {
		o.Snapshots.Schedule, o.Snapshots.Retention, o.Snapshots.Dir = "@every 1s", 2, dir
	})
	ts.CreateNamespaces(t, "scheduled")
	if _, err := cs.ExampleV1().Databases("scheduled").Create(t.Context(), newDatabase("kept"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var names []string
	seen := map[string]bool{}
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return false, nil
		}
		names = names[:0]
		for _, e := range entries {
			if filepath.Ext(e.Name()) == ".db" {
				names = append(names, e.Name())
				seen[e.Name()] = true
			}
		}
		// The new snapshot is whole before the oldest is deleted: for a
		// moment there are retention+1.
		if len(names) > 3 {
			return false, fmt.Errorf("%d snapshots kept, retention 2: %v", len(names), names)
		}
		return len(seen) >= 4 && len(names) <= 2, nil // two have been pruned
	})
	if err != nil {
		t.Fatalf("scheduled snapshots: %v (seen %v)", err, slices.Sorted(maps.Keys(seen)))
	}
	// The newest may be pruned by the next one as soon as it is read; the
	// one checked is the older of the two kept.
	slices.Sort(names)
	info, err := snapshot.Verify(filepath.Join(dir, names[0]))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err == nil && info.Keys == 0 {
		t.Fatalf("%s holds no keys", names[0])
	}
}
