package endpoints

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authorization/authorizerfactory"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// The tests serve two resources from a real etcd: storagetest's Widget
// (namespaced, with status and the selectable field spec.color) and Gadget
// below (cluster-scoped, no status, with printer columns).

type widget = storagetest.Widget

const (
	widgetsPath = "/apis/storagetest.apiloom.dev/v1/namespaces/"
	gadgetsPath = "/apis/storagetest.apiloom.dev/v1/gadgets"
	widgetAPI   = "storagetest.apiloom.dev/v1"
)

// gadget is a cluster-scoped resource without a status subresource.
type gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              gadgetSpec `json:"spec,omitempty"`
}

type gadgetSpec struct {
	Zone  string   `json:"zone,omitempty"`
	Ports []int32  `json:"ports,omitempty"`
	Tags  []string `json:"tags,omitempty"`
}

func (g *gadget) DeepCopyObject() runtime.Object {
	out := &gadget{TypeMeta: g.TypeMeta}
	g.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Zone = g.Spec.Zone
	out.Spec.Ports = append([]int32(nil), g.Spec.Ports...)
	out.Spec.Tags = append([]string(nil), g.Spec.Tags...)
	return out
}

func gadgetDefinition() *resource.Definition[*gadget] {
	return &resource.Definition[*gadget]{
		Info: resource.Info{
			Group: "storagetest.apiloom.dev", Version: "v1", Kind: "Gadget", ListKind: "GadgetList",
			Plural: "gadgets", Singular: "gadget",
			Schema: gadgetSchema(""),
			PrintColumns: []resource.PrintColumn{
				{Name: "Zone", Type: resource.ColumnString, JSONPath: ".spec.zone"},
				{Name: "Port", Type: resource.ColumnInteger, JSONPath: ".spec.ports[0]", Description: "The first port."},
				{Name: "Tags", Type: resource.ColumnString, JSONPath: ".spec.tags", Priority: 1},
				{Name: "Age", Type: resource.ColumnDate, JSONPath: ".metadata.creationTimestamp"},
			},
		},
		New:        func() *gadget { return new(gadget) },
		Fields:     func(g *gadget) fields.Set { return resource.ObjectFields(g, false) },
		CopyStatus: func(_, _ *gadget) {},
		SpecEqual: func(a, b *gadget) bool {
			x, _ := json.Marshal(a.Spec)
			y, _ := json.Marshal(b.Spec)
			return bytes.Equal(x, y)
		},
	}
}

// gadgetSchema is Gadget's schema as controller-gen writes it with
// +kubebuilder:validation:Minimum=1 on the ports' element type, and
// zoneDefault as +kubebuilder:default on spec.zone (none when empty).
func gadgetSchema(zoneDefault string) string {
	zone := `{"type":"string"}`
	if zoneDefault != "" {
		zone = `{"type":"string","default":"` + zoneDefault + `"}`
	}
	return `{"type":"object","properties":{
	  "apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
	  "spec":{"type":"object","properties":{
	    "zone":` + zone + `,
	    "ports":{"type":"array","items":{"type":"integer","format":"int32","minimum":1}},
	    "tags":{"type":"array","items":{"type":"string"}}}}}}`
}

// widgetSchema is Widget's schema as controller-gen writes it with
// +kubebuilder:validation:Maximum=100 on spec.size and
// +kubebuilder:validation:MaxLength=12 on status.phase.
const widgetSchema = `{"type":"object","properties":{
  "apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
  "spec":{"type":"object","properties":{"size":{"type":"integer","maximum":100},"color":{"type":"string"}}},
  "status":{"type":"object","properties":{"phase":{"type":"string","maxLength":12}}}}}`

// validatedWidgets gives def widgetSchema.
func validatedWidgets(def *resource.Definition[*widget]) *resource.Definition[*widget] {
	def.Schema = widgetSchema
	return def
}

// env is a server for one test: the two resources on their own keyspace
// of a real etcd, behind an httptest server.
type env struct {
	t       *testing.T
	ctx     context.Context
	srv     *httptest.Server
	widgets storage.Interface[*widget]
	gadgets storage.Interface[*gadget]
	client  *clientv3.Client
}

// newEnv starts etcd and the server. tls serves HTTPS with HTTP/2.
func newEnv(t *testing.T, tls bool) *env {
	t.Helper()
	return newEnvWith(t, tls, gadgetDefinition())
}

