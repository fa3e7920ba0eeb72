package listwriter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/storage/storagetest"
	"github.com/apiloom/apiloom/server/wire"
)

// widgets are n Widgets as a list returns them.
func widgets(n int) []*storagetest.Widget {
	items := make([]*storagetest.Widget, n)
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

// TestListStreamedBytes is the differential test of the streamed list
// encoding: for a list of many items, the bytes written item by item equal
// the whole list encoded at once (json.Marshal of the list, plus the newline
// apimachinery's JSON serializer ends a document with), whether the items
// are encoded on the way (etcd's lists), copied from the watch cache's
// encodings, or turned into a PartialObjectMetadataList.
func TestListStreamedBytes(t *testing.T) {
	def := storagetest.Definition()
	l := Lists{Kind: def.GroupVersionKind(), ListKind: def.ListKind, ItemsTyped: def.ListItemsTyped()}
	items := widgets(2000)
	raw := make([][]byte, len(items))
	typed := make([]*storagetest.Widget, len(items))
	partial := make([]*metav1.PartialObjectMetadata, len(items))
	out := negotiation.Output{Target: negotiation.AsPartialList, MetaVersion: "v1"}
	for i, it := range items {
		var err error
		if raw[i], err = wire.EncodeObject(it, l.Kind); err != nil {
			t.Fatal(err)
		}
		c := *it
		c.SetGroupVersionKind(l.Kind)
		typed[i] = &c
		partial[i] = out.PartialObject(it)
	}
	cont := int64(7)
	lm := metav1.ListMeta{ResourceVersion: "123456", Continue: "tok", RemainingItemCount: &cont}

	whole := func(kind, apiVersion string, items any) []byte {
		data, err := json.Marshal(struct {
			metav1.TypeMeta `json:",inline"`
			metav1.ListMeta `json:"metadata,omitempty"`
			Items           any `json:"items"`
		}{metav1.TypeMeta{Kind: kind, APIVersion: apiVersion}, lm, items})
		if err != nil {
			t.Fatal(err)
		}
		return append(data, '\n')
	}
	for _, tc := range []struct {
		name string
		raw  [][]byte
		out  negotiation.Output
		want []byte
	}{
		{"encoded", nil, negotiation.Output{}, whole(l.ListKind, l.Kind.GroupVersion().String(), typed)},
		{"pre-encoded", raw, negotiation.Output{}, whole(l.ListKind, l.Kind.GroupVersion().String(), typed)},
		{"partial", nil, out, whole("PartialObjectMetadataList", "meta.k8s.io/v1", partial)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := EncodeJSON(&buf, l, items, tc.raw, lm, tc.out); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), tc.want) {
				i := 0
				for i < min(buf.Len(), len(tc.want)) && buf.Bytes()[i] == tc.want[i] {
					i++
				}
				t.Fatalf("streamed list (%d bytes) differs from the whole list (%d bytes) at byte %d: %.80q vs %.80q",
					buf.Len(), len(tc.want), i, buf.Bytes()[i:], tc.want[i:])
			}
		})
	}
}
