package formats

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/apitesting/roundtrip"
	"k8s.io/apimachinery/pkg/api/equality"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/randfill"

	"github.com/apiloom/apiloom/generated/clientset/versioned/scheme"
	"github.com/apiloom/apiloom/server/wire"
)

// served are the kinds of apis/: those of the generated scheme, but for
// the meta.k8s.io kinds every group registers (options, WatchEvent), which
// apimachinery tests itself; those are returned apart.
func served(t *testing.T) (kinds, meta []schema.GroupVersionKind) {
	for gvk, typ := range scheme.Scheme.AllKnownTypes() {
		switch {
		case gvk.Version == runtime.APIVersionInternal:
		case typ.PkgPath() == "k8s.io/apimachinery/pkg/apis/meta/v1":
			meta = append(meta, gvk)
		default:
			kinds = append(kinds, gvk)
		}
	}
	if len(kinds) == 0 {
		t.Fatal("the generated scheme has no kinds")
	}
	return kinds, meta
}

// TestRoundtripToUnstructured is apimachinery's own check (the one
// Kubernetes runs for its built-in kinds): every kind, filled at random,
// encodes to JSON and to CBOR, both decode to the same Unstructured, and
// back to the same object.
func TestRoundtripToUnstructured(t *testing.T) {
	kinds, meta := served(t)
	skipped := sets.New(meta...)
	for _, gvk := range kinds {
		// A RawExtension keeps the bytes it was decoded from (JSON, or CBOR
		// after a CBOR decode), which this check compares as they are:
		// TestServedCBORRoundTrip compares such kinds as documents.
		if holdsRawExtension(scheme.Scheme.AllKnownTypes()[gvk], map[reflect.Type]bool{}) {
			skipped.Insert(gvk)
		}
	}
	if skipped.Len() > len(meta) {
		t.Logf("%d kinds holding a RawExtension are left to TestServedCBORRoundTrip", skipped.Len()-len(meta))
	}
	roundtrip.RoundtripToUnstructured(t, scheme.Scheme, metafuzzer.Funcs, skipped, sets.New(kinds...))
}

// holdsRawExtension reports whether a value of type typ can hold a
// runtime.RawExtension.
func holdsRawExtension(typ reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[typ] {
		return false
	}
	seen[typ] = true
	switch typ.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return holdsRawExtension(typ.Elem(), seen)
	case reflect.Struct:
		if typ == reflect.TypeFor[runtime.RawExtension]() {
			return true
		}
		for i := range typ.NumField() {
			if holdsRawExtension(typ.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}

// TestServedCBORRoundTrip: what the server writes in CBOR (wire's
// encoding, which the watch cache keeps) decodes, in client-go's CBOR
// decoder, to the object a JSON client decodes from the server's JSON; and
// a CBOR body, which the server reads by converting it to JSON, decodes to
// the object the client's JSON would have.
func TestServedCBORRoundTrip(t *testing.T) {
	f := seededFiller(t)
	kinds, _ := served(t)
	for _, gvk := range kinds {
		t.Run(gvk.String(), func(t *testing.T) {
			for range 50 {
				obj, err := scheme.Scheme.New(gvk)
				if err != nil {
					t.Fatal(err)
				}
				f.Fill(obj)
				obj.GetObjectKind().SetGroupVersionKind(gvk)

				viaJSON := decodeJSON(t, gvk, mustEncode(t, wire.EncodeObject, obj, gvk))
				data := mustEncode(t, wire.EncodeObjectCBOR, obj, gvk)
				back, _ := scheme.Scheme.New(gvk)
				if err := direct.Unmarshal(data, back); err != nil {
					t.Fatalf("decode: %v", err)
				}
				if !sameJSON(t, viaJSON, back) {
					t.Fatalf("CBOR and JSON disagree:\n%#v\n%#v", viaJSON, back)
				}

				asJSON, err := wire.CBORToJSON(data)
				if err != nil {
					t.Fatalf("CBOR body to JSON: %v", err)
				}
				if fromBody := decodeJSON(t, gvk, asJSON); !sameJSON(t, viaJSON, fromBody) {
					t.Fatalf("a CBOR body lost data on its way to JSON:\n%#v\n%#v", viaJSON, fromBody)
				}
			}
		})
	}
}

// sameJSON reports whether a and b are the same document as JSON: a
// RawExtension holds CBOR bytes after a CBOR decode and JSON bytes after a
// JSON one, for the same value.
func sameJSON(t *testing.T, a, b runtime.Object) bool {
	t.Helper()
	var docs [2]any
	for i, o := range []runtime.Object{a, b} {
		data, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &docs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return equality.Semantic.DeepEqual(docs[0], docs[1])
}

func mustEncode(t *testing.T, enc func(runtime.Object, schema.GroupVersionKind) ([]byte, error), obj runtime.Object, gvk schema.GroupVersionKind) []byte {
	t.Helper()
	data, err := enc(obj, gvk)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return data
}

func decodeJSON(t *testing.T, gvk schema.GroupVersionKind, data []byte) runtime.Object {
	t.Helper()
	obj, _ := scheme.Scheme.New(gvk)
	if err := json.Unmarshal(data, obj); err != nil {
		t.Fatalf("decode JSON: %v: %s", err, data)
	}
	return obj
}

// seededFiller fills objects at random as apimachinery's round-trip tests
// do, from a seed the test logs.
func seededFiller(t *testing.T) *randfill.Filler {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	return fuzzer.FuzzerFor(metafuzzer.Funcs, rand.NewSource(seed), serializer.NewCodecFactory(scheme.Scheme))
}
