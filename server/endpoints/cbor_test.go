package endpoints

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"

	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/storage/storagetest"
	"github.com/apiloom/apiloom/server/wire"
)

// widgetCBORList is the Widget list as a client decodes it.
type widgetCBORList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []widget `json:"items"`
}

func (l *widgetCBORList) DeepCopyObject() runtime.Object { c := *l; return &c }

// cborOf decodes a CBOR response body into v, failing unless it is one
// self-described CBOR document of Content-Type application/cbor.
func (r response) cborOf(t *testing.T, code int, v any) {
	t.Helper()
	if r.code != code || r.header.Get("Content-Type") != "application/cbor" || !wire.IsCBOR(r.body) {
		t.Fatalf("got %d %q, want %d application/cbor: %q", r.code, r.header.Get("Content-Type"), code, r.body)
	}
	if err := direct.Unmarshal(r.body, v); err != nil {
		t.Fatalf("body does not decode: %v", err)
	}
}

// reencode is what apimachinery's CBOR serializer writes for v.
func reencode(t *testing.T, v runtime.Object) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := cbor.NewSerializer(nil, nil).Encode(v, &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestCBOR(t *testing.T) {
	e := newEnv(t, false)
	base := widgetsPath + "cb/widgets"
	accept := []string{"Accept", "application/cbor"}

	// A create in CBOR is the create in JSON: same object stored.
	in := storagetest.NewWidget("", "a", "red", "tier", "db")
	in.Spec.Size = 3
	body, err := wire.EncodeObjectCBOR(in, schema.GroupVersionKind{Group: "storagetest.apiloom.dev", Version: "v1", Kind: "Widget"})
	if err != nil {
		t.Fatal(err)
	}
	var created widget
	e.do("POST", base, "application/cbor", string(body), accept...).cborOf(t, http.StatusCreated, &created)
	if created.Name != "a" || created.Spec != in.Spec || created.Labels["tier"] != "db" || created.Kind != "Widget" || created.APIVersion != widgetAPI {
		t.Fatalf("created %+v", created)
	}

	t.Run("get is the JSON object, in CBOR", func(t *testing.T) {
		r := e.do("GET", base+"/a", "", "", accept...)
		var got widget
		r.cborOf(t, http.StatusOK, &got)
		asJSON := e.do("GET", base+"/a", "", "").widget(t, http.StatusOK)
		if !equalJSON(t, &got, asJSON) {
			t.Fatalf("CBOR %+v\nJSON %+v", got, asJSON)
		}
		if want := reencode(t, &got); !bytes.Equal(r.body, want) {
			t.Fatalf("not apimachinery's encoding:\n%x\n%x", r.body, want)
		}
	})

	t.Run("list", func(t *testing.T) {
		e.createWidget("cb", "b", "blue")
		r := e.do("GET", base, "", "", accept...)
		var got widgetCBORList
		r.cborOf(t, http.StatusOK, &got)
		if got.Kind != "WidgetList" || got.APIVersion != widgetAPI || len(got.Items) != 2 || got.ResourceVersion == "" || got.Items[1].Kind != "Widget" {
			t.Fatalf("list %+v", got)
		}
		if want := reencode(t, &got); !bytes.Equal(r.body, want) {
			t.Fatalf("not apimachinery's encoding of the list:\n%x\n%x", r.body, want)
		}
		var meta metav1.PartialObjectMetadataList
		e.do("GET", base, "", "", "Accept", "application/cbor;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io").cborOf(t, http.StatusOK, &meta)
		if meta.Kind != "PartialObjectMetadataList" || len(meta.Items) != 2 || meta.Items[0].Name != "a" {
			t.Fatalf("partial list %+v", meta)
		}
		var table metav1.Table
		e.do("GET", base, "", "", "Accept", "application/cbor;as=Table;v=v1;g=meta.k8s.io").cborOf(t, http.StatusOK, &table)
		if table.Kind != "Table" || len(table.Rows) != 2 {
			t.Fatalf("table %+v", table)
		}
	})

	t.Run("watch is a CBOR sequence", func(t *testing.T) {
		for _, acc := range []string{"application/cbor", "application/cbor-seq"} {
			r := e.do("GET", base+"?watch=true&resourceVersion=0&timeoutSeconds=1", "", "", "Accept", acc)
			if r.code != http.StatusOK || r.header.Get("Content-Type") != "application/cbor-seq" {
				t.Fatalf("%s: %d %q", acc, r.code, r.header.Get("Content-Type"))
			}
			events := decodeCBORSeq(t, r.body)
			if len(events) != 2 || events[0].Type != "ADDED" {
				t.Fatalf("%s: events %+v", acc, events)
			}
			var w widget
			if err := direct.Unmarshal(events[0].Object.Raw, &w); err != nil || w.Kind != "Widget" || w.Name == "" {
				t.Fatalf("%s: event object %+v, %v", acc, w, err)
			}
		}
		// An expired resourceVersion is a 410 ERROR event, in CBOR too.
		e.compact(e.rev())
		r := e.do("GET", base+"?watch=true&resourceVersion=1", "", "", accept...)
		events := decodeCBORSeq(t, r.body)
		if len(events) != 1 || events[0].Type != "ERROR" {
			t.Fatalf("events %+v", events)
		}
		var st metav1.Status
		if err := direct.Unmarshal(events[0].Object.Raw, &st); err != nil || st.Kind != "Status" || st.Code != http.StatusGone {
			t.Fatalf("error event %+v, %v", st, err)
		}
	})

	t.Run("server-side apply in CBOR", func(t *testing.T) {
		patch, _ := direct.Marshal(map[string]any{"apiVersion": widgetAPI, "kind": "Widget", "metadata": map[string]any{"name": "c"}, "spec": map[string]any{"color": "green"}})
		var got widget
		e.do("PATCH", base+"/c?fieldManager=m", "application/apply-patch+cbor", string(patch), accept...).cborOf(t, http.StatusCreated, &got)
		if got.Spec.Color != "green" || len(got.ManagedFields) != 1 || got.ManagedFields[0].Operation != metav1.ManagedFieldsOperationApply {
			t.Fatalf("applied %+v", got)
		}
	})

	t.Run("bad bodies change nothing", func(t *testing.T) {
		for name, b := range map[string][]byte{
			"not CBOR":      []byte(`{"metadata":{"name":"x"}}`),
			"truncated":     body[:len(body)/2],
			"duplicate key": {0xa2, 0x44, 'k', 'i', 'n', 'd', 0x41, 'a', 0x44, 'k', 'i', 'n', 'd', 0x41, 'b'},
		} {
			st := e.do("POST", base, "application/cbor", string(b)).wantStatus(t, 400, metav1.StatusReasonBadRequest, "")
			if !strings.HasPrefix(st.Message, "the object provided is unrecognized") {
				t.Errorf("%s: %q", name, st.Message)
			}
		}
		unknown, _ := direct.Marshal(map[string]any{"metadata": map[string]any{"name": "u"}, "spec": map[string]any{"colour": "x"}})
		st := e.do("POST", base+"?fieldValidation=Strict", "application/cbor", string(unknown)).wantStatus(t, 400, metav1.StatusReasonBadRequest, "")
		if !strings.Contains(st.Message, `strict decoding error: unknown field "spec.colour"`) {
			t.Errorf("unknown field: %q", st.Message)
		}
		e.do("PATCH", base+"/a?fieldManager=m", "application/apply-patch+cbor", `{}`).wantStatus(t, 400, metav1.StatusReasonBadRequest, "")
		var list widgetCBORList
		e.do("GET", base, "", "", accept...).cborOf(t, http.StatusOK, &list)
		if len(list.Items) != 3 {
			t.Fatalf("%d widgets after bad bodies, want 3", len(list.Items))
		}
	})

	t.Run("off, as kube-apiserver by default", func(t *testing.T) {
		l := request.DefaultLimits()
		l.CBOR = false
		srv := httptest.NewServer(NewHandler(NewResource(storagetest.Definition(), e.widgets, WithLimits(l))))
		t.Cleanup(srv.Close)
		off := &env{t: t, ctx: e.ctx, srv: srv}
		off.do("GET", base+"/a", "", "", accept...).wantStatus(t, 406, metav1.StatusReasonNotAcceptable, "only the following media types are accepted: application/json, application/yaml")
		off.do("GET", base+"?watch=true", "", "", "Accept", "application/cbor-seq").wantStatus(t, 406, metav1.StatusReasonNotAcceptable, "only the following media types are accepted: application/json")
		off.do("POST", base, "application/cbor", string(body)).wantStatus(t, 415, metav1.StatusReasonUnsupportedMediaType, "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml")
		off.do("PATCH", base+"/a?fieldManager=m", "application/apply-patch+cbor", "x").wantStatus(t, 415, metav1.StatusReasonUnsupportedMediaType,
			"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml")
		// JSON clients listing CBOR after JSON still get JSON.
		off.do("GET", base+"/a", "", "", "Accept", "application/cbor, application/json").widget(t, http.StatusOK)
	})
}

// decodeCBORSeq splits a watch body into its events as client-go does:
// apimachinery's CBOR framer, one WatchEvent per data item.
func decodeCBORSeq(t *testing.T, body []byte) []metav1.WatchEvent {
	t.Helper()
	fr := cbor.NewFramer().NewFrameReader(io.NopCloser(bytes.NewReader(body)))
	var out []metav1.WatchEvent
	buf := make([]byte, 1<<20)
	for {
		n, err := fr.Read(buf)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("frame %d: %v", len(out), err)
		}
		var ev metav1.WatchEvent
		if err := direct.Unmarshal(buf[:n], &ev); err != nil {
			t.Fatalf("event %d: %v", len(out), err)
		}
		out = append(out, ev)
	}
}

// equalJSON reports whether a and b encode to the same JSON.
func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}
