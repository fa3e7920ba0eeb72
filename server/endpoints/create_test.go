package endpoints

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/storage"
)

func TestCreate(t *testing.T) {
	e := newEnv(t, false)
	base := widgetsPath + "create/widgets"

	t.Run("server sets system fields", func(t *testing.T) {
		before := time.Now().Truncate(time.Second)
		body := `{"apiVersion":"storagetest.apiloom.dev/v1","kind":"Widget","metadata":{"name":"a","resourceVersion":"77","uid":"client-uid","generation":9,
			"creationTimestamp":"2001-01-01T00:00:00Z"},"spec":{"size":3,"color":"red"},"status":{"phase":"Ready"}}`
		got := e.do("POST", base, "application/json", body).widget(t, http.StatusCreated)
		if got.Namespace != "create" || got.Name != "a" || got.Spec.Color != "red" || got.Spec.Size != 3 {
			t.Fatalf("created %+v", got)
		}
		if got.UID == "" || got.UID == "client-uid" || got.Generation != 1 || got.ResourceVersion == "" || got.ResourceVersion == "77" {
			t.Fatalf("system fields: uid %q generation %d rv %q", got.UID, got.Generation, got.ResourceVersion)
		}
		if ts := got.CreationTimestamp.Time; ts.Before(before) || ts.Nanosecond() != 0 || ts.After(time.Now()) {
			t.Fatalf("creationTimestamp %v", ts)
		}
		if got.Status.Phase != "" {
			t.Fatalf("create must not set status: %+v", got.Status)
		}
		stored, err := e.widgets.Get(e.ctx, storage.Key("create", "a"), storage.GetOptions{})
		if err != nil || stored.UID != got.UID || stored.ResourceVersion != got.ResourceVersion {
			t.Fatalf("stored %+v, %v", stored, err)
		}
	})

	t.Run("duplicate is AlreadyExists", func(t *testing.T) {
		e.do("POST", base, "application/json", `{"metadata":{"name":"dup"}}`).widget(t, http.StatusCreated)
		e.do("POST", base, "application/json", `{"metadata":{"name":"dup"}}`).
			wantStatus(t, 409, metav1.StatusReasonAlreadyExists, `widgets.storagetest.apiloom.dev "dup" already exists`)
	})

	t.Run("generateName", func(t *testing.T) {
		got := e.do("POST", base, "application/json", `{"metadata":{"generateName":"gen-"}}`).widget(t, http.StatusCreated)
		suffix, ok := strings.CutPrefix(got.Name, "gen-")
		if !ok || len(suffix) != 5 || strings.Trim(suffix, "bcdfghjklmnpqrstvwxz2456789") != "" {
			t.Fatalf("generated name %q", got.Name)
		}
	})

	t.Run("namespace from the URL, mismatch is 400", func(t *testing.T) {
		got := e.do("POST", base, "application/json", `{"metadata":{"name":"ns1","namespace":"create"}}`).widget(t, http.StatusCreated)
		if got.Namespace != "create" {
			t.Fatalf("namespace %q", got.Namespace)
		}
		e.do("POST", base, "application/json", `{"metadata":{"name":"ns2","namespace":"other"}}`).
			wantStatus(t, 400, metav1.StatusReasonBadRequest, "the namespace of the provided object does not match the namespace sent on the request")
	})

	t.Run("cluster-scoped clears the namespace", func(t *testing.T) {
		r := e.do("POST", gadgetsPath, "application/json", `{"metadata":{"name":"g1","namespace":"x"},"spec":{"zone":"a"}}`)
		if r.code != http.StatusCreated || !strings.Contains(string(r.body), `"kind":"Gadget"`) || strings.Contains(string(r.body), `"namespace"`) {
			t.Fatalf("%d %s", r.code, r.body)
		}
	})

	t.Run("dryRun stores nothing", func(t *testing.T) {
		got := e.do("POST", base+"?dryRun=All", "application/json", `{"metadata":{"name":"dry"}}`).widget(t, http.StatusCreated)
		if got.UID == "" || got.ResourceVersion != "" {
			t.Fatalf("dry run result %+v", got.ObjectMeta)
		}
		e.do("GET", base+"/dry", "", "").wantStatus(t, 404, metav1.StatusReasonNotFound, `widgets.storagetest.apiloom.dev "dry" not found`)
		e.do("POST", base+"?dryRun=All", "application/json", `{"metadata":{"name":"dup"}}`).wantStatus(t, 409, metav1.StatusReasonAlreadyExists, "")
		e.do("POST", base+"?dryRun=Some", "application/json", `{"metadata":{"name":"dry"}}`).wantStatus(t, 422, metav1.StatusReasonInvalid, "")
	})

	t.Run("invalid metadata is 422", func(t *testing.T) {
		e.do("POST", base, "application/json", `{"metadata":{}}`).
			wantStatus(t, 422, metav1.StatusReasonInvalid, `Widget.storagetest.apiloom.dev "" is invalid: metadata.name: Required value: name or generateName is required`)
		e.do("POST", base, "application/json", `{"metadata":{"name":"Not_A_Name"}}`).wantStatus(t, 422, metav1.StatusReasonInvalid, "")
	})

	t.Run("bad bodies are 400 or 422 and store nothing", func(t *testing.T) {
		for _, tc := range []struct{ body, msg string }{
			{`{"metadata":`, "the object provided is unrecognized (must be of type Widget): unexpected end of JSON input ({\"metadata\":)"},
			{`{"kind":"Gadget","metadata":{"name":"k"}}`, `Gadget in version "v1" cannot be handled as a Widget: the kind in the data (Gadget) does not match the expected kind (Widget)`},
			{`{"apiVersion":"other.dev/v1","metadata":{"name":"k"}}`, "the API version in the data (other.dev/v1) does not match the expected API version (storagetest.apiloom.dev/v1)"},
		} {
			e.do("POST", base, "application/json", tc.body).wantStatus(t, 400, metav1.StatusReasonBadRequest, tc.msg)
		}
		// Valid JSON of the wrong type is the schema's to refuse, as a
		// CRD's (TestUndecodableBodyTheSchemaAccepts: the 400 otherwise).
		e.do("POST", base, "application/json", `{"apiVersion":"storagetest.apiloom.dev/v1","kind":"Widget","metadata":{"name":"k"},"spec":{"size":"big"}}`).
			wantStatus(t, 422, metav1.StatusReasonInvalid, `Widget.storagetest.apiloom.dev "k" is invalid: spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`)
		e.do("GET", base+"/k", "", "").wantStatus(t, 404, metav1.StatusReasonNotFound, "")
	})

	t.Run("fieldValidation", func(t *testing.T) {
		body := `{"kind":"Widget","metadata":{"name":"fv"},"spec":{"color":"red","shade":"dark"}}`
		e.do("POST", base+"?fieldValidation=Strict", "application/json", body).
			wantStatus(t, 400, metav1.StatusReasonBadRequest, `Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.shade"`)
		r := e.do("POST", base, "application/json", body) // unset is Warn
		r.widget(t, http.StatusCreated)
		if w := r.header.Get("Warning"); w != `299 - "unknown field \"spec.shade\""` {
			t.Fatalf("Warning header %q", w)
		}
		r = e.do("POST", base+"?fieldValidation=Ignore", "application/json", strings.Replace(body, `"fv"`, `"fv2"`, 1))
		r.widget(t, http.StatusCreated)
		if w := r.header.Get("Warning"); w != "" {
			t.Fatalf("Ignore warned: %q", w)
		}
		e.do("POST", base+"?fieldValidation=Sometimes", "application/json", body).wantStatus(t, 422, metav1.StatusReasonInvalid, "")
		e.do("POST", base+"?fieldValidation=Strict", "application/json", `{"metadata":{"name":"dupf"},"spec":{"size":1,"size":2}}`).
			wantStatus(t, 400, metav1.StatusReasonBadRequest, `the object provided is unrecognized (must be of type Widget): strict decoding error: duplicate field "spec.size" ({"metadata":{"name":"dupf"},"s ...)`)
	})

	t.Run("YAML body", func(t *testing.T) {
		got := e.do("POST", base, "application/yaml", "apiVersion: storagetest.apiloom.dev/v1\nkind: Widget\nmetadata:\n  name: yml\nspec:\n  color: blue\n").widget(t, http.StatusCreated)
		if got.Spec.Color != "blue" {
			t.Fatalf("yaml create %+v", got.Spec)
		}
	})

	t.Run("unsupported media type", func(t *testing.T) {
		e.do("POST", base, "application/vnd.kubernetes.protobuf", "x").
			wantStatus(t, 415, metav1.StatusReasonUnsupportedMediaType, "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/cbor")
	})

	t.Run("too large", func(t *testing.T) {
		big := `{"metadata":{"name":"big"},"spec":{"color":"` + strings.Repeat("x", int(request.DefaultLimits().MaxRequestBodyBytes)) + `"}}`
		e.do("POST", base, "application/json", big).wantStatus(t, 413, metav1.StatusReasonRequestEntityTooLarge, "")
	})

	t.Run("too large to store", func(t *testing.T) {
		// Under the body limit, over etcd's request limit (1.5 MiB): 413
		// naming both sizes, not a 500 from etcd.
		big := `{"metadata":{"name":"big"},"spec":{"color":"` + strings.Repeat("x", 2<<20) + `"}}`
		st := e.do("POST", base, "application/json", big).wantStatus(t, 413, metav1.StatusReasonRequestEntityTooLarge, "")
		if !strings.Contains(st.Message, "etcd accepts at most 1572864 bytes") {
			t.Errorf("message %q", st.Message)
		}
		e.do("GET", base+"/big", "", "").wantStatus(t, 404, metav1.StatusReasonNotFound, "")
	})

	t.Run("not acceptable", func(t *testing.T) {
		// Widgets have no protobuf; the 406 itself is in protobuf, which a
		// Status has (as kube-apiserver answers for a custom resource).
		st := e.do("POST", base, "application/json", `{"metadata":{"name":"na"}}`, "Accept", "application/vnd.kubernetes.protobuf").statusAs(t, negotiation.MediaProtobuf)
		if st.Code != 406 || st.Reason != metav1.StatusReasonNotAcceptable || st.Message != "only the following media types are accepted: application/json, application/yaml, application/cbor" {
			t.Fatalf("%+v", st)
		}
		e.do("POST", base+"?includeObject=Everything", "application/json", `{"metadata":{"name":"na"}}`, "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").
			wantStatus(t, 400, metav1.StatusReasonBadRequest, "")
		e.do("POST", base, "application/json", `{"metadata":{"name":"na"}}`, "Accept", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io").
			wantStatus(t, 406, metav1.StatusReasonNotAcceptable, "you requested PartialObjectMetadataList, but the requested object is not a list")
		e.do("GET", base+"/na", "", "").wantStatus(t, 404, metav1.StatusReasonNotFound, "")
	})

	t.Run("namespaced create needs a namespace", func(t *testing.T) {
		e.do("POST", "/apis/storagetest.apiloom.dev/v1/widgets", "application/json", `{"metadata":{"name":"x"}}`).
			wantStatus(t, 405, metav1.StatusReasonMethodNotAllowed, `create is not supported on resources of kind "widgets.storagetest.apiloom.dev"`)
	})
}

// decodeJSON decodes data into v or fails the test.
func decodeJSON(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
}
