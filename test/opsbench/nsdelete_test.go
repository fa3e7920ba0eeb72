package opsbench

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/apiloom/apiloom/generated/apiserver"
	serverapi "github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/testserver"
)

// deleteCollectionWorkers are the --delete-collection-workers values
// BenchmarkNamespaceDelete measures; the first (kube-apiserver's default)
// is the baseline of its ratios.
var deleteCollectionWorkers = []int{1, 2, 4, 8}

// BenchmarkNamespaceDelete times the deletion of a namespace holding b.N
// small ConfigMaps, from its DELETE until it is gone (the namespace
// controller's deletecollection, then its finalize), on a server per
// --delete-collection-workers value: ns/op is per object, "x-workers1" its
// ratio to one worker's and "cpu-ns/op" the process's CPU per object
// (server and client share it). cmd/apiloom-nsdelete measures the same
// at 10,000 objects.
func BenchmarkNamespaceDelete(b *testing.B) {
	var first float64
	for _, n := range deleteCollectionWorkers {
		b.Run(fmt.Sprintf("delete-collection-workers=%d", n), func(b *testing.B) {
			ts := testserver.Start(b, apiserver.Install, func(o *serverapi.Options) { o.DeleteCollectionWorkers = n })
			kc := kubernetes.NewForConfigOrDie(ts.Config)
			ctx := b.Context()
			ns := "nsdelete"
			if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
			for i := range b.N {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%07d", i)}, Data: map[string]string{"k": "v"}}
				if _, err := kc.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			w, err := kc.CoreV1().Namespaces().Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", ns).String()})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Stop()
			cpu := processCPU(b)
			b.ResetTimer()
			if err := kc.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
				b.Fatal(err)
			}
			for ev := range w.ResultChan() {
				if ev.Type == watch.Deleted {
					break
				}
			}
			b.StopTimer()
			if _, err := kc.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil {
				b.Fatal("the namespace's watch ended before it went")
			}
			perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
			if n == deleteCollectionWorkers[0] {
				first = perOp
			}
			if first > 0 {
				b.ReportMetric(perOp/first, "x-workers1")
			}
		})
	}
}
