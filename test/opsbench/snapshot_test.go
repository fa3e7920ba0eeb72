package opsbench

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/apiloom/apiloom/generated/apiserver"
	apiloomserver "github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/snapshot"
	"github.com/apiloom/apiloom/server/testserver"
)

// The worst case of scheduled snapshots for writes: one every second
// (the smallest period the schedule takes), each copying the whole
// database while the creates run.
func init() {
	configurations = append(configurations, configuration{
		name: "snapshots-every-1s",
		options: func(b *testing.B) []testserver.Option {
			dir := b.TempDir()
			return []testserver.Option{func(o *apiloomserver.Options) {
				o.Snapshots.Schedule, o.Snapshots.Retention, o.Snapshots.Dir = "@every 1s", 2, dir
			}}
		},
	})
}

// snapshotObjects is how many 1 KiB Secrets the snapshot benchmarks'
// etcd holds (a ~2 MB database).
const snapshotObjects = 1000

// BenchmarkSnapshot times one `snapshot save` (online, verified) and one
// `snapshot restore` (bump and compaction included) per op, of a server
// holding snapshotObjects Secrets.
func BenchmarkSnapshot(b *testing.B) {
	ts := testserver.Start(b, apiserver.Install)
	ts.CreateNamespaces(b, namespace)
	secrets := kubernetes.NewForConfigOrDie(ts.Config).CoreV1().Secrets(namespace)
	for i := range snapshotObjects {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s-%07d", i)}, Data: map[string][]byte{"key": payload}}
		if _, err := secrets.Create(b.Context(), s, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	target := snapshot.Target{Endpoints: []string{ts.Server.EtcdEndpoint()}}
	file := filepath.Join(b.TempDir(), "s.db")
	b.Run("save", func(b *testing.B) {
		var size int64
		for b.Loop() {
			info, err := snapshot.Save(b.Context(), target, file)
			if err != nil {
				b.Fatal(err)
			}
			size = info.Size
		}
		b.ReportMetric(float64(size), "bytes")
	})
	b.Run("restore", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "data")
		for b.Loop() {
			if _, err := snapshot.Restore(snapshot.RestoreOptions{File: file, DataDir: dir, EtcdDir: filepath.Join(dir, "etcd"), RevisionBump: snapshot.DefaultRevisionBump}, nil); err != nil {
				b.Fatal(err)
			}
			// Untimed: each restore preallocates a 64 MB WAL segment.
			b.StopTimer()
			if err := os.RemoveAll(dir); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
}
