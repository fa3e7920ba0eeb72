package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// statusOf is the code and message of a request's answer.
func statusOf(t *testing.T, res rest.Result) (int, string) {
	t.Helper()
	var code int
	raw, _ := res.StatusCode(&code).Raw()
	var s metav1.Status
	if err := json.Unmarshal(raw, &s); err != nil || s.Kind != "Status" {
		return code, ""
	}
	return code, s.Message
}

// TestEventsValidation: bad Events are refused with kube-apiserver's 422
// messages, which differ by the API version written through (core/v1 gets
// the legacy rules only, events.k8s.io/v1 the strict ones too); the
// expected messages are the peer's (kube-apiserver v1.37.1, the same
// requests, recorded). Nothing is stored.
func TestEventsValidation(t *testing.T) {
	ts, _ := startServer(t)
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()
	rc := restClient(t, ts.Config)
	long := strings.Repeat("r", 130)
	for _, tc := range []struct {
		name, path, body, want string
	}{{
		name: "core, namespace mismatch",
		path: "/api/v1/namespaces/default/events",
		body: `{"metadata":{"name":"bad1"},"involvedObject":{"namespace":"other"}}`,
		want: `Event "bad1" is invalid: involvedObject.namespace: Invalid value: "other": does not match event.namespace`,
	}, {
		name: "core, new-style fields",
		path: "/api/v1/namespaces/default/events",
		body: `{"metadata":{"name":"bad2"},"eventTime":"2026-01-01T00:00:00.000000Z","reportingComponent":"a b","reason":"` + long + `"}`,
		want: `Event "bad2" is invalid: [reportingComponent: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), reportingInstance: Required value, action: Required value, reason: Invalid value: "": can have at most 128 characters]`,
	}, {
		name: "events.k8s.io, strict create",
		path: "/apis/events.k8s.io/v1/namespaces/default/events",
		body: `{"metadata":{"name":"bad3"},"regarding":{"namespace":"default"},"type":"Odd","deprecatedCount":2,"deprecatedSource":{"component":"x"},"series":{"count":1}}`,
		want: `Event "bad3" is invalid: [series.count: Invalid value: "": should be at least 2, series.lastObservedTime: Required value, eventTime: Required value, type: Invalid value: "": has invalid value: Odd, count: Invalid value: "": needs to be unset, source: Invalid value: "": needs to be unset]`,
	}} {
		code, msg := statusOf(t, rc.Post().AbsPath(tc.path).SetHeader("Content-Type", "application/json").Body([]byte(tc.body)).Do(ctx))
		if code != http.StatusUnprocessableEntity || msg != tc.want {
			t.Errorf("%s: %d %s\nwant 422 %s", tc.name, code, msg, tc.want)
		}
	}
	if l, err := kc.CoreV1().Events("default").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("stored after refusals: %v %+v", err, l)
	}

	good := `{"metadata":{"name":"good"},"eventTime":"2026-01-01T00:00:00.000000Z","reportingController":"example.com/c","reportingInstance":"i","action":"Do","reason":"R","note":"n","type":"Normal","regarding":{"namespace":"default","name":"x"}}`
	if code, msg := statusOf(t, rc.Post().AbsPath("/apis/events.k8s.io/v1/namespaces/default/events").SetHeader("Content-Type", "application/json").Body([]byte(good)).Do(ctx)); code != http.StatusCreated {
		t.Fatalf("create a good event: %d %s", code, msg)
	}
	// An update through events.k8s.io/v1 keeps what upstream makes
	// immutable; through core/v1 the same change is allowed.
	patch := func(path, body string) (int, string) {
		return statusOf(t, rc.Patch(types.MergePatchType).AbsPath(path).Body([]byte(body)).Do(ctx))
	}
	want := `Event "good" is invalid: [series.count: Invalid value: "": should be at least 2, series.lastObservedTime: Required value, reason: Invalid value: "R2": field is immutable, message: Invalid value: "changed": field is immutable]`
	if code, msg := patch("/apis/events.k8s.io/v1/namespaces/default/events/good", `{"note":"changed","reason":"R2","series":{"count":1}}`); code != http.StatusUnprocessableEntity || msg != want {
		t.Errorf("strict update: %d %s\nwant 422 %s", code, msg, want)
	}
	if code, msg := patch("/api/v1/namespaces/default/events/good", `{"message":"changed via core"}`); code != http.StatusOK {
		t.Errorf("core update: %d %s", code, msg)
	}
}

