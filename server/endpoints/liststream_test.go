package endpoints

import (
	"bytes"
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/storage/storagetest"
	"github.com/apiloom/apiloom/server/wire"
)

// TestListStreamedBytes is the differential test of the streamed list
// encoding: for a list of many items, the bytes written item by item equal
// the whole list encoded at once (json.Marshal of the list, plus the newline
// apimachinery's JSON serializer ends a document with), whether the items
// are encoded on the way (etcd's lists), copied from the watch cache's
// encodings, or turned into a PartialObjectMetadataList.
func TestListStreamedBytes(t *testing.T) {
	h := NewResource(storagetest.Definition(), nil).(*handler[*widget])
	items := benchWidgets(2000)
	raw := make([][]byte, len(items))
	typed := make([]*widget, len(items))
	partial := make([]*metav1.PartialObjectMetadata, len(items))
	out := output{Target: asPartialList, MetaVersion: "v1"}
	for i, it := range items {
		var err error
		if raw[i], err = wire.EncodeObject(it, h.gvk); err != nil {
			t.Fatal(err)
		}
		c := *it
		c.SetGroupVersionKind(h.gvk)
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
		out  output
		want []byte
	}{
		{"encoded", nil, output{}, whole(h.def.ListKind, h.gvk.GroupVersion().String(), typed)},
		{"pre-encoded", raw, output{}, whole(h.def.ListKind, h.gvk.GroupVersion().String(), typed)},
		{"partial", nil, out, whole("PartialObjectMetadataList", "meta.k8s.io/v1", partial)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := h.encodeList(&buf, items, tc.raw, lm, tc.out); err != nil {
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
