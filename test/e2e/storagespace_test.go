package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/apiserver"
	apiloomserver "github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/registry"
	"github.com/apiloom/apiloom/server/testserver"
)

// bigDatabase is a Database carrying 200 KiB in an annotation (under
// Kubernetes' 256 KiB limit for all annotations), to fill etcd quickly.
func bigDatabase(name string) *examplev1.Database {
	d := newDatabase(name)
	d.Annotations = map[string]string{"example.apiloom.dev/filler": strings.Repeat("x", 200<<10)}
	return d
}

// insufficientStorage fails t unless err is the 507 for lack of space,
// with a message containing each of want.
func insufficientStorage(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		t.Fatalf("%s: %v, want a 507 Status", what, err)
	}
	s := st.Status()
	if s.Code != http.StatusInsufficientStorage || s.Reason != metav1.StatusReasonInternalError || s.Status != metav1.StatusFailure {
		t.Fatalf("%s: %d %s %q, want 507 InternalError", what, s.Code, s.Reason, s.Message)
	}
	for _, w := range want {
		if !strings.Contains(s.Message, w) {
			t.Errorf("%s: message %q lacks %q", what, s.Message, w)
		}
	}
}

// TestEtcdQuotaFull fills the embedded etcd's 32 MiB quota: creates and
// updates then get 507 with a message saying what to do, reads (get, list,
// watch) and deletes keep working, and once the objects are deleted the
// server recovers by itself (compaction, defragmentation, disarming the
// NOSPACE alarm): creates work again without a restart.
func TestEtcdQuotaFull(t *testing.T) {
	ts, cs := startServer(t, func(o *apiloomserver.Options) { o.EtcdQuotaBackendBytes = 32 << 20 })
	ts.CreateNamespaces(t, "shop")
	ctx := t.Context()
	dbs := cs.ExampleV1().Databases("shop")
	// One object's watch: the events of 30 MiB of objects would make the
	// test slow, not stronger.
	first := "big-0000"
	w, err := dbs.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + first})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// Fill until etcd refuses and the server's recovery, which looks at
	// once, leaves the alarm raised: when defragmenting makes the objects
	// fit (part of the quota was free pages), it disarms the alarm and
	// creates work again.
	steps := func(outcome string) float64 {
		return metric(t, ts.Config, "apiloom_etcd_nospace_recovery_steps_total", `outcome="`+outcome+`"`)
	}
	var names []string
	over, disarmed := steps("over_quota"), steps("disarmed")
	for full := false; !full; {
		name := fmt.Sprintf("big-%04d", len(names))
		_, err := dbs.Create(ctx, bigDatabase(name), metav1.CreateOptions{})
		if err == nil {
			names = append(names, name)
			continue
		}
		insufficientStorage(t, "create over the quota", err, "space quota", "--etcd-quota-backend-bytes", "deletes still work")
		// A look counted before this refusal but after the last one was
		// seen is recent enough: nothing was deleted in between.
		eventually(t, "the recovery to look at the alarm", func(context.Context) (bool, error) {
			full = steps("over_quota") > over
			return full || steps("disarmed") > disarmed, nil
		})
		over, disarmed = steps("over_quota"), steps("disarmed")
	}
	if len(names) < 100 {
		t.Fatalf("only %d objects of 200 KiB fit a 32 MiB quota", len(names))
	}
	expectTyped(t, w, watch.Added, names[:1])

	d, err := dbs.Get(ctx, first, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get over the quota: %v", err)
	}
	d.Spec.Replicas = 5
	_, err = dbs.Update(ctx, d, metav1.UpdateOptions{})
	insufficientStorage(t, "update over the quota", err, "space quota")
	list, err := dbs.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || len(list.Items) != 1 || list.RemainingItemCount == nil || int(*list.RemainingItemCount)+1 != len(names) {
		t.Fatalf("consistent list over the quota: %v, remaining %v, want %d objects", err, list.RemainingItemCount, len(names))
	}
	// The watch cache answers resourceVersion=0 whole, ignoring the limit,
	// as kube-apiserver's does.
	if list, err = dbs.List(ctx, metav1.ListOptions{ResourceVersion: "0", Limit: 1}); err != nil || len(list.Items) != len(names) {
		t.Fatalf("list (resourceVersion 0) over the quota: %v, %d items, want %d", err, len(list.Items), len(names))
	}
	w2, err := dbs.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + first, ResourceVersion: d.ResourceVersion})
	if err != nil {
		t.Fatalf("watch over the quota: %v", err)
	}
	defer w2.Stop()

	if err := dbs.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatalf("delete over the quota: %v", err)
	}
	expectTyped(t, w, watch.Deleted, names[:1])
	expectTyped(t, w2, watch.Deleted, names[:1])

	eventually(t, "creates to work again after the deletes", func(ctx context.Context) (bool, error) {
		_, err := dbs.Create(ctx, newDatabase(first), metav1.CreateOptions{})
		return err == nil, err
	})
	expectTyped(t, w, watch.Added, names[:1])
}

