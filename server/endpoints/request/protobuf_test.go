package request

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/wire"
)

var configMapKind = corev1.SchemeGroupVersion.WithKind("ConfigMap")

func newConfigMap() runtime.Object { return new(corev1.ConfigMap) }

// TestProtobufToJSON: a protobuf body of the resource's kind decodes into
// its type, one of another kind (DeleteOptions) by client-go's scheme, and
// anything else is 400 BadRequest.
func TestProtobufToJSON(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "v"}}
	doc, err := wire.EncodeObjectProtobuf(cm, configMapKind)
	if err != nil {
		t.Fatal(err)
	}
	data, err := protobufToJSON(doc, configMapKind, newConfigMap)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"},"data":{"k":"v"}}`; string(data) != want {
		t.Fatalf("got %s, want %s", data, want)
	}
	opts, _ := wire.EncodeObjectProtobuf(&metav1.DeleteOptions{GracePeriodSeconds: new(int64(5))}, metav1.SchemeGroupVersion.WithKind("DeleteOptions"))
	if data, err := protobufToJSON(opts, configMapKind, newConfigMap); err != nil || !strings.Contains(string(data), `"gracePeriodSeconds":5`) {
		t.Fatalf("DeleteOptions: %s, %v", data, err)
	}
	unknownKind, _ := wire.EncodeObjectProtobuf(cm, schema.GroupVersionKind{Group: "nope.io", Version: "v1", Kind: "Nope"})
	for name, body := range map[string][]byte{
		"empty": nil, "no magic": []byte("{}"), "truncated": doc[:len(doc)/2], "unknown kind": unknownKind,
		"garbage message": append([]byte("k8s\x00\x0a\x0c\x0a\x02v1\x12\x06Secret\x12\x03"), 0xff, 0xff, 0xff),
	} {
		if _, err := protobufToJSON(body, configMapKind, newConfigMap); !apierrors.IsBadRequest(err) {
			t.Errorf("%s: %v, want 400", name, err)
		}
	}
}

// FuzzProtobufToJSON: no body panics the decoder or converts to invalid
// JSON.
func FuzzProtobufToJSON(f *testing.F) {
	doc, _ := wire.EncodeObjectProtobuf(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"x": "y"}}, Data: map[string]string{"k": "v"}}, configMapKind)
	f.Add(doc)
	f.Add([]byte("k8s\x00"))
	f.Fuzz(func(t *testing.T, body []byte) {
		data, err := protobufToJSON(body, configMapKind, newConfigMap)
		if err != nil {
			if !apierrors.IsBadRequest(err) {
				t.Fatalf("%x: %v, want 400", body, err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("%x converted to invalid JSON %q", body, data)
		}
	})
}
