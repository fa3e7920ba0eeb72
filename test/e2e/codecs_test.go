package e2e

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
)

func versionedCodecs() runtime.NegotiatedSerializer {
	return serializer.NewCodecFactory(scheme.Scheme).WithoutConversion()
}
