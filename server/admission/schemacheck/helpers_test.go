package schemacheck

import (
	"context"
	"encoding/json"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiloom/apiloom/server/resource"
)

// widgetSchema is a schema as controller-gen writes one: markers
// (minimum, maximum, maxLength, enum, required, default), a list map, a
// transition rule (oldSelf) and a rule with messageExpression, reason and
// fieldPath.
const widgetSchema = `{
  "type": "object",
  "properties": {
    "apiVersion": {"type": "string"},
    "kind": {"type": "string"},
    "metadata": {"type": "object"},
    "spec": {
      "type": "object",
      "required": ["name"],
      "properties": {
        "name": {"type": "string", "maxLength": 8},
        "size": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 9, "default": 1},
        "mode": {"type": "string", "enum": ["a", "b"], "maxLength": 8, "default": "a"},
        "class": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "Value is immutable"}]},
        "items": {
          "type": "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["key"],
          "items": {
            "type": "object",
            "required": ["key"],
            "properties": {"key": {"type": "string"}, "value": {"type": "integer", "minimum": 0}}
          }
        }
      },
      "x-kubernetes-validations": [{
        "rule": "!has(self.size) || self.size <= 5 || has(self.mode) && self.mode == 'b'",
        "messageExpression": "'mode ' + (has(self.mode) ? self.mode : 'unset') + ' allows no size above 5'",
        "reason": "FieldValueForbidden",
        "fieldPath": ".mode"
      }]
    },
    "status": {
      "type": "object",
      "properties": {
        "phase": {"type": "string", "enum": ["Pending", "Ready"]},
        "count": {"type": "integer", "minimum": 0}
      }
    }
  }
}`

// widgetInfo is a namespaced kind with a status subresource and schema.
func widgetInfo(schema string) *resource.Info {
	return &resource.Info{
		Group: "test.apiloom.dev", Version: "v1", Kind: "Widget", ListKind: "WidgetList",
		Plural: "widgets", Singular: "widget", Namespaced: true, HasStatus: true,
		Schema: schema,
	}
}

// newCheck builds the Check of schema, failing the test on an error.
func newCheck(t *testing.T, schema string) *Check {
	t.Helper()
	c, err := New(context.Background(), widgetInfo(schema))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// object decodes a JSON object.
func object(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	// As kube-apiserver decodes a body: integers are int64.
	if err := utiljson.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("object %s: %v", s, err)
	}
	return m
}

// messages are the errors' strings, as a 422's causes show them.
func messages(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// mustJSON encodes v.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
