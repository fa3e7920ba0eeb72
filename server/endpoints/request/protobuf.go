package request

import (
	"encoding/json"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/apiloom/apiloom/server/wire"
)

// protobufEnvelope reads the runtime.Unknown every protobuf document is.
var protobufEnvelope = protobuf.NewSerializer(nil, nil)

// protobufToJSON converts a protobuf request body to the JSON the write
// paths read. The body's envelope names its kind: the resource's own is
// decoded into newObject(), others (DeleteOptions) by client-go's scheme.
// A body that does not decode is 400 BadRequest.
func protobufToJSON(body []byte, kind schema.GroupVersionKind, newObject func() runtime.Object) ([]byte, error) {
	var u runtime.Unknown
	if _, _, err := protobufEnvelope.Decode(body, nil, &u); err != nil {
		return nil, UnrecognizedBody(err)
	}
	gvk := schema.FromAPIVersionAndKind(u.APIVersion, u.Kind)
	var obj runtime.Object
	if gvk == kind && newObject != nil {
		obj = newObject()
	} else {
		var err error
		if obj, err = optionsObject(gvk); err != nil {
			return nil, UnrecognizedBody(err)
		}
	}
	m, ok := obj.(wire.ProtoMessage)
	if !ok {
		return nil, UnrecognizedBody(fmt.Errorf("%s has no protobuf encoding", gvk))
	}
	if err := m.Unmarshal(u.Raw); err != nil {
		return nil, UnrecognizedBody(err)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return data, nil
}

// optionsObject is a new object of a kind client-go's scheme knows: a
// built-in kind, or one of meta.k8s.io's options (DeleteOptions), which
// every group version registers, apis/ ones too.
func optionsObject(gvk schema.GroupVersionKind) (runtime.Object, error) {
	obj, err := clientgoscheme.Scheme.New(gvk)
	if err == nil {
		return obj, nil
	}
	meta, merr := clientgoscheme.Scheme.New(corev1Kind(gvk.Kind))
	if merr != nil || reflect.TypeOf(meta).Elem().PkgPath() != reflect.TypeFor[metav1.DeleteOptions]().PkgPath() {
		return nil, err
	}
	return meta, nil
}

// corev1Kind is kind in the core group's version, where meta.k8s.io's
// options are registered as in every group.
func corev1Kind(kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Version: "v1", Kind: kind}
}
