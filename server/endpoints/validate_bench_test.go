package endpoints

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/storage/storagetest"
	"github.com/apiloom/apiloom/server/wire"
)

// benchSchema is widgetSchema's markers (plus a default and an enum on
// spec.color) with rules CEL rules on spec.
func benchSchema(rules int) string {
	var rs []string
	for i := range rules {
		rs = append(rs, fmt.Sprintf(`{"rule":"self.size <= %d || self.color != 'red'","message":"red widgets are small"}`, 100+i))
	}
	cel := ""
	if rules > 0 {
		cel = `,"x-kubernetes-validations":[` + strings.Join(rs, ",") + `]`
	}
	return `{"type":"object","properties":{
	  "apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
	  "spec":{"type":"object","properties":{
	    "size":{"type":"integer","minimum":1,"maximum":100,"default":1},
	    "color":{"type":"string","maxLength":16,"enum":["red","green","blue"]}}` + cel + `},
	  "status":{"type":"object","properties":{"phase":{"type":"string","maxLength":12}}}}}`
}

// BenchmarkValidation is what the schema adds to a write's handler cost:
// converting the typed object to unstructured content (convert), then a
// create's and an update's way from the request body to the object to
// store (decoding, defaults, metadata rules, validation) with no schema,
// the markers only, one CEL rule and ten; and a create as the server
// makes it, its managed fields tracked before validation.
func BenchmarkValidation(b *testing.B) {
	obj := benchWidgets(1)[0]
	obj.Spec.Size = 3
	b.Run("convert", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
				b.Fatal(err)
			}
		}
	})
	createBody, err := wire.EncodeObject(obj, obj.GroupVersionKind())
	if err != nil {
		b.Fatal(err)
	}
	next := copyObject(obj)
	next.Spec.Size = 4
	updateBody, err := wire.EncodeObject(next, next.GroupVersionKind())
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name, schema string
	}{
		{"none", ""},
		{"markers", benchSchema(0)},
		{"cel-1", benchSchema(1)},
		{"cel-10", benchSchema(10)},
	} {
		def := storagetest.Definition()
		def.Schema = bc.schema
		h := NewResource(def, nil).(*handler[*widget])
		benchWrites(b, h, bc.name, createBody, updateBody, obj)
	}
	def := storagetest.Definition()
	def.Schema = benchSchema(0)
	h := NewResource(def, nil, WithTypeConverter(testTypeConverter(b))).(*handler[*widget])
	b.Run("create/markers+managedfields", benchCreate(h, createBody, true))
}

// benchCreate measures what h does with a create of body, short of
// storage: decode, then (with track) record its managed fields as the
// server does, then prepare (defaults, validation, hooks).
func benchCreate(h *handler[*widget], body []byte, track bool) func(*testing.B) {
	return func(b *testing.B) {
		r := httptest.NewRequest("POST", "/", nil)
		r.Header.Set("Content-Type", negotiation.MediaJSON)
		now := time.Now()
		b.ReportAllocs()
		for b.Loop() {
			in, err := h.decodeObject(r, body, request.WriteOptions{})
			if err != nil {
				b.Fatal(err)
			}
			obj := in.obj
			if track {
				obj = h.trackCreate(obj, "creator")
			}
			if err := h.prepareCreate(b.Context(), obj, in.form, "bench", now); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// benchWrites measures what h does with a create of createBody and with an
// update of obj by updateBody, short of storage: decode, then prepare
// (defaults, validation, hooks).
func benchWrites(b *testing.B, h *handler[*widget], name string, createBody, updateBody []byte, obj *widget) {
	r := httptest.NewRequest("POST", "/", nil)
	r.Header.Set("Content-Type", negotiation.MediaJSON)
	b.Run("create/"+name, benchCreate(h, createBody, false))
	current := copyObject(obj)
	rt := route{namespace: "bench", name: obj.Name}
	b.Run("update/"+name, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			in, err := h.decodeObject(r, updateBody, request.WriteOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := h.prepareWrite(b.Context(), in.obj, copyObject(current), in.form, rt); err != nil {
				b.Fatal(err)
			}
		}
	})
}
