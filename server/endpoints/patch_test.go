package endpoints

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPatch(t *testing.T) {
	e := newEnv(t, false)
	base := widgetsPath + "patch/widgets/"
	e.createWidget("patch", "p", "red", "app", "x")

	t.Run("merge patch", func(t *testing.T) {
		got := e.do("PATCH", base+"p", "application/merge-patch+json", `{"spec":{"size":7},"metadata":{"labels":{"app":null,"tier":"db"}}}`).widget(t, http.StatusOK)
		if got.Spec.Size != 7 || got.Spec.Color != "red" || got.Labels["tier"] != "db" || got.Labels["app"] != "" || got.Generation != 2 {
			t.Fatalf("patched %+v", got)
		}
	})

	t.Run("json patch", func(t *testing.T) {
		got := e.do("PATCH", base+"p", "application/json-patch+json", `[{"op":"replace","path":"/spec/color","value":"blue"},{"op":"test","path":"/spec/size","value":7}]`).widget(t, http.StatusOK)
		if got.Spec.Color != "blue" {
			t.Fatalf("patched %+v", got.Spec)
		}
		e.do("PATCH", base+"p", "application/json-patch+json", `[{"op":"test","path":"/spec/size","value":8}]`).wantStatus(t, 422, metav1.StatusReasonInvalid, "")
		e.do("PATCH", base+"p", "application/json-patch+json", `{"op":"add"}`).wantStatus(t, 400, metav1.StatusReasonBadRequest, "")
	})

	t.Run("json patch copies are bounded", func(t *testing.T) {
		// Each copy of the list into itself doubles it: 40 of them are a
		// few hundred bytes of patch and a terabyte of document. As
		// kube-apiserver (3 MiB of copies): 422, at once, nothing stored.
		ops := `[{"op":"add","path":"/spec/list","value":["xxxxxxxxxx"]}` +
			strings.Repeat(`,{"op":"copy","from":"/spec/list","path":"/spec/list/-"}`, 40) + `]`
		before := e.do("GET", base+"p", "", "").widget(t, http.StatusOK)
		e.do("PATCH", base+"p", "application/json-patch+json", ops).wantStatus(t, 422, metav1.StatusReasonInvalid,
			"the server rejected our request due to an error in our request")
		if after := e.do("GET", base+"p", "", "").widget(t, http.StatusOK); after.ResourceVersion != before.ResourceVersion {
			t.Errorf("the refused patch changed the object: %s -> %s", before.ResourceVersion, after.ResourceVersion)
		}
	})

	t.Run("resourceVersion in the patch is a precondition", func(t *testing.T) {
		cur := e.do("GET", base+"p", "", "").widget(t, http.StatusOK)
		e.do("PATCH", base+"p", "application/merge-patch+json", `{"metadata":{"resourceVersion":"1"},"spec":{"size":1}}`).
			wantStatus(t, 409, metav1.StatusReasonConflict, `Operation cannot be fulfilled on widgets.storagetest.apiloom.dev "p": the object has been modified; please apply your changes to the latest version and try again`)
		got := e.do("PATCH", base+"p", "application/merge-patch+json", `{"metadata":{"resourceVersion":"`+cur.ResourceVersion+`"},"spec":{"size":1}}`).widget(t, http.StatusOK)
		if got.Spec.Size != 1 {
			t.Fatalf("patched %+v", got.Spec)
		}
	})

	t.Run("unsupported patch types", func(t *testing.T) {
		// The message lists resource.PatchTypes, what OpenAPI advertises, in
		// the order kube-apiserver lists them for its built-in types, and
		// apply-patch+cbor, which CBOR serving adds (cbor_test.go has
		// the server with CBOR off, as kube-apiserver v1.37 by default).
		for _, ct := range []string{"text/plain", ""} {
			e.do("PATCH", base+"p", ct, `{}`).wantStatus(t, 415, metav1.StatusReasonUnsupportedMediaType,
				"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml, application/apply-patch+cbor")
		}
	})

	t.Run("missing object is 404", func(t *testing.T) {
		e.do("PATCH", base+"ghost", "application/merge-patch+json", `{}`).wantStatus(t, 404, metav1.StatusReasonNotFound, `widgets.storagetest.apiloom.dev "ghost" not found`)
	})

	t.Run("malformed patch is 400", func(t *testing.T) {
		e.do("PATCH", base+"p", "application/merge-patch+json", `{"spec":`).wantStatus(t, 400, metav1.StatusReasonBadRequest, "invalid JSON patch")
	})

	t.Run("fieldValidation", func(t *testing.T) {
		st := e.do("PATCH", base+"p?fieldValidation=Strict", "application/merge-patch+json", `{"spec":{"shade":"dark"}}`).wantStatus(t, 422, metav1.StatusReasonInvalid, "")
		if !strings.Contains(st.Message, `strict decoding error: unknown field "spec.shade"`) {
			t.Fatalf("message %q", st.Message)
		}
		r := e.do("PATCH", base+"p", "application/merge-patch+json", `{"spec":{"shade":"dark","size":2}}`)
		if got := r.widget(t, http.StatusOK); got.Spec.Size != 2 || r.header.Get("Warning") != `299 - "unknown field \"spec.shade\""` {
			t.Fatalf("warn: size %d, Warning %q", got.Spec.Size, r.header.Get("Warning"))
		}
		e.do("PATCH", base+"p?fieldValidation=Strict", "application/merge-patch+json", `{"spec":{"size":1,"size":2}}`).
			wantStatus(t, 422, metav1.StatusReasonInvalid, "")
	})

	t.Run("name and kind cannot be patched", func(t *testing.T) {
		e.do("PATCH", base+"p", "application/merge-patch+json", `{"metadata":{"name":"q"}}`).wantStatus(t, 400, metav1.StatusReasonBadRequest, "")
		e.do("PATCH", base+"p", "application/merge-patch+json", `{"kind":"Gadget"}`).wantStatus(t, 400, metav1.StatusReasonBadRequest, "")
	})

	t.Run("dryRun stores nothing", func(t *testing.T) {
		before := e.do("GET", base+"p", "", "").widget(t, http.StatusOK)
		got := e.do("PATCH", base+"p?dryRun=All", "application/merge-patch+json", `{"spec":{"color":"dry"}}`).widget(t, http.StatusOK)
		after := e.do("GET", base+"p", "", "").widget(t, http.StatusOK)
		if got.Spec.Color != "dry" || after.Spec.Color != before.Spec.Color || after.ResourceVersion != before.ResourceVersion {
			t.Fatalf("dry run: got %+v, stored %+v", got.Spec, after.Spec)
		}
	})
}

