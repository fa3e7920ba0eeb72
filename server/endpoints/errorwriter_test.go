package endpoints

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
	"sigs.k8s.io/yaml"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
	"github.com/apiloom/apiloom/server/wire"
)

// statusAs decodes an error response in the encoding of its Content-Type,
// failing unless that is want, and checks that the bytes are what
// apimachinery's serializer of that format writes for the decoded Status.
func (r response) statusAs(t *testing.T, want string) metav1.Status {
	t.Helper()
	if got := r.header.Get("Content-Type"); got != want {
		t.Fatalf("Content-Type %q, want %q (HTTP %d): %q", got, want, r.code, r.body)
	}
	var st metav1.Status
	var again []byte
	switch want {
	case negotiation.MediaProtobuf:
		var u runtime.Unknown
		if _, _, err := protobufEnvelope.Decode(r.body, nil, &u); err != nil {
			t.Fatalf("not a protobuf envelope: %v: %q", err, r.body)
		}
		if u.Kind != "Status" || u.APIVersion != "v1" || u.ContentType != "" || u.ContentEncoding != "" {
			t.Fatalf("envelope %+v", u.TypeMeta)
		}
		if err := st.Unmarshal(u.Raw); err != nil {
			t.Fatal(err)
		}
		st.Kind, st.APIVersion = u.Kind, u.APIVersion
		var b bytes.Buffer
		if err := protobufEnvelope.Encode(&st, &b); err != nil {
			t.Fatal(err)
		}
		again = b.Bytes()
	case negotiation.MediaCBOR:
		if !wire.IsCBOR(r.body) {
			t.Fatalf("not self-described CBOR: %q", r.body)
		}
		if err := direct.Unmarshal(r.body, &st); err != nil {
			t.Fatal(err)
		}
		again = reencode(t, &st)
	case negotiation.MediaYAML:
		if err := yaml.UnmarshalStrict(r.body, &st); err != nil {
			t.Fatalf("not YAML: %v: %s", err, r.body)
		}
		data, _ := json.Marshal(&st)
		again, _ = yaml.JSONToYAML(data)
	default:
		if err := json.Unmarshal(r.body, &st); err != nil {
			t.Fatalf("not JSON: %v: %s", err, r.body)
		}
		again, _ = json.Marshal(&st)
	}
	if !bytes.Equal(r.body, again) {
		t.Fatalf("body differs from apimachinery's encoding of its Status:\n got %q\nwant %q", r.body, again)
	}
	if st.Kind != "Status" || st.APIVersion != "v1" || int(st.Code) != r.code || st.Status != metav1.StatusFailure {
		t.Fatalf("malformed Status (HTTP %d): %+v", r.code, st)
	}
	return st
}

// rawJSONStatus checks that r is kube-apiserver's answer to a request
// that accepts no format a Status has: the Status as indented JSON.
func (r response) rawJSONStatus(t *testing.T, code int, reason metav1.StatusReason) metav1.Status {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal(r.body, &st); err != nil || r.header.Get("Content-Type") != negotiation.MediaJSON {
		t.Fatalf("%q: not JSON: %v: %s", r.header.Get("Content-Type"), err, r.body)
	}
	want, _ := json.MarshalIndent(&st, "", "  ")
	if !bytes.Equal(r.body, want) || r.code != code || st.Reason != reason || int(st.Code) != code {
		t.Fatalf("got %d %s, want %d %s as indented JSON: %s", r.code, st.Reason, code, reason, r.body)
	}
	return st
}

