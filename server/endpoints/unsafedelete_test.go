package endpoints

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// The messages below are kube-apiserver v1.37's for a custom resource whose
// stored value is "not json", read off a running one.

// putCorrupt writes "not json" as the stored value of a Widget, around the
// API, and returns the revision of the write.
func (e *env) putCorrupt(ns, name string) int64 {
	e.t.Helper()
	resp, err := e.client.Put(e.ctx, "/registry/storagetest.apiloom.dev/widgets/"+ns+"/"+name, "not json")
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.Header.Revision
}

func TestCorruptObject(t *testing.T) {
	e := newEnv(t, false)
	base := widgetsPath + "corrupt/widgets"
	e.createWidget("corrupt", "good", "red")
	rev := e.putCorrupt("corrupt", "bad")
	storageErr := fmt.Sprintf("StorageError: corrupt object, Code: 7, Key: /storagetest.apiloom.dev/widgets/corrupt/bad, "+
		"ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=%d: invalid character 'o' in literal null (expecting 'u')", rev)

	t.Run("reads and deletes of it are 500 naming the key", func(t *testing.T) {
		for _, r := range []response{
			e.do("GET", base+"/bad", "", ""),
			e.do("DELETE", base+"/bad", "", ""),
			e.do("DELETE", base+"/bad", "application/json", `{"ignoreStoreReadErrorWithClusterBreakingPotential":false,"preconditions":{"uid":"x"}}`),
		} {
			st := r.wantStatus(t, 500, metav1.StatusReasonInternalError, "Internal error occurred: "+storageErr)
			if st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Message != storageErr {
				t.Errorf("details %+v, want the storage error as the one cause", st.Details)
			}
		}
	})

	t.Run("updates of it are 500 with the decode error", func(t *testing.T) {
		want := fmt.Sprintf("object not decodable revision=%d: invalid character 'o' in literal null (expecting 'u')", rev)
		e.do("PATCH", base+"/bad", "application/merge-patch+json", `{"spec":{"size":2}}`).wantStatus(t, 500, "", want)
		body := `{"apiVersion":"storagetest.apiloom.dev/v1","kind":"Widget","metadata":{"name":"bad","resourceVersion":"5"}}`
		e.do("PUT", base+"/bad", "application/json", body).wantStatus(t, 500, "", want)
		e.do("PATCH", base+"/bad/status", "application/merge-patch+json", `{"status":{"phase":"x"}}`).wantStatus(t, 500, "", want)
		// A dry run reads the object as a GET does, and says so.
		e.do("PATCH", base+"/bad?dryRun=All", "application/merge-patch+json", `{"spec":{"size":2}}`).
			wantStatus(t, 500, metav1.StatusReasonInternalError, "Internal error occurred: "+storageErr)
	})

	t.Run("its name is taken", func(t *testing.T) {
		body := `{"apiVersion":"storagetest.apiloom.dev/v1","kind":"Widget","metadata":{"name":"bad"}}`
		for _, q := range []string{"", "?dryRun=All"} {
			e.do("POST", base+q, "application/json", body).
				wantStatus(t, 409, metav1.StatusReasonAlreadyExists, `widgets.storagetest.apiloom.dev "bad" already exists`)
		}
	})

	t.Run("lists leave it out", func(t *testing.T) {
		r := e.do("GET", base, "", "")
		var l struct{ Items []widget }
		if r.code != 200 || json.Unmarshal(r.body, &l) != nil || len(l.Items) != 1 || l.Items[0].Name != "good" {
			t.Fatalf("list: %d %s", r.code, r.body)
		}
	})
}