// TestConcurrentPatches checks that patches retry on conflicts among
// themselves: every one lands.
func TestConcurrentPatches(t *testing.T) {
	e := newEnv(t, false)
	base := widgetsPath + "concurrent/widgets/"
	e.createWidget("concurrent", "c", "red")
	const n = 8
	codes := make(chan int, n)
	for i := range n {
		go func() {
			r := e.do("PATCH", base+"c", "application/merge-patch+json", fmt.Sprintf(`{"metadata":{"labels":{"l%d":"x"}}}`, i))
			codes <- r.code
		}()
	}
	for range n {
		if code := <-codes; code != http.StatusOK {
			t.Fatalf("patch: %d", code)
		}
	}
	got := e.do("GET", base+"c", "", "").widget(t, http.StatusOK)
	if len(got.Labels) != n {
		t.Fatalf("labels %v", got.Labels)
	}
}

func TestWriteOptionsValidation(t *testing.T) {
	e := newEnv(t, false)
	base := widgetsPath + "opts/widgets"
	long := strings.Repeat("m", 129)
	e.do("POST", base+"?fieldManager="+long, "application/json", `{"metadata":{"name":"a"}}`).wantStatus(t, 422, metav1.StatusReasonInvalid, "")
	e.do("POST", base+"?fieldManager="+long[:128], "application/json", `{"metadata":{"name":"a"}}`).widget(t, http.StatusCreated)
	e.do("PATCH", base+"/a?force=true", "application/merge-patch+json", `{}`).wantStatus(t, 422, metav1.StatusReasonInvalid, "")
	e.do("PUT", base+"/a?fieldValidation=strict", "application/json", `{"metadata":{"name":"a"}}`).wantStatus(t, 422, metav1.StatusReasonInvalid, "")
}