// TestEventsFieldSelectors: each API takes kube-apiserver's keys (core:
// involvedObject.*, reason, reportingComponent, source, type;
// events.k8s.io: regarding.*, reason, reportingController, type) and
// refuses the other's with its 400, for lists and watches alike.
func TestEventsFieldSelectors(t *testing.T) {
	ts, _ := startServer(t)
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()
	eventsNamespace(t, kc, "sel")
	rc := restClient(t, ts.Config)
	for _, body := range []string{
		`{"metadata":{"name":"a"},"involvedObject":{"kind":"Pod","namespace":"sel","name":"p","uid":"u1","apiVersion":"v1","resourceVersion":"7","fieldPath":"spec"},"reason":"Started","type":"Normal","source":{"component":"kubelet"}}`,
		`{"metadata":{"name":"b"},"involvedObject":{"kind":"Pod","namespace":"sel","name":"q"},"reason":"Killed","type":"Warning","eventTime":"2026-01-01T00:00:00.000000Z","reportingComponent":"ctrl","reportingInstance":"i","action":"Kill"}`,
	} {
		if code, msg := statusOf(t, rc.Post().AbsPath("/api/v1/namespaces/sel/events").SetHeader("Content-Type", "application/json").Body([]byte(body)).Do(ctx)); code != http.StatusCreated {
			t.Fatalf("create: %d %s", code, msg)
		}
	}
	names := func(path, selector string) (string, int, string) {
		var code int
		raw, _ := rc.Get().AbsPath(path).Param("fieldSelector", selector).Do(ctx).StatusCode(&code).Raw()
		var l struct {
			Items []metav1.ObjectMeta `json:"-"`
			Raw   []struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			} `json:"items"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(raw, &l)
		var out []string
		for _, i := range l.Raw {
			out = append(out, i.Metadata.Name)
		}
		return strings.Join(out, ","), code, l.Message
	}
	const core, events = "/api/v1/namespaces/sel/events", "/apis/events.k8s.io/v1/namespaces/sel/events"
	for _, tc := range []struct{ path, selector, want string }{
		{core, "involvedObject.kind=Pod", "a,b"},
		{core, "involvedObject.name=p,involvedObject.namespace=sel,involvedObject.uid=u1", "a"},
		{core, "involvedObject.apiVersion=v1,involvedObject.resourceVersion=7,involvedObject.fieldPath=spec", "a"},
		{core, "reason=Killed", "b"},
		{core, "type=Warning", "b"},
		{core, "source=kubelet", "a"},
		{core, "source=ctrl", "b"}, // the reporting controller when there is no source
		{core, "reportingComponent=ctrl", "b"},
		{core, "metadata.name=a", "a"},
		{events, "regarding.name=q", "b"},
		{events, "regarding.kind=Pod,regarding.uid=u1", "a"},
		{events, "regarding.apiVersion=v1,regarding.resourceVersion=7,regarding.fieldPath=spec,regarding.namespace=sel", "a"},
		{events, "reportingController=ctrl", "b"},
		{events, "reason!=Killed,type=Normal", "a"},
		{events, "metadata.namespace=sel,metadata.name=b", "b"},
	} {
		if got, code, msg := names(tc.path, tc.selector); code != http.StatusOK || got != tc.want {
			t.Errorf("%s ?fieldSelector=%s: %d %q %s, want %q", tc.path, tc.selector, code, got, msg, tc.want)
		}
	}
	for _, tc := range []struct{ path, selector, want string }{
		{core, "foo=bar", "field label not supported: foo"},
		{core, "metadata.uid=x", "field label not supported: metadata.uid"},
		{events, "source=kubelet", "field label not supported: source"},
		{events, "involvedObject.name=p", "field label not supported: involvedObject.name"},
	} {
		if _, code, msg := names(tc.path, tc.selector); code != http.StatusBadRequest || msg != tc.want {
			t.Errorf("%s ?fieldSelector=%s: %d %s, want 400 %s", tc.path, tc.selector, code, msg, tc.want)
		}
	}

	// A watch through events.k8s.io/v1 selects by its own keys too.
	w, err := kc.EventsV1().Events("sel").Watch(ctx, metav1.ListOptions{FieldSelector: "reportingController=ctrl", ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	wctx, cancel := context.WithTimeout(ctx, 30e9)
	defer cancel()
	select {
	case e := <-w.ResultChan():
		if o, ok := e.Object.(metav1.Object); !ok || o.GetName() != "b" {
			t.Fatalf("watch event %v %#v, want b", e.Type, e.Object)
		}
	case <-wctx.Done():
		t.Fatal("no watch event")
	}
}
