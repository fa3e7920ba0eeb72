package endpoints

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// testSchemas are the OpenAPI v3 schemas of the test resources, in the
// shape discovery.Models gives the server's (components keyed by name,
// kinds tagged with x-kubernetes-group-version-kind), so the tests merge
// applies as the server does: by schema, with Gadget's tags a
// +listType=set and its ports an atomic list. ObjectMeta has the fields
// the tests set, with the list and map types of the real one.
const testSchemas = `{
  "meta.ObjectMeta": {"type": "object", "properties": {
    "name": {"type": "string"}, "generateName": {"type": "string"}, "namespace": {"type": "string"},
    "uid": {"type": "string"}, "resourceVersion": {"type": "string"}, "generation": {"type": "integer", "format": "int64"},
    "creationTimestamp": {"type": "string", "format": "date-time"}, "deletionTimestamp": {"type": "string", "format": "date-time"},
    "deletionGracePeriodSeconds": {"type": "integer", "format": "int64"},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
    "finalizers": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
    "managedFields": {"type": "array", "items": {"$ref": "#/components/schemas/meta.ManagedFieldsEntry"}}
  }},
  "meta.ManagedFieldsEntry": {"type": "object", "properties": {
    "manager": {"type": "string"}, "operation": {"type": "string"}, "apiVersion": {"type": "string"},
    "time": {"type": "string", "format": "date-time"}, "fieldsType": {"type": "string"},
    "fieldsV1": {"type": "object"}, "subresource": {"type": "string"}
  }},
  "test.Widget": {"type": "object",
    "x-kubernetes-group-version-kind": [{"group": "storagetest.apiloom.dev", "version": "v1", "kind": "Widget"}],
    "properties": {
      "apiVersion": {"type": "string"}, "kind": {"type": "string"},
      "metadata": {"$ref": "#/components/schemas/meta.ObjectMeta"},
      "spec": {"type": "object", "properties": {"size": {"type": "integer"}, "color": {"type": "string"}}},
      "status": {"type": "object", "properties": {"phase": {"type": "string"}}}
  }},
  "test.Gadget": {"type": "object",
    "x-kubernetes-group-version-kind": [{"group": "storagetest.apiloom.dev", "version": "v1", "kind": "Gadget"}],
    "properties": {
      "apiVersion": {"type": "string"}, "kind": {"type": "string"},
      "metadata": {"$ref": "#/components/schemas/meta.ObjectMeta"},
      "spec": {"type": "object", "properties": {
        "zone": {"type": "string"},
        "ports": {"type": "array", "items": {"type": "integer", "format": "int32"}},
        "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}
      }}
  }}
}`

// testTypeConverter is the type converter of the test resources.
func testTypeConverter(t testing.TB) managedfields.TypeConverter {
	t.Helper()
	var models map[string]*spec.Schema
	if err := json.Unmarshal([]byte(testSchemas), &models); err != nil {
		t.Fatal(err)
	}
	tc, err := managedfields.NewTypeConverter(models, false)
	if err != nil {
		t.Fatal(err)
	}
	return tc
}
