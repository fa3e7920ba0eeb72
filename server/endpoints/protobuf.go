package endpoints

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/wire"
)

// mediaProtobuf is Kubernetes' protobuf encoding, which client-go and
// kubectl speak for kinds with protobuf methods: k8s.io/api's, and those
// of apis/ that `make generate` gave them.
const mediaProtobuf = "application/vnd.kubernetes.protobuf"

// protobufEnvelope reads the runtime.Unknown every protobuf document is.
var protobufEnvelope = protobuf.NewSerializer(nil, nil)

// protobufToJSON converts a protobuf request body to the JSON the write
// paths read. The body's envelope names its kind: the resource's own is
// decoded into newObject(), others (DeleteOptions) by client-go's scheme.
// A body that does not decode is 400 BadRequest.
func protobufToJSON(body []byte, kind schema.GroupVersionKind, newObject func() runtime.Object) ([]byte, error) {
	var u runtime.Unknown
	if _, _, err := protobufEnvelope.Decode(body, nil, &u); err != nil {
		return nil, request.UnrecognizedBody(err)
	}
	gvk := schema.FromAPIVersionAndKind(u.APIVersion, u.Kind)
	var obj runtime.Object
	if gvk == kind && newObject != nil {
		obj = newObject()
	} else {
		var err error
		if obj, err = optionsObject(gvk); err != nil {
			return nil, request.UnrecognizedBody(err)
		}
	}
	m, ok := obj.(wire.ProtoMessage)
	if !ok {
		return nil, request.UnrecognizedBody(fmt.Errorf("%s has no protobuf encoding", gvk))
	}
	if err := m.Unmarshal(u.Raw); err != nil {
		return nil, request.UnrecognizedBody(err)
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

// hasProtobuf reports whether obj's type has protobuf methods.
func hasProtobuf(obj any) bool { return wire.HasProtobuf(obj) }

// encodeProtobufList writes items as one protobuf document, item by item
// as encodeList does for JSON: the bytes apimachinery's protobuf
// serializer writes for the whole list. The envelope announces the list's
// length, so each item's size is taken first, by Size. The items are then
// written from enc when the producer keeps them encoded (the watch cache),
// else marshalled. Sizes come from Size even with enc: the cache keeps an
// item's protobuf only while an event in its window carries the item or a
// reader uses it, so encoding every item to learn its size would make a
// second encoding of most items, or hold them all until the write.
func (h *handler[O]) encodeProtobufList(w io.Writer, items []O, enc storage.ListEncodings, lm metav1.ListMeta, out output) error {
	kind, apiVersion := h.def.ListKind, h.gvk.GroupVersion().String()
	partial := out.target == asPartialList
	if partial {
		kind, apiVersion = "PartialObjectMetadataList", out.metaAPIVersion()
	}
	// message returns item i's encoding, or only its size when sizeOnly.
	message := func(i int, sizeOnly bool) ([]byte, int, error) {
		var m wire.ProtoMessage
		switch {
		case partial:
			m = partialObject(items[i], out)
		case enc != nil && !sizeOnly:
			doc, err := enc.At(i).Object(wire.Protobuf)
			if err != nil {
				return nil, 0, err
			}
			msg, err := wire.ProtobufMessage(doc)
			return msg, len(msg), err
		default:
			var ok bool
			if m, ok = any(items[i]).(wire.ProtoMessage); !ok {
				return nil, 0, wire.ErrNoProtobuf
			}
		}
		if sizeOnly {
			return nil, m.Size(), nil
		}
		b, err := m.Marshal()
		return b, len(b), err
	}
	sizes := make([]int, len(items))
	for i := range items {
		var err error
		if _, sizes[i], err = message(i, true); err != nil {
			return err
		}
	}
	lw, err := wire.NewProtobufListWriter(w, apiVersion, kind, &lm, sizes)
	if err != nil {
		return err
	}
	for i := range items {
		msg, _, err := message(i, false)
		if err == nil {
			err = lw.Write(msg)
		}
		if err != nil {
			return err
		}
	}
	return lw.Close()
}
