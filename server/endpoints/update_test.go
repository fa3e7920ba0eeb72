package endpoints

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// put sends w as the body of a PUT to path.
func (e *env) put(path string, w any) response {
	e.t.Helper()
	body, err := json.Marshal(w)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.do("PUT", path, "application/json", string(body))
}

func TestUpdate(t *testing.T) {
	e := newEnv(t, false)
	base := widgetsPath + "update/widgets/"

	t.Run("spec change bumps generation, status is kept", func(t *testing.T) {
		w := e.createWidget("update", "a", "red")
		w.Spec.Color = "blue"
		w.Status.Phase = "Hacked"
		got := e.put(base+"a", w).widget(t, http.StatusOK)
		if got.Spec.Color != "blue" || got.Generation != 2 || got.Status.Phase != "" || got.ResourceVersion == w.ResourceVersion {
			t.Fatalf("updated %+v", got)
		}
		got.Labels = map[string]string{"x": "y"}
		again := e.put(base+"a", got).widget(t, http.StatusOK)
		if again.Generation != 2 || again.Labels["x"] != "y" {
			t.Fatalf("metadata-only update: generation %d labels %v", again.Generation, again.Labels)
		}
	})

	t.Run("missing resourceVersion is 422", func(t *testing.T) {
		w := e.createWidget("update", "norv", "red")
		w.ResourceVersion = ""
		e.put(base+"norv", w).wantStatus(t, 422, metav1.StatusReasonInvalid,
			`widgets.storagetest.apiloom.dev "norv" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`)
	})

	t.Run("stale resourceVersion is 409", func(t *testing.T) {
		w := e.createWidget("update", "stale", "red")
		w.Spec.Color = "green"
		e.put(base+"stale", w).widget(t, http.StatusOK)
		w.Spec.Color = "black"
		e.put(base+"stale", w).wantStatus(t, 409, metav1.StatusReasonConflict,
			`Operation cannot be fulfilled on widgets.storagetest.apiloom.dev "stale": the object has been modified; please apply your changes to the latest version and try again`)
	})

	t.Run("missing object is 404", func(t *testing.T) {
		e.do("PUT", base+"ghost", "application/json", `{"metadata":{"name":"ghost","resourceVersion":"5"}}`).
			wantStatus(t, 404, metav1.StatusReasonNotFound, `widgets.storagetest.apiloom.dev "ghost" not found`)
	})

	t.Run("name must match the URL", func(t *testing.T) {
		w := e.createWidget("update", "named", "red")
		w.Name = "other"
		e.put(base+"named", w).wantStatus(t, 400, metav1.StatusReasonBadRequest, "the name of the object (other) does not match the name on the URL (named)")
		w.Name = ""
		e.put(base+"named", w).wantStatus(t, 400, metav1.StatusReasonBadRequest, "the name of the object (named based on URL) was undeterminable: name must be provided")
	})

	t.Run("namespace must match the URL, checked first", func(t *testing.T) {
		// kube-apiserver v1.37 words it so for a PUT (checked on a CRD)
		// and for every patch type (on a Deployment and a ConfigMap), and
		// checks it before the name.
		const msg = "the namespace of the provided object does not match the namespace sent on the request"
		w := e.createWidget("update", "spaced", "red")
		w.Namespace, w.Name = "other", "other"
		e.put(base+"spaced", w).wantStatus(t, 400, metav1.StatusReasonBadRequest, msg)
		for _, ct := range []string{"application/merge-patch+json", "application/strategic-merge-patch+json"} {
			e.do("PATCH", base+"spaced", ct, `{"metadata":{"namespace":"other","name":"other"}}`).wantStatus(t, 400, metav1.StatusReasonBadRequest, msg)
		}
	})

	t.Run("uid and creationTimestamp are immutable", func(t *testing.T) {
		w := e.createWidget("update", "imm", "red")
		created := w.CreationTimestamp
		w.CreationTimestamp = metav1.Unix(1, 0)
		w.UID = ""
		got := e.put(base+"imm", w).widget(t, http.StatusOK)
		if !got.CreationTimestamp.Equal(&created) || got.UID == "" {
			t.Fatalf("system fields not kept: %+v", got.ObjectMeta)
		}
		got.UID = "changed"
		st := e.put(base+"imm", got).wantStatus(t, 422, metav1.StatusReasonInvalid, "")
		if !strings.Contains(st.Message, "metadata.uid") || !strings.Contains(st.Message, "field is immutable") {
			t.Fatalf("message %q", st.Message)
		}
	})

	t.Run("dryRun stores nothing", func(t *testing.T) {
		w := e.createWidget("update", "dry", "red")
		w.Spec.Color = "blue"
		got := e.put(base+"dry?dryRun=All", w).widget(t, http.StatusOK)
		if got.Spec.Color != "blue" {
			t.Fatalf("dry run result %+v", got.Spec)
		}
		stored := e.do("GET", base+"dry", "", "").widget(t, http.StatusOK)
		if stored.Spec.Color != "red" || stored.ResourceVersion != w.ResourceVersion {
			t.Fatalf("dry run stored %+v", stored)
		}
	})

	t.Run("cluster-scoped", func(t *testing.T) {
		r := e.do("POST", gadgetsPath, "application/json", `{"metadata":{"name":"gu"},"spec":{"zone":"a"}}`)
		var g gadget
		decodeJSON(t, r.body, &g)
		g.Spec.Zone = "b"
		r = e.put(gadgetsPath+"/gu", &g)
		decodeJSON(t, r.body, &g)
		if r.code != 200 || g.Spec.Zone != "b" || g.Generation != 2 {
			t.Fatalf("%d %s", r.code, r.body)
		}
	})
}

