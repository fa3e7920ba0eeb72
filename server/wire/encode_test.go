package wire

import (
	"bytes"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// TestEncodeObjectMatchesApimachinery compares EncodeObject with the JSON
// serializer kube-apiserver writes responses with.
func TestEncodeObjectMatchesApimachinery(t *testing.T) {
	obj := sampleThing()
	got, err := EncodeObject(obj, thingGVK)
	if err != nil {
		t.Fatal(err)
	}
	ref := obj.DeepCopyObject()
	ref.GetObjectKind().SetGroupVersionKind(thingGVK)
	var want bytes.Buffer
	s := json.NewSerializerWithOptions(json.DefaultMetaFactory, nil, nil, json.SerializerOptions{})
	if err := s.Encode(ref, &want); err != nil {
		t.Fatal(err)
	}
	if string(got)+"\n" != want.String() {
		t.Fatalf("EncodeObject:\n%s\napimachinery:\n%s", got, want.String())
	}
	if !strings.HasPrefix(string(got), `{"kind":"Thing","apiVersion":"example.apiloom.dev/v1","metadata":`) {
		t.Fatalf("type meta not first: %s", got)
	}
}

func TestEncodeObjectDoesNotModifyObject(t *testing.T) {
	obj := sampleThing()
	if _, err := EncodeObject(obj, thingGVK); err != nil {
		t.Fatal(err)
	}
	if obj.Kind != "" || obj.APIVersion != "" {
		t.Fatalf("EncodeObject set type meta on its argument: %+v", obj.TypeMeta)
	}
	// An object carrying another kind is encoded with the requested one and
	// keeps its own.
	obj.SetGroupVersionKind(schema.GroupVersionKind{Version: "v9", Kind: "Other"})
	out, err := EncodeObject(obj, thingGVK)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(`"kind":"Thing"`)) || obj.Kind != "Other" {
		t.Fatalf("got %s with object kind %q", out, obj.Kind)
	}
}

func TestEncodeObjectNonStructFallsBackToDeepCopy(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x"}}}
	out, err := EncodeObject(u, thingGVK)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(`"kind":"Thing"`)) || u.GetKind() != "" {
		t.Fatalf("got %s, object kind %q", out, u.GetKind())
	}
}

func TestObjectWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewObjectWriter(&buf, thingGVK)
	for _, name := range []string{"a", "b"} {
		if err := w.Write(&thing{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	want := `{"kind":"Thing","apiVersion":"example.apiloom.dev/v1","metadata":{"name":"a"},"spec":{"engine":""},"status":{}}` +
		`{"kind":"Thing","apiVersion":"example.apiloom.dev/v1","metadata":{"name":"b"},"spec":{"engine":""},"status":{}}`
	if buf.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

var _ runtime.Object = (*thing)(nil)
