package endpoints

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// The tests below validate writes by the kinds' schemas (widgetSchema,
// gadgetSchema), each as kube-apiserver answers the same write to a CRD
// with the same openAPIV3Schema; the messages are upstream's
// (k8s.io/apiextensions-apiserver's validators).

// causes are the (type, field) pairs of a 422's details.
func causes(st metav1.Status) [][2]string {
	var out [][2]string
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			out = append(out, [2]string{string(c.Type), c.Field})
		}
	}
	return out
}

func wantInvalid(t *testing.T, r response, name string, want ...[2]string) {
	t.Helper()
	st := r.wantStatus(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
	if st.Details == nil || st.Details.Kind != "Widget" && st.Details.Kind != "Gadget" || st.Details.Group != "storagetest.apiloom.dev" || st.Details.Name != name {
		t.Errorf("details = %+v, want the kind, group and name %q", st.Details, name)
	}
	if got := causes(st); !reflect.DeepEqual(got, want) {
		t.Errorf("causes = %v, want %v", got, want)
	}
}

// TestValidation: every write path validates by the schema, metadata
// violations first, all in one 422 Invalid naming the kind, and stores
// nothing; as a CRD's create, update, patch and apply do.
func TestValidation(t *testing.T) {
	e := newEnv(t, false)
	ns := "validation"
	base := widgetsPath + ns + "/widgets"
	tooBig := [2]string{"FieldValueInvalid", "spec.size"}

	t.Run("create: metadata and field errors in one 422, nothing stored", func(t *testing.T) {
		for _, q := range []string{"", "?dryRun=All"} {
			r := e.do("POST", base+q, "application/json", `{"metadata":{"name":"Bad_Name"},"spec":{"size":101}}`)
			wantInvalid(t, r, "Bad_Name", [2]string{"FieldValueInvalid", "metadata.name"}, tooBig)
		}
		r := e.do("POST", base, "application/json", `{"metadata":{"name":"big"},"spec":{"size":101}}`)
		st := r.wantStatus(t, 422, metav1.StatusReasonInvalid, `Widget.storagetest.apiloom.dev "big" is invalid: spec.size: Invalid value: 101: spec.size in body should be less than or equal to 100`)
		if len(st.Details.Causes) != 1 || st.Details.Causes[0].Message != "Invalid value: 101: spec.size in body should be less than or equal to 100" {
			t.Errorf("causes = %+v", st.Details.Causes)
		}
		e.do("GET", base+"/big", "", "").wantStatus(t, 404, metav1.StatusReasonNotFound, "")
		wantInvalid(t, e.apply(base+"/big?fieldManager=a", widgetYAML("big", "spec: {size: 101}")), "big", tooBig)
		e.do("GET", base+"/big", "", "").wantStatus(t, 404, metav1.StatusReasonNotFound, "")
	})

	w := e.createWidget(ns, "w", "red")
	t.Run("update, patch and apply, with and without dryRun", func(t *testing.T) {
		bad := *w
		bad.Spec.Size = 500
		for _, q := range []string{"", "?dryRun=All"} {
			wantInvalid(t, e.put(base+"/w"+q, &bad), "w", tooBig)
			wantInvalid(t, e.do("PATCH", base+"/w"+q, "application/merge-patch+json", `{"spec":{"size":500}}`), "w", tooBig)
			wantInvalid(t, e.do("PATCH", base+"/w"+q, "application/json-patch+json", `[{"op":"replace","path":"/spec/size","value":500}]`), "w", tooBig)
			sep := "?"
			if q != "" {
				sep = "&"
			}
			wantInvalid(t, e.apply(base+"/w"+q+sep+"fieldManager=a&force=true", widgetYAML("w", "spec: {size: 500}")), "w", tooBig)
		}
		got := e.do("GET", base+"/w", "", "").widget(t, http.StatusOK)
		if got.Spec.Size != w.Spec.Size || got.ResourceVersion != w.ResourceVersion {
			t.Errorf("stored %+v after rejected writes", got)
		}
	})

	t.Run("status writes validate the status", func(t *testing.T) {
		bad := *w
		bad.Status.Phase = "ThisIsFarTooLong"
		tooLong := [2]string{"FieldValueTooLong", "status.phase"}
		wantInvalid(t, e.put(base+"/w/status", &bad), "w", tooLong)
		wantInvalid(t, e.do("PATCH", base+"/w/status", "application/merge-patch+json", `{"status":{"phase":"ThisIsFarTooLong"}}`), "w", tooLong)
		wantInvalid(t, e.apply(base+"/w/status?fieldManager=a", widgetYAML("w", "status: {phase: ThisIsFarTooLong}")), "w", tooLong)
		// The main resource ignores the status, so the same body is fine there.
		e.put(base+"/w", &bad).widget(t, http.StatusOK)
	})
}

// TestRatcheting: a CRD's update (since 1.33) accepts a value that fails
// the schema when the stored object already had it, and refuses a changed
// one; a /status write validates only the status, so an object whose spec
// a tightened schema refuses still takes status writes.
func TestRatcheting(t *testing.T) {
	e := newEnv(t, false)
	ns := "ratchet"
	base := widgetsPath + ns + "/widgets"
	// Stored before the schema's maximum of 100 existed.
	old := storagetest.NewWidget(ns, "old", "red")
	old.Spec.Size = 500
	if _, err := e.widgets.Create(e.ctx, storage.Key(ns, "old"), old); err != nil {
		t.Fatal(err)
	}
	w := e.do("GET", base+"/old", "", "").widget(t, http.StatusOK)

	w.Spec.Color = "blue"
	w = e.put(base+"/old", w).widget(t, http.StatusOK)
	w = e.do("PATCH", base+"/old", "application/merge-patch+json", `{"metadata":{"labels":{"a":"b"}}}`).widget(t, http.StatusOK)
	w = e.apply(base+"/old?fieldManager=a&force=true", widgetYAML("old", "spec: {color: green}")).widget(t, http.StatusOK)

	w.Status.Phase = "Ready"
	w = e.put(base+"/old/status", w).widget(t, http.StatusOK)
	w = e.do("PATCH", base+"/old/status", "application/merge-patch+json", `{"status":{"phase":"Done"}}`).widget(t, http.StatusOK)
	if w.Spec.Size != 500 || w.Spec.Color != "green" || w.Status.Phase != "Done" {
		t.Fatalf("stored %+v", w)
	}

	// Changing the invalid value to another invalid one is refused.
	wantInvalid(t, e.do("PATCH", base+"/old", "application/merge-patch+json", `{"spec":{"size":501}}`), "old", [2]string{"FieldValueInvalid", "spec.size"})
	e.do("PATCH", base+"/old", "application/merge-patch+json", `{"spec":{"size":100}}`).widget(t, http.StatusOK)
}

// TestDefaulting: a CRD defaults what a write leaves out, before the
// field manager records it and before validation, on every write path.
func TestDefaulting(t *testing.T) {
	def := gadgetDefinition()
	def.Schema = gadgetSchema("nowhere")
	e := newEnvWith(t, false, def)
	var g gadget
	r := e.do("POST", gadgetsPath, "application/json", `{"metadata":{"name":"d"},"spec":{"ports":[80]}}`)
	if r.code != http.StatusCreated {
		t.Fatalf("create: %d %s", r.code, r.body)
	}
	if err := json.Unmarshal(r.body, &g); err != nil || g.Spec.Zone != "nowhere" {
		t.Fatalf("created %s, want spec.zone defaulted", r.body)
	}

	// Omitting a defaulted field in an update is no spec change.
	g.Spec.Zone = ""
	r = e.put(gadgetsPath+"/d", &g)
	var got gadget
	if err := json.Unmarshal(r.body, &got); err != nil || r.code != http.StatusOK || got.Spec.Zone != "nowhere" || got.Generation != 1 {
		t.Fatalf("update: %d %s, want zone defaulted and generation 1", r.code, r.body)
	}
	r = e.do("PATCH", gadgetsPath+"/d", "application/merge-patch+json", `{"spec":{"zone":null,"ports":[0,8080,-1]}}`)
	st := r.wantStatus(t, 422, metav1.StatusReasonInvalid, "")
	if want := [][2]string{{"FieldValueInvalid", "spec.ports[0]"}, {"FieldValueInvalid", "spec.ports[2]"}}; !reflect.DeepEqual(causes(st), want) {
		t.Errorf("causes = %v, want %v", causes(st), want)
	}
	r = e.apply(gadgetsPath+"/a?fieldManager=a", "apiVersion: storagetest.apiloom.dev/v1\nkind: Gadget\nmetadata: {name: a}\nspec: {ports: [1]}")
	if err := json.Unmarshal(r.body, &got); err != nil || r.code != http.StatusCreated || got.Spec.Zone != "nowhere" {
		t.Fatalf("apply: %d %s, want zone defaulted", r.code, r.body)
	}
}

// TestCELRules: x-kubernetes-validations rules run on every write with the
// CRD's messages: a transition rule (oldSelf) on update and apply, a rule
// with messageExpression and reason on create.
func TestCELRules(t *testing.T) {
	def := gadgetDefinition()
	def.Schema = strings.Replace(gadgetSchema(""), `"zone":{"type":"string"}`,
		`"zone":{"type":"string","maxLength":16,"x-kubernetes-validations":[
		  {"rule":"self == oldSelf","message":"zone is immutable"},
		  {"rule":"self != 'moon'","messageExpression":"'no gadgets on the ' + self","reason":"FieldValueForbidden"}]}`, 1)
	e := newEnvWith(t, false, def)
	r := e.do("POST", gadgetsPath, "application/json", `{"metadata":{"name":"m"},"spec":{"zone":"moon"}}`)
	r.wantStatus(t, 422, metav1.StatusReasonInvalid, `Gadget.storagetest.apiloom.dev "m" is invalid: spec.zone: Forbidden: no gadgets on the moon`)

	r = e.do("POST", gadgetsPath, "application/json", `{"metadata":{"name":"g"},"spec":{"zone":"earth"}}`)
	if r.code != http.StatusCreated {
		t.Fatalf("create: %d %s", r.code, r.body)
	}
	const immutable = `Gadget.storagetest.apiloom.dev "g" is invalid: spec.zone: Invalid value: "mars": zone is immutable`
	e.do("PATCH", gadgetsPath+"/g", "application/merge-patch+json", `{"spec":{"zone":"mars"}}`).wantStatus(t, 422, metav1.StatusReasonInvalid, immutable)
	e.apply(gadgetsPath+"/g?fieldManager=a&force=true", "apiVersion: storagetest.apiloom.dev/v1\nkind: Gadget\nmetadata: {name: g}\nspec: {zone: mars}").wantStatus(t, 422, metav1.StatusReasonInvalid, immutable)
	r = e.do("PATCH", gadgetsPath+"/g", "application/merge-patch+json", `{"spec":{"ports":[1]}}`)
	if r.code != http.StatusOK {
		t.Fatalf("patch leaving the zone: %d %s", r.code, r.body)
	}
}

// TestNoSchema: a kind without a schema is validated only by the metadata
// rules, as a CRD version without a schema (x-kubernetes-preserve-unknown
// fields) would be.
func TestNoSchema(t *testing.T) {
	def := gadgetDefinition()
	def.Schema = ""
	e := newEnvWith(t, false, def)
	r := e.do("POST", gadgetsPath, "application/json", `{"metadata":{"name":"n"},"spec":{"ports":[0]}}`)
	if r.code != http.StatusCreated {
		t.Fatalf("create: %d %s", r.code, r.body)
	}
	wantInvalid(t, e.do("POST", gadgetsPath, "application/json", `{"metadata":{"name":"N"}}`), "N", [2]string{"FieldValueInvalid", "metadata.name"})
}
