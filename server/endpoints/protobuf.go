package endpoints

import (
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// mediaProtobuf is Kubernetes' protobuf encoding, which kubectl sends the
// bodies of built-in kinds in (k8s.io/api types have protobuf methods).
const mediaProtobuf = "application/vnd.kubernetes.protobuf"

// protobufDecoder decodes protobuf bodies of the types client-go's scheme
// knows: k8s.io/api's, every built-in kind the server may serve. Kinds
// without protobuf methods (those of apis/) are refused, as
// kube-apiserver refuses protobuf for custom resources.
var protobufDecoder = protobuf.NewSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme)

// protobufToJSON converts a protobuf request body to the JSON the write
// paths read: the object decoded by its envelope's apiVersion and kind,
// then encoded as JSON. A body that does not decode is 400 BadRequest.
func protobufToJSON(body []byte) ([]byte, error) {
	obj, _, err := protobufDecoder.Decode(body, nil, nil)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized: %v", err))
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return data, nil
}

// protoMessage is what the protobuf types of k8s.io/api implement (the
// methods the protobuf serializer decodes with).
type protoMessage interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// hasProtobuf reports whether obj's type has protobuf methods.
func hasProtobuf(obj any) bool {
	_, ok := obj.(protoMessage)
	return ok
}
