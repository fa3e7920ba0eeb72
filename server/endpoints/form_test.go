package endpoints

import (
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// formGadgets is a Gadget schema whose constraints only the request's JSON
// shows: the Go type drops an explicit "" or [] (omitempty), and cannot
// hold a string in ports.
func formGadgets() string {
	s := strings.Replace(gadgetSchema(""), `"zone":{"type":"string"}`, `"zone":{"type":"string","minLength":1}`, 1)
	return strings.Replace(s, `"tags":{"type":"array","items":{"type":"string"}}`, `"tags":{"type":"array","minItems":1,"items":{"type":"string"}}`, 1)
}

// TestRequestFormIsValidated: every write path validates what a CRD
// validates, the request's JSON (a body, a patch's result, /status's
// status) rather than the Go object it decodes into: an explicit "" or []
// that omitempty drops is seen, and a value of the wrong type is the
// schema's 422, not the decoder's 400.
func TestRequestFormIsValidated(t *testing.T) {
	def := gadgetDefinition()
	def.Schema = formGadgets()
	e := newEnvWith(t, false, def)
	minLength := [2]string{"FieldValueInvalid", "spec.zone"}
	minItems := [2]string{"FieldValueInvalid", "spec.tags"}
	typeInvalid := [2]string{"FieldValueTypeInvalid", "spec.ports[0]"}

	post := func(body string) response {
		return e.do("POST", gadgetsPath, "application/json", body)
	}
	wantInvalid(t, post(`{"metadata":{"name":"a"},"spec":{"zone":""}}`), "a", minLength)
	wantInvalid(t, post(`{"metadata":{"name":"a"},"spec":{"zone":"z","tags":[]}}`), "a", minItems)
	wantInvalid(t, post(`{"metadata":{"name":"a"},"spec":{"zone":"z","ports":["x"]}}`), "a", typeInvalid)
	wantInvalid(t, e.do("POST", gadgetsPath+"?dryRun=All", "application/json", `{"metadata":{"name":"a"},"spec":{"zone":""}}`), "a", minLength)

	if r := post(`{"metadata":{"name":"g"},"spec":{"zone":"z"}}`); r.code != http.StatusCreated {
		t.Fatalf("create: %d %s", r.code, r.body)
	}
	cur := e.do("GET", gadgetsPath+"/g", "", "")
	put := strings.Replace(string(cur.body), `"zone":"z"`, `"zone":""`, 1)
	wantInvalid(t, e.do("PUT", gadgetsPath+"/g", "application/json", put), "g", minLength)
	put = strings.Replace(string(cur.body), `"zone":"z"`, `"zone":"z","ports":["x"]`, 1)
	wantInvalid(t, e.do("PUT", gadgetsPath+"/g", "application/json", put), "g", typeInvalid)
	wantInvalid(t, e.do("PATCH", gadgetsPath+"/g", "application/merge-patch+json", `{"spec":{"tags":[]}}`), "g", minItems)
	wantInvalid(t, e.do("PATCH", gadgetsPath+"/g", "application/json-patch+json", `[{"op":"add","path":"/spec/ports","value":["x"]}]`), "g", typeInvalid)
	wantInvalid(t, e.do("PATCH", gadgetsPath+"/g", "application/strategic-merge-patch+json", `{"spec":{"zone":""}}`), "g", minLength)
	wantInvalid(t, e.do("PATCH", gadgetsPath+"/g", "application/strategic-merge-patch+json", `{"spec":{"ports":["x"]}}`), "g", typeInvalid)

	// /status: the stored object with the request's status.
	base := widgetsPath + "form/widgets/"
	e.createWidget("form", "w", "red")
	statusType := [2]string{"FieldValueTypeInvalid", "status.phase"}
	cur = e.do("GET", base+"w", "", "")
	put = strings.Replace(string(cur.body), `"status":{}`, `"status":{"phase":5}`, 1)
	if put == string(cur.body) {
		t.Fatalf("no empty status in %s", cur.body)
	}
	wantInvalid(t, e.do("PUT", base+"w/status", "application/json", put), "w", statusType)
	wantInvalid(t, e.do("PATCH", base+"w/status", "application/merge-patch+json", `{"status":{"phase":5}}`), "w", statusType)
}

// TestUndecodableBodyTheSchemaAccepts: a body the schema accepts but the Go
// type cannot hold is still the decoder's 400 (here a schema that allows a
// string where the type has an integer), on create, update and patch.
func TestUndecodableBodyTheSchemaAccepts(t *testing.T) {
	def := gadgetDefinition()
	def.Schema = strings.Replace(gadgetSchema(""), `"items":{"type":"integer","format":"int32","minimum":1}`, `"items":{"x-kubernetes-int-or-string":true}`, 1)
	e := newEnvWith(t, false, def)
	e.do("POST", gadgetsPath, "application/json", `{"metadata":{"name":"a"},"spec":{"ports":["x"]}}`).
		wantStatus(t, 400, metav1.StatusReasonBadRequest, `the object provided is unrecognized (must be of type Gadget): json: cannot unmarshal string into Go struct field gadgetSpec.spec.ports of type int32 ({"metadata":{"name":"a"},"spec ...)`)
	if r := e.do("POST", gadgetsPath, "application/json", `{"metadata":{"name":"g"}}`); r.code != http.StatusCreated {
		t.Fatalf("create: %d %s", r.code, r.body)
	}
	st := e.do("PATCH", gadgetsPath+"/g", "application/merge-patch+json", `{"spec":{"ports":["x"]}}`).
		wantStatus(t, 422, metav1.StatusReasonInvalid, "")
	if !strings.HasPrefix(st.Message, ` "" is invalid: patch: `) {
		t.Errorf("patch: %q, want the 422 on the field patch of a result that does not decode", st.Message)
	}
	// Nothing was stored.
	r := e.do("GET", gadgetsPath+"/g", "", "")
	if r.code != http.StatusOK || strings.Contains(string(r.body), "ports") {
		t.Fatalf("after refused writes: %d %s", r.code, r.body)
	}
}
