package endpoints

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestHasProtobuf: k8s.io/api's kinds take protobuf bodies, other kinds do
// not (they get 415, as custom resources do from kube-apiserver).
// protobufEnvelope reads and writes the protobuf envelope (runtime.Unknown).
var protobufEnvelope = protobuf.NewSerializer(nil, nil)

func TestHasProtobuf(t *testing.T) {
	if !hasProtobuf(new(corev1.ConfigMap)) {
		t.Error("ConfigMap: no protobuf")
	}
	if hasProtobuf(new(gadget)) {
		t.Error("a kind without protobuf methods has them")
	}
}

// TestProtobufPartialViews: a kind without protobuf methods (as the
// kinds of apis/ without generated protobuf) answers the metadata
// client's protobuf partial views in protobuf, as kube-apiserver does for
// custom resources, and its objects in JSON.
func TestProtobufPartialViews(t *testing.T) {
	e := newEnv(t, false)
	e.createWidget("pb", "a", "red")
	e.createWidget("pb", "b", "blue")
	accept := "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
	r := e.do("GET", widgetsPath+"pb/widgets", "", "", "Accept", accept)
	if r.code != 200 || r.header.Get("Content-Type") != negotiation.MediaProtobuf {
		t.Fatalf("%d %q: %q", r.code, r.header.Get("Content-Type"), r.body)
	}
	var u runtime.Unknown
	if _, _, err := protobufEnvelope.Decode(r.body, nil, &u); err != nil || u.Kind != "PartialObjectMetadataList" || u.APIVersion != "meta.k8s.io/v1" {
		t.Fatalf("envelope %+v, %v", u.TypeMeta, err)
	}
	var list metav1.PartialObjectMetadataList
	if err := list.Unmarshal(u.Raw); err != nil || len(list.Items) != 2 || list.Items[1].Name != "b" || list.ResourceVersion == "" {
		t.Fatalf("list %+v, %v", list, err)
	}
	// The objects themselves have no protobuf: JSON, the next clause.
	e.do("GET", widgetsPath+"pb/widgets/a", "", "", "Accept", "application/vnd.kubernetes.protobuf, application/json").widget(t, 200)
}