// expectTyped reads one event of type typ per name from w, in order.
func expectTyped(t *testing.T, w watch.Interface, typ watch.EventType, names []string) {
	t.Helper()
	for _, name := range names {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch ended waiting for %s %s", typ, name)
			}
			d, _ := ev.Object.(*examplev1.Database)
			if ev.Type != typ || d == nil || d.Name != name {
				t.Fatalf("watch event %s %v, want %s %s", ev.Type, ev.Object, typ, name)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no %s event for %s within 30s", typ, name)
		}
	}
}

// tmpfs mounts a tmpfs of size bytes for t, unmounted when t ends, or
// skips t when that is not possible (not root, or mount not permitted).
func tmpfs(t *testing.T, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d,mode=0700", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	// Registered before the server starts, so it runs after the server
	// stopped (cleanups run last-in first-out).
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fill writes a plain file in dir until dir's filesystem is full, and
// returns the file's path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler-rest")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for {
		if _, err := f.Write(chunk); errors.Is(err, syscall.ENOSPC) {
			return path
		} else if err != nil {
			t.Fatalf("fill %s: %v", dir, err)
		}
	}
}

// fillTo writes a plain file in dir until dir's filesystem has about
// leave bytes free, and returns the file's path.
func fillTo(t *testing.T, dir string, leave int64) string {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	if free <= leave {
		t.Fatalf("only %d bytes free in %s, cannot leave %d", free, dir, leave)
	}
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for n := free - leave; n > 0; n -= int64(len(chunk)) {
		if _, err := f.Write(chunk[:min(n, int64(len(chunk)))]); err != nil {
			t.Fatalf("fill %s: %v", dir, err)
		}
	}
	return path
}

// etcdClient dials the server's embedded etcd, as its admin would.
func etcdClient(t *testing.T, ts *testserver.TestServer) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{ts.Server.EtcdEndpoint()}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

const (
	testMinFree = 192 << 20 // the guard's threshold in the tmpfs tests
	tmpfsSize   = 512 << 20 // etcd takes about 130 MiB of it (two WAL segments)
)

// TestDiskFull puts the data directory on a 512 MiB tmpfs with the disk
// guard at 192 MiB and fills the disk to the last byte with plain files:
// the server stays up, writes (deletes included) answer 507 naming the disk, reads (get,
// list, watch) keep working, and the compactor writes nothing; once the
// file is removed, writes succeed again and the compactor resumes, with
// no restart. Without the guard etcd would die on its first failed commit
// and take the process, this test included, with it.
func TestDiskFull(t *testing.T) {
	dir := tmpfs(t, tmpfsSize)
	ts, cs := startServer(t, testserver.WithDataDir(filepath.Join(dir, "data")), testserver.WithCompactionInterval(100*time.Millisecond),
		func(o *apiloomserver.Options) { o.EtcdMinFreeDiskBytes = testMinFree })
	ts.CreateNamespaces(t, "shop")
	ctx := t.Context()
	dbs := cs.ExampleV1().Databases("shop")
	if _, err := dbs.Create(ctx, newDatabase("orders"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := dbs.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	expectTyped(t, w, watch.Added, []string{"orders"})

	// Writes admitted before the guard sees the disk fill (it rereads the
	// free space every 100ms) succeed, into the room the guard keeps; the
	// first refused one is the test. Then the rest of the disk is filled.
	filler := fillTo(t, dir, 150<<20)
	var refused error
	var admitted []string
	eventually(t, "writes to be refused", func(ctx context.Context) (bool, error) {
		name := fmt.Sprintf("refused-%d", len(admitted))
		if _, refused = dbs.Create(ctx, newDatabase(name), metav1.CreateOptions{}); refused == nil {
			admitted = append(admitted, name)
			return false, nil
		}
		insufficientStorage(t, "create on a full disk", refused, filepath.Join(dir, "data"), "--etcd-min-free-disk-bytes", "free space on that disk")
		if _, err := dbs.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("refused create left an object: %v", err)
		}
		return true, nil
	})
	expectTyped(t, w, watch.Added, admitted)
	rest := fill(t, dir)
	err = dbs.Delete(ctx, "orders", metav1.DeleteOptions{})
	insufficientStorage(t, "delete on a full disk", err, "--etcd-min-free-disk-bytes")

	if _, err := dbs.Get(ctx, "orders", metav1.GetOptions{}); err != nil {
		t.Errorf("get on a full disk: %v", err)
	}
	stored := append([]string{"orders"}, admitted...)
	for _, rv := range []string{"", "0"} {
		if list, err := dbs.List(ctx, metav1.ListOptions{ResourceVersion: rv}); err != nil || len(list.Items) != len(stored) {
			t.Errorf("list (resourceVersion %q) on a full disk: %v, want %d items", rv, err, len(stored))
		}
	}
	w2, err := dbs.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch on a full disk: %v", err)
	}
	defer w2.Stop()
	expectTyped(t, w2, watch.Added, stored)

	// The compactor (every 100ms) keeps trying and is refused; etcd's
	// revision does not move.
	etcd := etcdClient(t, ts)
	rev := etcdRevision(t, etcd)
	refusals := metric(t, ts.Config, "apiloom_etcd_write_refusals_total", `reason="disk"`)
	eventually(t, "the compactor to be refused three more times", func(ctx context.Context) (bool, error) {
		return metric(t, ts.Config, "apiloom_etcd_write_refusals_total", `reason="disk"`) >= refusals+3, nil
	})
	if got := etcdRevision(t, etcd); got != rev {
		t.Errorf("etcd's revision moved from %d to %d while the disk was full", rev, got)
	}

	for _, f := range []string{filler, rest} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "writes to work again after the files are removed", func(ctx context.Context) (bool, error) {
		_, err := dbs.Create(ctx, newDatabase("after"), metav1.CreateOptions{})
		return err == nil, err
	})
	expectTyped(t, w, watch.Added, []string{"after"})
	compacted := compactKeyVersion(t, etcd)
	eventually(t, "the compactor to run again", func(ctx context.Context) (bool, error) {
		return compactKeyVersion(t, etcd) > compacted, nil
	})
}

