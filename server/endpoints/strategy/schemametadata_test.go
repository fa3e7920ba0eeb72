package strategy

import (
	"fmt"
	"maps"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apiloom/apiloom/server/admission/schemacheck"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// metadataRulesSchema constrains all that a CRD's schema may of the root
// metadata (name and generateName), and has root CEL rules reading them
// beside one on the spec.
const metadataRulesSchema = `{"type":"object","properties":{
  "apiVersion":{"type":"string"},"kind":{"type":"string"},
  "metadata":{"type":"object","properties":{
    "name":{"type":"string","maxLength":12,"pattern":"^[a-z0-9-]*$"},
    "generateName":{"type":"string","maxLength":6}}},
  "spec":{"type":"object","properties":{"size":{"type":"integer","maximum":100},"color":{"type":"string"}},
    "x-kubernetes-validations":[{"rule":"self.size < 50 || self.color == 'red'","message":"big widgets are red"}]},
  "status":{"type":"object","properties":{"phase":{"type":"string"}}}},
  "x-kubernetes-validations":[
    {"rule":"self.metadata.name.startsWith('w')","messageExpression":"'name ' + self.metadata.name + ' does not start with w'"},
    {"rule":"!has(self.metadata.generateName) || self.metadata.generateName.endsWith('-')","message":"generateName ends with -"},
    {"rule":"has(self.spec.color)","message":"a color is required"}]}`

// TestSchemaMetadataValidatesAsTheWholeMetadata: a create validated with
// only schemaMetadata's fields of the metadata gets the same violations,
// in the same order, as with the whole metadata converted, for objects
// that pass and fail the schema's and the rules' constraints on the name
// and generateName, and carry every other kind of metadata.
func TestSchemaMetadataValidatesAsTheWholeMetadata(t *testing.T) {
	def := storagetest.Definition()
	def.Schema = metadataRulesSchema
	check, err := schemacheck.New(t.Context(), &def.Info)
	if err != nil {
		t.Fatal(err)
	}
	k := New(def, nil, nil, Hooks{})

	full := func(w *storagetest.Widget) metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Name: w.Name, GenerateName: w.GenerateName, Namespace: "ns", UID: types.UID("0b9d6c2e-1b7c-4c5e-9f57-8d1f0c3a9e11"),
			Generation: 1, CreationTimestamp: metav1.Unix(1700000000, 0),
			Labels:          map[string]string{"app": "x", "tier": "Not_A_Name!"},
			Annotations:     map[string]string{"note": fmt.Sprintf("%0200d", 7)},
			Finalizers:      []string{"example.com/keep"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "u-1"}},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "storagetest.apiloom.dev/v1",
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:size":{}}}`)},
			}},
		}
	}
	cases := []struct {
		name, generateName string
		size               int
		color              string
	}{
		{"widget-1", "", 3, "blue"},            // valid
		{"widget-1", "w-", 60, "blue"},         // a spec rule fails
		{"box", "", 3, "blue"},                 // a name rule fails
		{"Bad_Name_That_Is_Long", "", 3, ""},   // the name's pattern and length; the rules do not run
		{"", "widgets", 3, "red"},              // generateName too long
		{"", "wx", 3, "red"},                   // a generateName rule and the name rule fail
		{"wide", "", 3, ""},                    // the color rule fails
		{"w", "w-", 101, "red"},                // spec.size over the maximum
		{"w-ok", "w-", 3, "red"},               // valid, with both
		{"", "", 3, "red"},                     // neither name
		{"w\u00e9", "", 3, "red"},              // pattern
		{fmt.Sprintf("w%099d", 1), "", 3, "x"}, // length
	}
	failed := 0
	for _, c := range cases {
		w := storagetest.NewWidget("ns", c.name, c.color)
		w.GenerateName, w.Spec.Size = c.generateName, c.size
		w.ObjectMeta = full(w)
		f := &Form{content: map[string]any{"spec": map[string]any{"size": int64(c.size)}}}
		if c.color != "" {
			f.content["spec"].(map[string]any)["color"] = c.color
		}
		trimmed, err := k.formContent(w, f, true)
		if err != nil {
			t.Fatal(err)
		}
		whole := maps.Clone(trimmed)
		if whole["metadata"], err = metadataContent(w); err != nil {
			t.Fatal(err)
		}
		if len(whole["metadata"].(map[string]any)) <= len(trimmed["metadata"].(map[string]any)) {
			t.Fatalf("%q: the whole metadata %v is no larger than the schema's %v", c.name, whole["metadata"], trimmed["metadata"])
		}
		want := check.Create(t.Context(), whole, nil, nil)
		got := check.Create(t.Context(), trimmed, nil, nil)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q/%q: with the schema's metadata\n  %v\nwith the whole metadata\n  %v", c.name, c.generateName, got, want)
		}
		if len(want) > 0 {
			failed++
		}
	}
	if failed < len(cases)-3 {
		t.Errorf("%d of %d cases failed validation; the cases no longer exercise the constraints", failed, len(cases))
	}
}
