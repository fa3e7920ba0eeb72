package endpoints

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestHasProtobuf: k8s.io/api's kinds take protobuf bodies, other kinds do
// not (they get 415, as custom resources do from kube-apiserver).
func TestHasProtobuf(t *testing.T) {
	if !hasProtobuf(new(corev1.ConfigMap)) {
		t.Error("ConfigMap: no protobuf")
	}
	if hasProtobuf(new(gadget)) {
		t.Error("a kind without protobuf methods has them")
	}
}