func TestStatusSubresource(t *testing.T) {
	e := newEnv(t, false)
	base := widgetsPath + "status/widgets/"
	w := e.createWidget("status", "s", "red")

	w.Status.Phase = "Ready"
	w.Spec.Color = "ignored"
	w.Labels = map[string]string{"ignored": "too"}
	got := e.put(base+"s/status", w).widget(t, http.StatusOK)
	if got.Status.Phase != "Ready" || got.Spec.Color != "red" || got.Labels != nil || got.Generation != 1 {
		t.Fatalf("status update changed more than status: %+v", got)
	}
	viaGet := e.do("GET", base+"s/status", "", "").widget(t, http.StatusOK)
	if viaGet.Status.Phase != "Ready" || viaGet.ResourceVersion != got.ResourceVersion {
		t.Fatalf("GET status %+v", viaGet)
	}

	// A stale status update conflicts like a main one.
	e.put(base+"s/status", w).wantStatus(t, 409, metav1.StatusReasonConflict, "")

	patched := e.do("PATCH", base+"s/status", "application/merge-patch+json", `{"status":{"phase":"Degraded"},"spec":{"color":"nope"}}`).widget(t, http.StatusOK)
	if patched.Status.Phase != "Degraded" || patched.Spec.Color != "red" {
		t.Fatalf("status patch %+v", patched)
	}

	// The main resource ignores status.
	patched = e.do("PATCH", base+"s", "application/merge-patch+json", `{"status":{"phase":"Nope"},"spec":{"color":"green"}}`).widget(t, http.StatusOK)
	if patched.Status.Phase != "Degraded" || patched.Spec.Color != "green" || patched.Generation != 2 {
		t.Fatalf("main patch %+v", patched)
	}

	// Resources without status have no /status.
	e.do("POST", gadgetsPath, "application/json", `{"metadata":{"name":"nostatus"}}`)
	e.do("GET", gadgetsPath+"/nostatus/status", "", "").wantStatus(t, 404, metav1.StatusReasonNotFound, "the server could not find the requested resource")
	e.do("DELETE", base+"s/status", "", "").wantStatus(t, 405, metav1.StatusReasonMethodNotAllowed, `delete is not supported on resources of kind "widgets.storagetest.apiloom.dev"`)
}

// TestNamespaceMismatch: a body naming another namespace is worded the
// same on every write, as kube-apiserver checks the namespace before the
// name everywhere.
func TestNamespaceMismatch(t *testing.T) {
	e := newEnv(t, false)
	base := widgetsPath + "nsm/widgets/"
	w := e.createWidget("nsm", "w", "red")
	const msg = "the namespace of the provided object does not match the namespace sent on the request"
	w.Namespace = "other"
	e.put(base+"w", w).wantStatus(t, 400, metav1.StatusReasonBadRequest, msg)
	e.do("PATCH", base+"w", "application/merge-patch+json", `{"metadata":{"namespace":"other"}}`).wantStatus(t, 400, metav1.StatusReasonBadRequest, msg)
	e.apply(base+"w?fieldManager=a", widgetYAML("w", "metadata: {name: w, namespace: other}")).wantStatus(t, 400, metav1.StatusReasonBadRequest, msg)
}
