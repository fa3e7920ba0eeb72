package formats

import (
	"bytes"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/apiloom/apiloom/server/wire"
)

// listObjects is the size of the lists the benchmarks decode: an
// informer's first list of a 10,000-object resource.
const listObjects = 10000

// sampleConfigMap is a ~1 KiB object with the shape of a typical
// controller-managed one: labels, annotations, an owner, data.
func sampleConfigMap(i int) *corev1.ConfigMap {
	ctrl := true
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("orders-%05d", i), Namespace: "team-payments", UID: "5f1c9a2e-3b7d-4c1e-9f0a-2d8e6b4c1a77",
			ResourceVersion: fmt.Sprint(100000 + i), Generation: 3, CreationTimestamp: metav1.Unix(1700000000, 0),
			Labels:          map[string]string{"app": "orders", "tier": "db", "team": "payments", "pod-template-hash": "7d9f8c6b5"},
			Annotations:     map[string]string{"example.com/owner": "alice@example.com", "example.com/revision": "17"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "orders", UID: "0a1b2c3d-4e5f", Controller: &ctrl}},
		},
		Data: map[string]string{
			"max_connections": "200", "shared_buffers": "4GB", "work_mem": "64MB", "log_line_prefix": "%m [%p] %q%u@%d ",
			"config.yaml": "listen: 0.0.0.0:5432\nreplicas: 3\nzones: [a, b, c]\nbackup:\n  schedule: '0 3 * * *'\n  retention: 14d\n",
		},
	}
}

// encodedList is a list of listObjects ConfigMaps as apiloom's handlers
// write it in format f (JSON when f is 0).
func encodedList(b *testing.B, f wire.Format) []byte {
	b.Helper()
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	lm := metav1.ListMeta{ResourceVersion: "123456"}
	var buf bytes.Buffer
	switch f {
	case wire.CBOR:
		lw, err := wire.NewCBORListWriter(&buf, "ConfigMapList", gvk, listObjects)
		if err != nil {
			b.Fatal(err)
		}
		for i := range listObjects {
			if err := lw.Write(sampleConfigMap(i)); err != nil {
				b.Fatal(err)
			}
		}
		if err := lw.Close(&lm, "v1"); err != nil {
			b.Fatal(err)
		}
	case wire.Protobuf:
		var msgs [][]byte
		var sizes []int
		for i := range listObjects {
			m, err := sampleConfigMap(i).Marshal()
			if err != nil {
				b.Fatal(err)
			}
			msgs, sizes = append(msgs, m), append(sizes, len(m))
		}
		lw, err := wire.NewProtobufListWriter(&buf, "v1", "ConfigMapList", &lm, sizes)
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range msgs {
			if err := lw.Write(m); err != nil {
				b.Fatal(err)
			}
		}
		if err := lw.Close(); err != nil {
			b.Fatal(err)
		}
	default:
		list := &corev1.ConfigMapList{TypeMeta: metav1.TypeMeta{Kind: "ConfigMapList", APIVersion: "v1"}, ListMeta: lm}
		for i := range listObjects {
			list.Items = append(list.Items, *sampleConfigMap(i))
		}
		data, err := wire.EncodeObject(list, list.GroupVersionKind())
		if err != nil {
			b.Fatal(err)
		}
		buf.Write(data)
	}
	return buf.Bytes()
}

// BenchmarkClientDecodeList is what an informer's first list costs the
// client in each format apiloom serves: client-go's decoder (its codec
// factory, CBOR included as ClientsAllowCBOR adds it) on a 10,000-item
// list as apiloom writes it. The decode is the bound on informer sync
// that JSON imposes (docs/benchmarks.md).
func BenchmarkClientDecodeList(b *testing.B) {
	codecs := serializer.NewCodecFactory(clientgoscheme.Scheme, serializer.WithSerializer(cbor.NewSerializerInfo))
	for _, tc := range []struct {
		name  string
		f     wire.Format
		media string
	}{
		{"json", 0, runtime.ContentTypeJSON},
		{"cbor", wire.CBOR, runtime.ContentTypeCBOR},
		{"protobuf", wire.Protobuf, runtime.ContentTypeProtobuf},
	} {
		b.Run(tc.name, func(b *testing.B) {
			data := encodedList(b, tc.f)
			info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), tc.media)
			if !ok {
				b.Fatalf("no decoder for %s", tc.media)
			}
			dec := codecs.DecoderToVersion(info.Serializer, corev1.SchemeGroupVersion)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				var list corev1.ConfigMapList
				if _, _, err := dec.Decode(data, nil, &list); err != nil {
					b.Fatal(err)
				}
				if len(list.Items) != listObjects {
					b.Fatalf("%d items", len(list.Items))
				}
			}
			b.ReportMetric(float64(len(data))/listObjects, "bytes/object")
		})
	}
}
