package endpoints

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apiloom/apiloom/server/storage/storagetest"
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
// create's and an update's preparation (metadata rules, defaults,
// validation) with no schema, the markers only, one CEL rule and ten.
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
		now := time.Now()
		b.Run("create/"+bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := h.prepareCreate(b.Context(), copyObject(obj), "bench", now); err != nil {
					b.Fatal(err)
				}
			}
		})
		current := copyObject(obj)
		next := copyObject(obj)
		next.Spec.Size = 4
		rt := route{namespace: "bench", name: obj.Name}
		b.Run("update/"+bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := h.prepareWrite(b.Context(), copyObject(next), copyObject(current), rt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