// newEnvWith is newEnv serving Gadgets as gdef defines them.
func newEnvWith(t *testing.T, tls bool, gdef *resource.Definition[*gadget]) *env {
	t.Helper()
	return newEnvDefs(t, tls, validatedWidgets(storagetest.Definition()), gdef)
}

// newEnvDefs is newEnv serving Widgets and Gadgets as wdef and gdef define
// them, with opts after the env's own: a type converter and an authorizer
// that allows everything.
func newEnvDefs(t *testing.T, tls bool, wdef *resource.Definition[*widget], gdef *resource.Definition[*gadget], opts ...Option) *env {
	t.Helper()
	root := etcdtest.Start(t)
	c := storagetest.NewClient(t, root, "/endpoints-test")
	e := &env{t: t}
	e.widgets = storage.New(c, storage.ResourcePrefix("/registry", &wdef.Info), wdef)
	e.gadgets = storage.New(c, storage.ResourcePrefix("/registry", &gdef.Info), gdef)
	e.client = c
	opts = append([]Option{WithTypeConverter(testTypeConverter(t)), WithAuthorizer(authorizerfactory.NewAlwaysAllowAuthorizer())}, opts...)
	h := NewHandler(NewResource(wdef, e.widgets, opts...), NewResource(gdef, e.gadgets, opts...))
	if tls {
		e.srv = httptest.NewUnstartedServer(h)
		e.srv.EnableHTTP2 = true
		e.srv.StartTLS()
	} else {
		e.srv = httptest.NewServer(h)
	}
	t.Cleanup(e.srv.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	e.ctx = ctx
	return e
}

// response is a finished HTTP exchange.
type response struct {
	code   int
	header http.Header
	body   []byte
}

// do sends a request and reads the whole response.
func (e *env) do(method, path, contentType, body string, headers ...string) response {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.ctx, method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: read: %v", method, path, err)
	}
	return response{code: resp.StatusCode, header: resp.Header, body: data}
}

// status decodes the response as a metav1.Status and checks the parts
// every error Status must have.
func (r response) status(t *testing.T) metav1.Status {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal(r.body, &st); err != nil {
		t.Fatalf("response %d is not a Status: %v: %s", r.code, err, r.body)
	}
	if st.Kind != "Status" || st.APIVersion != "v1" || int(st.Code) != r.code || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("malformed Status (HTTP %d, %q): %s", r.code, r.header.Get("Content-Type"), r.body)
	}
	return st
}

// wantStatus checks that the response is an error Status with code and
// reason, and, if msg is not empty, exactly that message.
func (r response) wantStatus(t *testing.T, code int, reason metav1.StatusReason, msg string) metav1.Status {
	t.Helper()
	st := r.status(t)
	if r.code != code || st.Reason != reason || st.Status != metav1.StatusFailure {
		t.Fatalf("got %d %s, want %d %s: %s", r.code, st.Reason, code, reason, r.body)
	}
	if msg != "" && st.Message != msg {
		t.Fatalf("message:\n got %q\nwant %q", st.Message, msg)
	}
	return st
}

// widget decodes the response as a Widget, failing unless it is code.
func (r response) widget(t *testing.T, code int) *widget {
	t.Helper()
	if r.code != code {
		t.Fatalf("got %d, want %d: %s", r.code, code, r.body)
	}
	var w widget
	if err := json.Unmarshal(r.body, &w); err != nil {
		t.Fatalf("not a Widget: %v: %s", err, r.body)
	}
	if w.Kind != "Widget" || w.APIVersion != widgetAPI {
		t.Fatalf("widget without kind/apiVersion: %s", r.body)
	}
	return &w
}

// createWidget creates a Widget through the API.
func (e *env) createWidget(ns, name, color string, labels ...string) *widget {
	e.t.Helper()
	w := storagetest.NewWidget("", name, color, labels...)
	body, _ := json.Marshal(w)
	return e.do("POST", widgetsPath+ns+"/widgets", "application/json", string(body)).widget(e.t, http.StatusCreated)
}

// rev is etcd's current revision.
func (e *env) rev() int64 {
	e.t.Helper()
	resp, err := e.client.Get(e.ctx, "revision-probe")
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.Header.Revision
}

// compact makes revisions below rev unavailable.
func (e *env) compact(rev int64) {
	e.t.Helper()
	if _, err := e.client.Compact(e.ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		e.t.Fatal(err)
	}
}