// TestErrorNegotiated: every error is a Status in the format the request
// negotiates, as kube-apiserver's ErrorNegotiated answers, byte for byte
// what apimachinery's serializers write; a request that accepts no format
// of a Status gets indented JSON with the error's code.
func TestErrorNegotiated(t *testing.T) {
	e := newEnv(t, false)
	def := configMapDefinition()
	configMaps := storage.New(e.client, storage.ResourcePrefix("/registry", &def.Info), def)
	srv := httptest.NewServer(NewHandler(NewResource(def, configMaps), NewResource(validatedWidgets(storagetest.Definition()), e.widgets)))
	t.Cleanup(srv.Close)
	e = &env{t: t, ctx: e.ctx, srv: srv, client: e.client, widgets: e.widgets}
	base := "/api/v1/namespaces/neg/configmaps"
	missing := base + "/missing"
	cm := `{"metadata":{"name":"a"},"data":{"k":"v"}}`
	if r := e.do("POST", base, "application/json", cm); r.code != http.StatusCreated {
		t.Fatalf("%d %s", r.code, r.body)
	}
	const (
		table   = "application/json;as=Table;g=meta.k8s.io;v=v1"
		pbTable = "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1"
	)

	for _, tc := range []struct {
		accept, want string
	}{
		{"", negotiation.MediaJSON},
		{"*/*", negotiation.MediaJSON},
		{"application/*", negotiation.MediaJSON},
		{"application/json", negotiation.MediaJSON},
		{"application/yaml", negotiation.MediaYAML},
		{"application/cbor", negotiation.MediaCBOR},
		{"application/vnd.kubernetes.protobuf", negotiation.MediaProtobuf},
		// client-go's protobuf clients: protobuf first, JSON as fallback.
		{"application/vnd.kubernetes.protobuf,application/json", negotiation.MediaProtobuf},
		{"application/json;q=0.5, application/vnd.kubernetes.protobuf", negotiation.MediaProtobuf},
		// kubectl: the Table clause is skipped, an error is no Table.
		{table + ",application/json", negotiation.MediaJSON},
		{table + ",application/vnd.kubernetes.protobuf", negotiation.MediaProtobuf},
	} {
		st := e.do("GET", missing, "", "", "Accept", tc.accept).statusAs(t, tc.want)
		if st.Code != http.StatusNotFound || st.Reason != metav1.StatusReasonNotFound || st.Details == nil || st.Details.Name != "missing" ||
			st.Message != `configmaps "missing" not found` {
			t.Fatalf("Accept %q: %+v", tc.accept, st)
		}
	}

	t.Run("invalid, with causes", func(t *testing.T) {
		st := e.do("POST", base, "application/json", `{"metadata":{"name":"Bad_Name"}}`, "Accept", negotiation.MediaProtobuf).statusAs(t, negotiation.MediaProtobuf)
		if st.Code != http.StatusUnprocessableEntity || st.Reason != metav1.StatusReasonInvalid || st.Details == nil || len(st.Details.Causes) == 0 ||
			st.Details.Causes[0].Field != "metadata.name" {
			t.Fatalf("%+v", st)
		}
		if !apierrors.IsInvalid(&apierrors.StatusError{ErrStatus: st}) {
			t.Fatal("not IsInvalid")
		}
	})

	t.Run("conflict", func(t *testing.T) {
		body := `{"metadata":{"name":"a","resourceVersion":"1"},"data":{"k":"w"}}`
		for _, accept := range []string{negotiation.MediaCBOR, negotiation.MediaProtobuf} {
			st := e.do("PUT", base+"/a", "application/json", body, "Accept", accept).statusAs(t, accept)
			if st.Code != http.StatusConflict || st.Reason != metav1.StatusReasonConflict {
				t.Fatalf("%+v", st)
			}
		}
	})

	t.Run("a watch that fails before its stream", func(t *testing.T) {
		for accept, want := range map[string]string{
			"application/vnd.kubernetes.protobuf;stream=watch": negotiation.MediaProtobuf,
			"application/vnd.kubernetes.protobuf":              negotiation.MediaProtobuf,
			"application/cbor":                                 negotiation.MediaCBOR,
			"application/json;stream=watch":                    negotiation.MediaJSON,
			"application/yaml;stream=watch, */*":               negotiation.MediaJSON, // YAML has no stream
		} {
			st := e.do("GET", base+"?watch=true&fieldSelector=spec.nothing%3Dx", "", "", "Accept", accept).statusAs(t, want)
			if st.Code != http.StatusBadRequest {
				t.Fatalf("Accept %q: %+v", accept, st)
			}
		}
	})

	t.Run("nothing acceptable", func(t *testing.T) {
		// The request negotiates (a Table), the error cannot: indented
		// JSON with the error's own code.
		e.do("GET", missing, "", "", "Accept", table).rawJSONStatus(t, http.StatusNotFound, metav1.StatusReasonNotFound)
		// The request itself is not acceptable: the 406 is indented JSON.
		e.do("GET", missing, "", "", "Accept", "text/html").rawJSONStatus(t, http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable)
		e.do("GET", missing, "", "", "Accept", pbTable).rawJSONStatus(t, http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable)
		// application/cbor-seq names no format of a Status, as in
		// kube-apiserver.
		e.do("GET", base+"?watch=true&fieldSelector=spec.nothing%3Dx", "", "", "Accept", "application/cbor-seq").
			rawJSONStatus(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	})

	t.Run("a kind without protobuf", func(t *testing.T) {
		// Widgets have no protobuf methods: asked for protobuf only, the
		// object is 406, answered in protobuf, as kube-apiserver answers a
		// custom resource; a client that also takes JSON gets the object.
		e.createWidget("neg", "a", "red")
		widgets := widgetsPath + "neg/widgets"
		st := e.do("GET", widgets+"/a", "", "", "Accept", negotiation.MediaProtobuf).statusAs(t, negotiation.MediaProtobuf)
		if st.Code != http.StatusNotAcceptable || st.Reason != metav1.StatusReasonNotAcceptable {
			t.Fatalf("%+v", st)
		}
		e.do("GET", widgets+"/a", "", "", "Accept", negotiation.MediaProtobuf+", application/json").widget(t, http.StatusOK)
	})

	t.Run("unknown path", func(t *testing.T) {
		path := "/api/v1/nothings"
		st := e.do("GET", path, "", "", "Accept", negotiation.MediaProtobuf).statusAs(t, negotiation.MediaProtobuf)
		if st.Code != http.StatusNotFound || st.Message != "the server could not find the requested resource" {
			t.Fatalf("%+v", st)
		}
		// CBOR only where the server says it serves it (WithCBOR).
		e.do("GET", path, "", "", "Accept", negotiation.MediaCBOR).rawJSONStatus(t, http.StatusNotFound, metav1.StatusReasonNotFound)
		srv := httptest.NewServer(responsewriters.WithCBOR(e.srv.Config.Handler, true))
		t.Cleanup(srv.Close)
		withCBOR := &env{t: t, ctx: e.ctx, srv: srv}
		withCBOR.do("GET", path, "", "", "Accept", negotiation.MediaCBOR).statusAs(t, negotiation.MediaCBOR)
	})

	t.Run("CBOR off", func(t *testing.T) {
		l := request.DefaultLimits()
		l.CBOR = false
		srv := httptest.NewServer(NewHandler(NewResource(def, configMaps, WithLimits(l))))
		t.Cleanup(srv.Close)
		off := &env{t: t, ctx: e.ctx, srv: srv}
		off.do("GET", missing, "", "", "Accept", negotiation.MediaCBOR+", application/yaml").statusAs(t, negotiation.MediaYAML)
		off.do("GET", missing, "", "", "Accept", negotiation.MediaCBOR).rawJSONStatus(t, http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable)
		off.do("GET", missing, "", "", "Accept", negotiation.MediaProtobuf).statusAs(t, negotiation.MediaProtobuf)
	})
}

// TestWriteError: the server's own filters' errors keep Retry-After and
// are negotiated as the handlers' are.
func TestWriteError(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		responsewriters.WriteError(w, r, apierrors.NewTooManyRequests("too many requests, please try again later", 1))
	})
	for _, cbor := range []bool{false, true} {
		srv := httptest.NewServer(responsewriters.WithCBOR(h, cbor))
		t.Cleanup(srv.Close)
		e := &env{t: t, ctx: t.Context(), srv: srv}
		want := negotiation.MediaJSON
		if cbor {
			want = negotiation.MediaCBOR
		}
		r := e.do("GET", "/", "", "", "Accept", "application/cbor, application/json")
		if st := r.statusAs(t, want); st.Code != http.StatusTooManyRequests || r.header.Get("Retry-After") != "1" {
			t.Fatalf("%+v, Retry-After %q", st, r.header.Get("Retry-After"))
		}
		e.do("GET", "/", "", "", "Accept", negotiation.MediaProtobuf).statusAs(t, negotiation.MediaProtobuf)
	}
}

// configMapDefinition serves ConfigMaps, a kind with protobuf methods.
func configMapDefinition() *resource.Definition[*corev1.ConfigMap] {
	return &resource.Definition[*corev1.ConfigMap]{
		Info: resource.Info{
			Version: "v1", Kind: "ConfigMap", ListKind: "ConfigMapList", Plural: "configmaps", Singular: "configmap", Namespaced: true,
		},
		New:        func() *corev1.ConfigMap { return new(corev1.ConfigMap) },
		Fields:     func(o *corev1.ConfigMap) fields.Set { return resource.ObjectFields(o, true) },
		CopyStatus: func(_, _ *corev1.ConfigMap) {},
		SpecEqual: func(a, b *corev1.ConfigMap) bool {
			return equality.Semantic.DeepEqual(a.Data, b.Data) && equality.Semantic.DeepEqual(a.BinaryData, b.BinaryData)
		},
	}
}