func TestUnsafeDelete(t *testing.T) {
	e := newEnv(t, false)
	base := widgetsPath + "unsafe/widgets"
	e.createWidget("unsafe", "good", "red")
	e.putCorrupt("unsafe", "bad")
	e.putCorrupt("unsafe", "bad2")
	const opt = `"ignoreStoreReadErrorWithClusterBreakingPotential":true`
	success := func(t *testing.T, r response, name string) {
		t.Helper()
		want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"` + name + `","kind":"Widget"},"code":200}`
		if r.code != 200 || string(r.body) != want || r.header.Get("Content-Type") != "application/json" {
			t.Fatalf("got %d %q: %s\nwant 200: %s", r.code, r.header.Get("Content-Type"), r.body, want)
		}
	}

	t.Run("validation", func(t *testing.T) {
		e.do("DELETE", base+"/bad", "application/json",
			`{`+opt+`,"propagationPolicy":"Background","gracePeriodSeconds":0,"preconditions":{"uid":"x"},"orphanDependents":true}`).
			wantStatus(t, 422, metav1.StatusReasonInvalid, `DeleteOptions.meta.k8s.io "" is invalid: [`+
				`propagationPolicy: Invalid value: "Background": orphanDependents and deletionPropagation cannot be both set, `+
				`ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .propagationPolicy, `+
				`ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .orphanDependents, `+
				`ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .gracePeriodSeconds, `+
				`ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .preconditions]`)
		e.do("DELETE", base+"/bad?ignoreStoreReadErrorWithClusterBreakingPotential=true&gracePeriodSeconds=0", "", "").
			wantStatus(t, 422, metav1.StatusReasonInvalid, `DeleteOptions.meta.k8s.io "" is invalid: `+
				`ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .gracePeriodSeconds`)
		e.do("DELETE", base+"/bad?ignoreStoreReadErrorWithClusterBreakingPotential=true&dryRun=Foo", "", "").
			wantStatus(t, 422, metav1.StatusReasonInvalid, `DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Foo"]: supported values: "All"`)
		e.do("DELETE", base, "application/json", `{`+opt+`}`).
			wantStatus(t, 422, metav1.StatusReasonInvalid, `DeleteOptions.meta.k8s.io "" is invalid: `+
				`ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is not allowed with DELETECOLLECTION, try again after removing the option`)
		e.do("GET", base+"/good", "", "").widget(t, http.StatusOK)
	})

	t.Run("a readable object is refused", func(t *testing.T) {
		want := `Operation cannot be fulfilled on widgets.storagetest.apiloom.dev "good": StorageError: invalid object, Code: 4, ` +
			`Key: /registry/storagetest.apiloom.dev/widgets/unsafe/good, ResourceVersion: 0, ` +
			`AdditionalErrorMsg: unsafe deletion is not allowed because the object is decodable from storage`
		e.do("DELETE", base+"/good", "application/json", `{`+opt+`}`).wantStatus(t, 409, metav1.StatusReasonConflict, want)
		e.do("DELETE", base+"/good", "application/json", `{`+opt+`,"dryRun":["All"]}`).wantStatus(t, 409, metav1.StatusReasonConflict, want)
		e.do("GET", base+"/good", "", "").widget(t, http.StatusOK)
		e.do("DELETE", base+"/missing", "application/json", `{`+opt+`}`).
			wantStatus(t, 404, metav1.StatusReasonNotFound, `widgets.storagetest.apiloom.dev "missing" not found`)
	})

	t.Run("dry run", func(t *testing.T) {
		success(t, e.do("DELETE", base+"/bad", "application/json", `{`+opt+`,"dryRun":["All"]}`), "bad")
		success(t, e.do("DELETE", base+"/bad?ignoreStoreReadErrorWithClusterBreakingPotential=true&dryRun=All", "", ""), "bad")
		e.do("GET", base+"/bad", "", "").wantStatus(t, 500, metav1.StatusReasonInternalError, "")
	})

	t.Run("deletes", func(t *testing.T) {
		// The query form, without a body; the Status is the answer
		// whatever view was asked for.
		success(t, e.do("DELETE", base+"/bad?ignoreStoreReadErrorWithClusterBreakingPotential=true", "", "",
			"Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"), "bad")
		success(t, e.do("DELETE", base+"/bad2", "application/json", `{"kind":"DeleteOptions","apiVersion":"v1",`+opt+`}`), "bad2")
		for _, name := range []string{"bad", "bad2"} {
			e.do("GET", base+"/"+name, "", "").wantStatus(t, 404, metav1.StatusReasonNotFound, "")
		}
		// The name is free again.
		e.createWidget("unsafe", "bad", "red")
	})

	t.Run("yaml", func(t *testing.T) {
		e.putCorrupt("unsafe", "bad3")
		r := e.do("DELETE", base+"/bad3?ignoreStoreReadErrorWithClusterBreakingPotential=true", "", "", "Accept", "application/yaml")
		if r.code != 200 || r.header.Get("Content-Type") != "application/yaml" || !strings.Contains(string(r.body), "status: Success") {
			t.Fatalf("got %d %q: %s", r.code, r.header.Get("Content-Type"), r.body)
		}
	})
}

// TestUnsafeDeleteNeedsItsVerb: as kube-apiserver, the unsafe delete needs
// unsafe-delete-ignore-read-errors on the object besides delete: without
// it the answer is 403 and nothing is deleted, also for an object that
// decodes; a server without an authorizer refuses it with 500.
func TestUnsafeDeleteNeedsItsVerb(t *testing.T) {
	var asked []authorizer.Attributes
	deny := authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		asked = append(asked, a)
		return authorizer.DecisionNoOpinion, "no rule says so", nil
	})
	e := newEnvDefs(t, false, validatedWidgets(storagetest.Definition()), gadgetDefinition(), WithAuthorizer(deny))
	base := widgetsPath + "unsafe/widgets"
	e.createWidget("unsafe", "good", "red")
	e.putCorrupt("unsafe", "bad")
	const opt = `{"ignoreStoreReadErrorWithClusterBreakingPotential":true}`
	for _, name := range []string{"bad", "good"} {
		e.do("DELETE", base+"/"+name, "application/json", opt).wantStatus(t, 403, metav1.StatusReasonForbidden,
			`widgets.storagetest.apiloom.dev "`+name+`" is forbidden: not permitted to do "unsafe-delete-ignore-read-errors", reason: no rule says so`)
	}
	e.do("GET", base+"/good", "", "").widget(t, http.StatusOK)
	e.do("GET", base+"/bad", "", "").wantStatus(t, 500, metav1.StatusReasonInternalError, "")
	if len(asked) != 2 {
		t.Fatalf("asked %d times, want 2", len(asked))
	}
	a := asked[0]
	if a.GetVerb() != "unsafe-delete-ignore-read-errors" || a.GetNamespace() != "unsafe" || a.GetName() != "bad" ||
		a.GetAPIGroup() != "storagetest.apiloom.dev" || a.GetAPIVersion() != "v1" || a.GetResource() != "widgets" || !a.IsResourceRequest() {
		t.Errorf("asked %+v", a)
	}

	none := newEnvDefs(t, false, validatedWidgets(storagetest.Definition()), gadgetDefinition(), WithAuthorizer(nil))
	none.putCorrupt("unsafe", "bad")
	none.do("DELETE", base+"/bad", "application/json", opt).wantStatus(t, 500, metav1.StatusReasonInternalError,
		"Internal error occurred: no authorizer provided, unable to authorize unsafe delete")
}
