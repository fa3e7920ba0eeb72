package convert

import (
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
	"github.com/apiloom/apiloom/server/wire"
)

// BenchmarkFanout is the cost of one event of the watch cache reaching
// 100 watchers of a converted version: shared, it is converted and
// encoded once (frameMemo); per watcher, what each watcher would pay
// without it (a conversion and an encoding each).
func BenchmarkFanout(b *testing.B) {
	const watchers = 100
	stored, v2, conv := versions()
	s := New[*widget, *widget](nil, v2, conv)
	obj := storagetest.NewWidget("ns", "a", "red", "app", "orders")
	obj.SetGroupVersionKind(stored.GroupVersionKind())
	b.Run("shared", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			obj.ResourceVersion = strconv.Itoa(i)
			ev := storage.Event[*widget]{Type: watch.Modified, Object: obj, Frame: []byte{}}
			for range watchers {
				if _, err := s.convertEvent(&ev); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("per-watcher", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			obj.ResourceVersion = strconv.Itoa(i)
			ev := storage.Event[*widget]{Type: watch.Modified, Object: obj}
			for range watchers {
				out, err := s.convertEvent(&ev)
				if err != nil {
					b.Fatal(err)
				}
				raw, err := wire.EncodeObject(out.Object, s.gvk)
				if err != nil {
					b.Fatal(err)
				}
				_ = wire.AppendWatchFrame(nil, string(out.Type), raw)
			}
		}
	})
}
