package endpoints

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
		st := r.wantStatus(t, 422, metav1.StatusReasonInvalid, `Widget.storagetest.apiloom.dev "big" is invalid: spec.size: Invalid value: 101: should be less than or equal to 100`)
		if len(st.Details.Causes) != 1 || st.Details.Causes[0].Message != "Invalid value: 101: should be less than or equal to 100" {
			t.Errorf("causes = %+v", st.Details.Causes)
		}
		e.do("GET", base+"/big", "", "").wantStatus(t, 404, metav1.StatusReasonNotFound, "")
	})

	w := e.createWidget(ns, "w", "red")
	t.Run("update and patch, with and without dryRun", func(t *testing.T) {
		bad := *w
		bad.Spec.Size = 500
		for _, q := range []string{"", "?dryRun=All"} {
			wantInvalid(t, e.put(base+"/w"+q, &bad), "w", tooBig)
			wantInvalid(t, e.do("PATCH", base+"/w"+q, "application/merge-patch+json", `{"spec":{"size":500}}`), "w", tooBig)
			wantInvalid(t, e.do("PATCH", base+"/w"+q, "application/json-patch+json", `[{"op":"replace","path":"/spec/size","value":500}]`), "w", tooBig)
		}
		got := e.do("GET", base+"/w", "", "").widget(t, http.StatusOK)
		if got.Spec.Size != w.Spec.Size || got.ResourceVersion != w.ResourceVersion {
			t.Errorf("stored %+v after rejected writes", got)
		}
	})

	t.Run("status writes are validated", func(t *testing.T) {
		bad := *w
		bad.Status.Phase = "ThisIsFarTooLong"
		tooLong := [2]string{"FieldValueTooLong", "status.phase"}
		wantInvalid(t, e.put(base+"/w/status", &bad), "w", tooLong)
		wantInvalid(t, e.do("PATCH", base+"/w/status", "application/merge-patch+json", `{"status":{"phase":"ThisIsFarTooLong"}}`), "w", tooLong)
		// The main resource ignores the status, so the same body is fine there.
		e.put(base+"/w", &bad).widget(t, http.StatusOK)
	})
}

func TestDefaulting(t *testing.T) {
	def := gadgetDefinition()
	def.Default = func(g *gadget) { // +kubebuilder:default=nowhere on spec.zone
		if g.Spec.Zone == "" {
			g.Spec.Zone = "nowhere"
		}
	}
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
}
