package wire

import (
	"bytes"
	"encoding/binary"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

var configMapGVK = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

func sampleConfigMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team", UID: "5f1c9a2e", ResourceVersion: "42", Labels: map[string]string{"app": "orders"}},
		Data:       map[string]string{"max_connections": "200", "mode": "primary <db> & friends"},
	}
}

// referenceProtobuf is what apimachinery's protobuf serializer, the one
// kube-apiserver answers application/vnd.kubernetes.protobuf with, writes.
func referenceProtobuf(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := protobuf.NewSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme).Encode(obj, &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestEncodeObjectProtobufMatchesApimachinery(t *testing.T) {
	cm := sampleConfigMap("a")
	got, err := EncodeObjectProtobuf(cm, configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	ref := cm.DeepCopy()
	ref.Kind, ref.APIVersion = "ConfigMap", "v1"
	if want := referenceProtobuf(t, ref); !bytes.Equal(got, want) {
		t.Fatalf("EncodeObjectProtobuf:\n%x\napimachinery:\n%x", got, want)
	}
	msg, err := ProtobufMessage(got)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := cm.Marshal(); !bytes.Equal(msg, want) {
		t.Fatalf("ProtobufMessage:\n%x\nwant\n%x", msg, want)
	}
	if _, err := EncodeObjectProtobuf(sampleThing(), thingGVK); err != ErrNoProtobuf {
		t.Fatalf("a type without protobuf methods: %v", err)
	}
	for _, bad := range [][]byte{nil, []byte("k8s"), []byte("k8s\x00\x0a\x7f"), []byte("k8s\x00\x0a\x00")} {
		if _, err := ProtobufMessage(bad); err == nil {
			t.Errorf("%q: a message was found", bad)
		}
	}
}

func TestProtobufWatchFrameMatchesApimachinery(t *testing.T) {
	doc, err := EncodeObjectProtobuf(sampleConfigMap("a"), configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"ADDED", "BOOKMARK", string(bytes.Repeat([]byte("X"), 200))} {
		got := AppendProtobufWatchFrame([]byte("p"), typ, doc)[1:]
		ev := metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: doc}}
		body, err := ev.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		want := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
		want = append(want, body...)
		if !bytes.Equal(got, want) {
			t.Fatalf("%s frame:\n%x\nwant\n%x", typ, got, want)
		}
		if !bytes.HasSuffix(got, doc) {
			t.Fatal("the frame does not end with the object")
		}
	}
}

func TestProtobufListWriterMatchesApimachinery(t *testing.T) {
	for _, n := range []int{0, 1, 200} {
		list := &corev1.ConfigMapList{TypeMeta: metav1.TypeMeta{Kind: "ConfigMapList", APIVersion: "v1"}}
		rem := int64(3)
		list.ListMeta = metav1.ListMeta{ResourceVersion: "42", Continue: "tok", RemainingItemCount: &rem}
		var msgs [][]byte
		var sizes []int
		for i := range n {
			cm := sampleConfigMap(string(rune('a' + i%26)))
			list.Items = append(list.Items, *cm)
			doc, err := EncodeObjectProtobuf(cm, configMapGVK)
			if err != nil {
				t.Fatal(err)
			}
			msg, err := ProtobufMessage(doc)
			if err != nil {
				t.Fatal(err)
			}
			msgs, sizes = append(msgs, msg), append(sizes, len(msg))
		}
		var got bytes.Buffer
		lw, err := NewProtobufListWriter(&got, "v1", "ConfigMapList", &list.ListMeta, sizes)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if err := lw.Write(m); err != nil {
				t.Fatal(err)
			}
		}
		if err := lw.Close(); err != nil {
			t.Fatal(err)
		}
		if want := referenceProtobuf(t, list); !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("%d items:\n%x\napimachinery:\n%x", n, got.Bytes(), want)
		}
	}
	lw, _ := NewProtobufListWriter(&bytes.Buffer{}, "v1", "ConfigMapList", &metav1.ListMeta{}, []int{3})
	if err := lw.Write([]byte{1, 2}); err == nil {
		t.Fatal("an item of another size was written")
	}
	if err := lw.Close(); err == nil {
		t.Fatal("a list short of its items was closed")
	}
}
