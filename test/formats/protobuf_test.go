package formats

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/apiloom/apiloom/codegen/pipeline"
	"github.com/apiloom/apiloom/generated/clientset/versioned/scheme"
)

// protobufMessage is what go-to-protobuf's generated.pb.go gives a type,
// as k8s.io/api's types have: what apimachinery's protobuf serializer
// needs of an object.
type protobufMessage interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// apisPrefix is the import path prefix of the module's API packages, the
// ones `make generate` gives protobuf methods.
const apisPrefix = "github.com/apiloom/apiloom/apis/"

// TestProtobufRoundTrip: every kind of apis/ has the protobuf methods
// `make generate` writes (go-to-protobuf), but for those it leaves out,
// which have none (pipeline.ProtobufOmissions: fields named like the
// methods, as apis/crdconf/v1's Parcel), and an object filled at random
// goes through apimachinery's protobuf serializer (what
// application/vnd.kubernetes.protobuf bodies are) and back to the object a
// JSON round trip gives.
func TestProtobufRoundTrip(t *testing.T) {
	f := seededFiller(t)
	pb := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	kinds, _ := served(t)
	omitted := protobufOmitted(t)
	tested := 0
	for _, gvk := range kinds {
		typ := scheme.Scheme.AllKnownTypes()[gvk]
		hasProtobuf := reflect.PointerTo(typ).Implements(reflect.TypeFor[protobufMessage]())
		if omitted[typ.PkgPath()+"."+typ.Name()] {
			if hasProtobuf {
				t.Errorf("%s (%s.%s) has protobuf methods, but make generate leaves it out of protobuf", gvk, typ.PkgPath(), typ.Name())
			}
			continue
		}
		if !hasProtobuf {
			if strings.HasPrefix(typ.PkgPath(), apisPrefix) {
				t.Errorf("%s (%s.%s) has no protobuf methods: make generate writes them (generated.pb.go)", gvk, typ.PkgPath(), typ.Name())
			} else {
				t.Logf("%s (%s.%s): no protobuf methods, not of apis/", gvk, typ.PkgPath(), typ.Name())
			}
			continue
		}
		tested++
		t.Run(gvk.String(), func(t *testing.T) {
			for range 200 {
				obj, err := scheme.Scheme.New(gvk)
				if err != nil {
					t.Fatal(err)
				}
				f.Fill(obj)
				obj.GetObjectKind().SetGroupVersionKind(gvk)

				viaJSON := jsonRoundTrip(t, gvk, obj)
				var buf bytes.Buffer
				if err := pb.Encode(obj, &buf); err != nil {
					t.Fatalf("protobuf encode: %v", err)
				}
				back, err := scheme.Scheme.New(gvk)
				if err != nil {
					t.Fatal(err)
				}
				got, gotGVK, err := pb.Decode(buf.Bytes(), nil, back)
				if err != nil {
					t.Fatalf("protobuf decode: %v", err)
				}
				if *gotGVK != gvk || got != back {
					t.Fatalf("protobuf decode gave %v into %T, want %v into the object given", gotGVK, got, gvk)
				}
				if !sameJSONButEmpty(t, viaJSON, got) {
					t.Fatalf("protobuf and JSON disagree:\n%#v\n%#v", viaJSON, got)
				}
			}
		})
	}
	if tested == 0 {
		t.Fatal("no kind has protobuf methods")
	}
}

// protobufOmitted are the types of apis/ that make generate leaves out of
// protobuf, by import path "." name.
func protobufOmitted(t *testing.T) map[string]bool {
	t.Helper()
	dirs, err := filepath.Glob("../../apis/*/*")
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range dirs {
		dirs[i] = filepath.ToSlash(strings.TrimPrefix(d, "../../"))
	}
	omissions, err := pipeline.ProtobufOmissions("../..", strings.TrimSuffix(apisPrefix, "/apis/"), dirs)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, o := range omissions {
		out[o.ImportPath+"."+o.Type[strings.LastIndex(o.Type, ".")+1:]] = true
	}
	return out
}

// sameJSONButEmpty is sameJSON, but for an empty list or map, which is
// null as well: protobuf has no empty list apart from none, so a list
// decoded from protobuf has nil items where the JSON had [] (as for
// k8s.io/api's kinds).
func sameJSONButEmpty(t *testing.T, a, b runtime.Object) bool {
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
		docs[i] = emptyAsNull(docs[i])
	}
	return equality.Semantic.DeepEqual(docs[0], docs[1])
}

// emptyAsNull replaces every empty array and object in the JSON document
// v by null.
func emptyAsNull(v any) any {
	switch v := v.(type) {
	case []any:
		if len(v) == 0 {
			return nil
		}
		for i := range v {
			v[i] = emptyAsNull(v[i])
		}
	case map[string]any:
		if len(v) == 0 {
			return nil
		}
		for k := range v {
			v[k] = emptyAsNull(v[k])
		}
	}
	return v
}

// jsonRoundTrip returns obj encoded as JSON and decoded into a new object.
func jsonRoundTrip(t *testing.T, gvk schema.GroupVersionKind, obj runtime.Object) runtime.Object {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatalf("encode JSON: %v", err)
	}
	return decodeJSON(t, gvk, data)
}
