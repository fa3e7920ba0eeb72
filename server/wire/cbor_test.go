package wire

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
)

// thingList is the list kind of thing, shaped as generated lists are.
type thingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []thing `json:"items"`
}

func (l *thingList) DeepCopyObject() runtime.Object { c := *l; return &c }

// referenceCBOR is what apimachinery's CBOR serializer, the one
// kube-apiserver answers application/cbor with, writes for obj.
func referenceCBOR(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := cbor.NewSerializer(nil, nil).Encode(obj, &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestEncodeObjectCBORMatchesApimachinery(t *testing.T) {
	obj := sampleThing()
	got, err := EncodeObjectCBOR(obj, thingGVK)
	if err != nil {
		t.Fatal(err)
	}
	if obj.Kind != "" {
		t.Fatal("EncodeObjectCBOR modified the object")
	}
	ref := obj.DeepCopyObject()
	ref.GetObjectKind().SetGroupVersionKind(thingGVK)
	if want := referenceCBOR(t, ref); !bytes.Equal(got, want) {
		t.Fatalf("EncodeObjectCBOR:\n%x\napimachinery:\n%x", got, want)
	}
	if !IsCBOR(got) {
		t.Fatal("no self-described tag")
	}
}

func TestCBORWatchFrameMatchesApimachinery(t *testing.T) {
	obj, err := EncodeObjectCBOR(sampleThing(), thingGVK)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR", strings.Repeat("X", 300)} {
		got := AppendCBORWatchFrame([]byte("prefix"), typ, obj)
		if string(got[:6]) != "prefix" {
			t.Fatal("dst not kept")
		}
		got = got[6:]
		want := referenceCBOR(t, &metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: obj}})
		if !bytes.Equal(got, want) {
			t.Fatalf("%s frame:\n%x\napimachinery:\n%x", typ, got, want)
		}
		if n := CBORWatchFrameSize(typ, obj); n != len(got) {
			t.Fatalf("%s: CBORWatchFrameSize %d, frame %d bytes", typ, n, len(got))
		}
		if !bytes.HasSuffix(got, obj) {
			t.Fatalf("%s: the frame does not end with the object", typ)
		}
		// client-go's watch decoder reads the frame back to the object.
		var ev metav1.WatchEvent
		if err := direct.Unmarshal(got, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type != typ || !bytes.Equal(ev.Object.Raw, obj) {
			t.Fatalf("%s: decoded %q with object %x", typ, ev.Type, ev.Object.Raw)
		}
	}
}

func TestCBORListWriterMatchesApimachinery(t *testing.T) {
	for _, n := range []int{0, 1, 23, 24, 300} {
		items := make([]thing, n)
		for i := range items {
			items[i] = *sampleThing()
			items[i].Name += strings.Repeat("x", i%7)
		}
		rem := int64(7)
		lm := metav1.ListMeta{ResourceVersion: "42", Continue: "token", RemainingItemCount: &rem}
		var got bytes.Buffer
		lw, err := NewCBORListWriter(&got, "ThingList", thingGVK, n)
		if err != nil {
			t.Fatal(err)
		}
		for i := range items {
			// Half the items come already encoded, as the watch cache has them.
			if i%2 == 0 {
				err = lw.Write(&items[i])
			} else {
				var enc []byte
				if enc, err = EncodeObjectCBOR(&items[i], thingGVK); err == nil {
					err = lw.WriteEncoded(enc)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := lw.Close(&lm, thingGVK.GroupVersion().String()); err != nil {
			t.Fatal(err)
		}
		list := &thingList{ListMeta: lm, Items: items}
		list.Kind, list.APIVersion = "ThingList", thingGVK.GroupVersion().String()
		for i := range list.Items {
			list.Items[i].TypeMeta = metav1.TypeMeta{Kind: thingGVK.Kind, APIVersion: list.APIVersion}
		}
		if want := referenceCBOR(t, list); !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("%d items: list writer:\n%x\napimachinery:\n%x", n, got.Bytes(), want)
		}
	}
}

func TestCBORListWriterRefusesNonCBORItem(t *testing.T) {
	lw, err := NewCBORListWriter(io.Discard, "ThingList", thingGVK, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := lw.WriteEncoded([]byte(`{"kind":"Thing"}`)); err == nil {
		t.Fatal("a JSON item was written into a CBOR list")
	}
}

func TestCBORToJSON(t *testing.T) {
	obj := sampleThing()
	data, err := EncodeObjectCBOR(obj, thingGVK)
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string][]byte{"tagged": data, "untagged": data[len(cborSelfDescribed):]} {
		got, err := CBORToJSON(in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, _ := EncodeObject(obj, thingGVK)
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal(want, &w)
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		if !bytes.Equal(gb, wb) {
			t.Fatalf("%s:\n%s\nwant\n%s", name, gb, wb)
		}
	}
	bad := map[string][]byte{
		"empty":         nil,
		"truncated":     data[:len(data)/2],
		"trailing":      append(append([]byte(nil), data...), 0x01),
		"duplicate key": {0xa2, 0x41, 'a', 0x01, 0x41, 'a', 0x02},
		"integer key":   {0xa1, 0x01, 0x01},
		"not CBOR":      []byte(`{"kind":"Thing"}`),
	}
	for name, in := range bad {
		if out, err := CBORToJSON(in); err == nil {
			t.Errorf("%s: converted to %s", name, out)
		}
	}
}

// FuzzCBORToJSON: no input panics or converts to invalid JSON, and what
// converts is a JSON value apimachinery's CBOR decoder agrees with.
func FuzzCBORToJSON(f *testing.F) {
	obj, _ := EncodeObjectCBOR(sampleThing(), thingGVK)
	f.Add(obj)
	f.Add([]byte{0xa1, 0x41, 'a', 0x80})
	f.Add([]byte{0xd9, 0xd9, 0xf7, 0xf6})
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := CBORToJSON(data)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("%x converted to invalid JSON %q", data, out)
		}
	})
}
