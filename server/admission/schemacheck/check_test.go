package schemacheck

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestNewEmptySchema(t *testing.T) {
	c, err := New(context.Background(), widgetInfo(""))
	if c != nil || err != nil {
		t.Fatalf("New of an empty schema = %v, %v; want nil, nil", c, err)
	}
}

// TestNewRefusesWhatACRDRefuses: a schema kube-apiserver would refuse in a
// CRD is an error at start that names the kind and the problem.
func TestNewRefusesWhatACRDRefuses(t *testing.T) {
	cases := []struct {
		name, schema, want string
	}{
		{"not JSON", `{"type":`, "not a JSONSchemaProps"},
		{"unknown field", `{"type":"object","maxLenght":3}`, `unknown field "maxLenght"`},
		{"not structural: no type", `{"type":"object","properties":{"spec":{"properties":{"a":{"type":"string"}}}}}`,
			"spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"},
		{"default that fails its schema", `{"type":"object","properties":{"spec":{"type":"object","properties":{"a":{"type":"integer","minimum":1,"default":0}}}}}`,
			"spec.validation.openAPIV3Schema.properties[spec].properties[a].default: Invalid value: 0:  in body should be greater than or equal to 1"},
		{"CEL rule that does not compile", `{"type":"object","properties":{"spec":{"type":"object","properties":{"a":{"type":"string"}},"x-kubernetes-validations":[{"rule":"self.b == 1"}]}}}`,
			"spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: {\"Rule\":\"self.b == 1\",\"Message\":\"\",\"MessageExpression\":\"\",\"Reason\":null,\"FieldPath\":\"\",\"OptionalOldSelf\":null}: compilation failed: ERROR: <input>:1:5: undefined field 'b'"},
		{"CEL rule over the static cost limit", `{"type":"object","properties":{"spec":{"type":"object","properties":{"l":{"type":"array","items":{"type":"string"}}},"x-kubernetes-validations":[{"rule":"self.l.all(x, self.l.all(y, self.l.all(z, x + y + z != 'abc')))"}]}}}`,
			"exceeds budget by factor of"},
		{"messageExpression that is not a string", `{"type":"object","properties":{"spec":{"type":"object","properties":{"a":{"type":"string"}},"x-kubernetes-validations":[{"rule":"true","messageExpression":"1"}]}}}`,
			"x-kubernetes-validations[0].messageExpression: Invalid value: {\"Rule\":\"true\",\"Message\":\"\",\"MessageExpression\":\"1\",\"Reason\":null,\"FieldPath\":\"\",\"OptionalOldSelf\":null}: messageExpression must evaluate to a string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(context.Background(), widgetInfo(tc.schema))
			if err == nil {
				t.Fatalf("New = %v, nil; want an error", c)
			}
			if !errors.Is(err, ErrInvalidSchema) {
				t.Errorf("error %v does not wrap ErrInvalidSchema", err)
			}
			if !strings.Contains(err.Error(), "kind Widget (widgets.test.apiloom.dev)") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error:\n%v\nwant it to name the kind and contain\n%s", err, tc.want)
			}
		})
	}
}

func TestNewAcceptsControllerGenSchema(t *testing.T) {
	c := newCheck(t, widgetSchema)
	if !c.HasDefaults() {
		t.Error("HasDefaults = false for a schema with defaults")
	}
	if newCheck(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{"a":{"type":"string"}}}}}`).HasDefaults() {
		t.Error("HasDefaults = true for a schema without defaults")
	}
}
