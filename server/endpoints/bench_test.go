package endpoints

import (
	"fmt"
	"io"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
	"github.com/apiloom/apiloom/server/wire"
)

func benchWidgets(n int) []*widget {
	items := make([]*widget, n)
	for i := range items {
		w := storagetest.NewWidget("bench", fmt.Sprintf("widget-%05d", i), "red", "app", "bench", "tier", "db")
		w.UID = "5f1c9a2e-3b7d-4c1e-9f0a-2d8e6b4c1a77"
		w.ResourceVersion = fmt.Sprint(1000 + i)
		w.CreationTimestamp = metav1.Unix(1700000000, 0)
		w.Annotations = map[string]string{"example.com/owner": "alice@example.com"}
		w.Status.Phase = "Ready"
		items[i] = w
	}
	return items
}

// BenchmarkListEncode is the list response path: 500 items (a client-go
// page) streamed to the writer as one WidgetList, encoded here (the etcd
// store's lists) or copied from encodings the watch cache keeps.
func BenchmarkListEncode(b *testing.B) {
	h := NewResource(storagetest.Definition(), nil).(*handler[*widget])
	items := benchWidgets(500)
	raw := make([][]byte, len(items))
	for i, it := range items {
		var err error
		if raw[i], err = wire.EncodeObject(it, it.GroupVersionKind()); err != nil {
			b.Fatal(err)
		}
	}
	lm := metav1.ListMeta{ResourceVersion: "123456"}
	for _, bc := range []struct {
		name string
		raw  [][]byte
	}{{"encode", nil}, {"pre-encoded", raw}} {
		b.Run(bc.name, func(b *testing.B) {
			var cw countingWriter
			b.ReportAllocs()
			for b.Loop() {
				if err := h.encodeList(&cw, items, bc.raw, lm, negotiation.Output{}); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(cw.n / int64(b.N))
		})
	}
}

// BenchmarkListEncodeTable is the same page as kubectl get asks for it,
// with the default columns and with printer columns, which evaluate
// JSONPaths on each object's unstructured form.
func BenchmarkListEncodeTable(b *testing.B) {
	withColumns := storagetest.Definition()
	withColumns.PrintColumns = []resource.PrintColumn{
		{Name: "Color", Type: resource.ColumnString, JSONPath: ".spec.color"},
		{Name: "Size", Type: resource.ColumnInteger, JSONPath: ".spec.size"},
		{Name: "Phase", Type: resource.ColumnString, JSONPath: ".status.phase"},
		{Name: "Age", Type: resource.ColumnDate, JSONPath: ".metadata.creationTimestamp"},
	}
	items := benchWidgets(500)
	for _, it := range items {
		it.ManagedFields = []metav1.ManagedFieldsEntry{{
			Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: widgetAPI,
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:tier":{}}},"f:spec":{".":{},"f:color":{},"f:size":{}}}`)},
		}}
	}
	out := negotiation.Output{Target: negotiation.AsTable, MetaVersion: "v1"}
	for _, bc := range []struct {
		name string
		def  *resource.Definition[*widget]
	}{{"default", storagetest.Definition()}, {"columns", withColumns}} {
		b.Run(bc.name, func(b *testing.B) {
			h := NewResource(bc.def, nil).(*handler[*widget])
			b.ReportAllocs()
			for b.Loop() {
				if err := h.encodeList(io.Discard, items, nil, metav1.ListMeta{}, out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWatchFrame is the per-event cost of the watch path: for events
// the producer encoded once (the watch cache) and for events it did not.
func BenchmarkWatchFrame(b *testing.B) {
	h := NewResource(storagetest.Definition(), nil).(*handler[*widget])
	obj := benchWidgets(1)[0]
	data, err := wire.EncodeObject(obj, h.gvk)
	if err != nil {
		b.Fatal(err)
	}
	pre := storage.Event[*widget]{Type: watch.Modified, Object: obj, Frame: wire.AppendWatchFrame(nil, "MODIFIED", data)}
	raw := storage.Event[*widget]{Type: watch.Modified, Object: obj}
	for _, bc := range []struct {
		name string
		ev   *storage.Event[*widget]
	}{{"pre-encoded", &pre}, {"encode", &raw}} {
		b.Run(bc.name, func(b *testing.B) {
			enc := h.eventEncoder(negotiation.Output{})
			b.ReportAllocs()
			for b.Loop() {
				frame, err := enc.Frame(bc.ev)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Discard.Write(frame); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// BenchmarkUpdateManagedFields is what an update costs the handler before
// storage, on a stored object that has managed fields: the write prepared
// as the server did before it kept managed fields ("untracked"), with them
// recorded by the field manager as every update now does ("tracked"), and
// as a server-side apply of the same change ("apply").
func BenchmarkUpdateManagedFields(b *testing.B) {
	h := NewResource(storagetest.Definition(), nil, WithTypeConverter(testTypeConverter(b))).(*handler[*widget])
	rt := route{namespace: "bench", name: "widget-00000"}
	current := h.trackCreate(benchWidgets(1)[0], "creator")
	current.GetObjectKind().SetGroupVersionKind(h.gvk)
	sizes := [2]*widget{copyObject(current), copyObject(current)}
	sizes[0].Spec.Size, sizes[1].Spec.Size = 2, 3
	applies := [2][]byte{
		[]byte(`{"apiVersion":"storagetest.apiloom.dev/v1","kind":"Widget","metadata":{"name":"widget-00000"},"spec":{"size":2}}`),
		[]byte(`{"apiVersion":"storagetest.apiloom.dev/v1","kind":"Widget","metadata":{"name":"widget-00000"},"spec":{"size":3}}`),
	}
	for _, bc := range []struct {
		name  string
		write func(i int) (*widget, error)
	}{
		{"untracked", func(i int) (*widget, error) {
			return h.prepareWrite(b.Context(), copyObject(sizes[i%2]), copyObject(current), nil, rt)
		}},
		{"tracked", func(i int) (*widget, error) {
			cur := copyObject(current)
			return h.prepareWrite(b.Context(), h.trackUpdate(copyObject(sizes[i%2]), cur, "editor", rt, false), cur, nil, rt)
		}},
		{"apply", func(i int) (*widget, error) {
			cur := copyObject(current)
			a := &applier[*widget]{fm: h.managed.For(""), body: applies[i%2], opts: request.WriteOptions{FieldManager: "applier", Force: true}}
			obj, err := a.applyTo(cur)
			if err != nil {
				return nil, err
			}
			return h.prepareWrite(b.Context(), obj, cur, nil, rt)
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := bc.write(i); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
