package cache

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/storage/storagetest"
	"github.com/apiloom/apiloom/server/wire"
)

// heapObjects is how many objects BenchmarkItemHeap caches: issue 18's
// profile was taken at 100,000.
const heapObjects = 100_000

// loadWidget is a widget shaped like the load tool's objects as the API
// server stores them (cmd/apiloom-load: a ~900-byte payload annotation, a
// seq label, a small spec) with what the server adds on create: uid,
// creationTimestamp, generation and one managedFields entry.
func loadWidget(i int) *widget {
	w := benchWidget(fmt.Sprintf("ns%d", i%10), fmt.Sprintf("w%06d", i), int64(1000+i), "web")
	w.Labels["load.apiloom.dev/seq"] = fmt.Sprint(i)
	w.Generation = 1
	w.CreationTimestamp = metav1.NewTime(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	w.ManagedFields = []metav1.ManagedFieldsEntry{{
		Manager: "apiloom-load", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "storagetest.apiloom.dev/v1",
		Time: &w.CreationTimestamp, FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:annotations":{".":{},"f:bench.apiloom.dev/payload":{}},"f:labels":{".":{},"f:app":{},"f:load.apiloom.dev/seq":{},"f:tier":{}}},"f:spec":{".":{},"f:color":{},"f:size":{}}}`)},
	}}
	return w
}

// BenchmarkItemHeap fills a cache's items with heapObjects objects of
// about 1 KiB and reports the live heap per object after a collection:
// the items as a list makes them (listed: no decoded object held), and
// with every item's decoded object held, as each item held it before
// (held, what pinned items hold). held−listed is what the decoded objects
// cost. Run with -benchtime=1x.
func BenchmarkItemHeap(b *testing.B) {
	def := storagetest.Definition()
	c := &Cache[*widget]{def: def, gvk: def.GroupVersionKind()}
	for _, held := range []bool{false, true} {
		name := "listed"
		if held {
			name = "held"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				before := liveHeap()
				items := make([]*item[*widget], heapObjects)
				for i := range items {
					it, err := c.newItem(loadWidget(i), watch.Added, held)
					if err != nil {
						b.Fatal(err)
					}
					items[i] = it
				}
				after := liveHeap()
				runtime.KeepAlive(items)
				b.ReportMetric(float64(after-before)/heapObjects, "B/object")
				b.StartTimer()
			}
		})
	}
}

// BenchmarkItemDecode is what making an item's object again from its JSON
// costs (the decoder newItem keeps objects with), per object.
func BenchmarkItemDecode(b *testing.B) {
	def := storagetest.Definition()
	c := &Cache[*widget]{def: def, gvk: def.GroupVersionKind()}
	it, err := c.newItem(loadWidget(1), watch.Added, false)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(it.raw)), "JSON-bytes")
	b.ReportAllocs()
	for b.Loop() {
		if !wire.DecodeAliasing(it.raw, def.New()) {
			b.Fatal("did not decode")
		}
	}
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