// TestStartOnFullDisk restarts a server on a disk that filled while it was
// down: between the guard's threshold and etcd's start floor (two WAL
// segments) it starts read-only and takes writes once space is freed;
// below the floor it refuses to start, saying why.
func TestStartOnFullDisk(t *testing.T) {
	dir := tmpfs(t, tmpfsSize)
	data := filepath.Join(dir, "data")
	withGuard := func(o *apiloomserver.Options) { o.EtcdMinFreeDiskBytes = testMinFree }
	t.Run("first start", func(t *testing.T) {
		ts, cs := startServer(t, testserver.WithDataDir(data), withGuard)
		ts.CreateNamespaces(t, "shop")
		if _, err := cs.ExampleV1().Databases("shop").Create(t.Context(), newDatabase("orders"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	filler := fillTo(t, dir, 100<<20)
	t.Run("below the start floor", func(t *testing.T) {
		o := apiloomserver.DefaultOptions()
		o.DataDir, o.SecurePort, o.EtcdMinFreeDiskBytes = data, 0, testMinFree
		reg := &registry.Registry{}
		apiserver.Install(reg)
		srv, err := apiloomserver.New(o, reg, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, stop := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- srv.Run(ctx) }()
		defer func() { stop(); <-done }()
		select {
		case err = <-done:
			done <- err // for the deferred wait
		case <-srv.Ready():
			t.Fatal("the server started on a disk below etcd's start floor")
		case <-time.After(60 * time.Second):
			t.Fatal("the server neither started nor failed within 60s")
		}
		if err == nil || !strings.Contains(err.Error(), "free space on it") || !strings.Contains(err.Error(), filepath.Join(data, "etcd")) {
			t.Fatalf("start below the floor: %v, want a refusal naming the disk", err)
		}
	})
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}

	filler = fillTo(t, dir, 160<<20)
	t.Run("read-only start", func(t *testing.T) {
		_, cs := startServer(t, testserver.WithDataDir(data), withGuard)
		dbs := cs.ExampleV1().Databases("shop")
		if _, err := dbs.Get(t.Context(), "orders", metav1.GetOptions{}); err != nil {
			t.Fatalf("get after a read-only start: %v", err)
		}
		_, err := dbs.Create(t.Context(), newDatabase("refused"), metav1.CreateOptions{})
		insufficientStorage(t, "create after a read-only start", err, "--etcd-min-free-disk-bytes")
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
		eventually(t, "writes to work once space is freed", func(ctx context.Context) (bool, error) {
			_, err := dbs.Create(ctx, newDatabase("after"), metav1.CreateOptions{})
			return err == nil, err
		})
	})
}

func etcdRevision(t *testing.T, c *clientv3.Client) int64 {
	t.Helper()
	resp, err := c.Get(t.Context(), "/", clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// compactKeyVersion is the version of the key compactors coordinate
// through; each compaction step that writes bumps it.
func compactKeyVersion(t *testing.T, c *clientv3.Client) int64 {
	t.Helper()
	resp, err := c.Get(t.Context(), "compact_rev_key")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return 0
	}
	return resp.Kvs[0].Version
}
