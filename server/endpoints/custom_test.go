package endpoints

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/websocket"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/hook"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// The tests give Widget three subresources of its own: the action
// "paint" (a PaintRequest in, a PaintResult out, which sets the
// Widget's status.phase through UpdateStatus), the view "summary" and
// the stream "lines", whose hooks the tests drive.

type PaintRequest struct {
	metav1.TypeMeta `json:",inline"`
	Phase           string `json:"phase,omitempty"`
	Coats           int64  `json:"coats,omitempty"`
	// Behavior makes the hook fail: "panic", "hang", "conflict", "fail".
	Behavior string `json:"behavior,omitempty"`
}

func (p *PaintRequest) DeepCopyObject() k8sruntime.Object { c := *p; return &c }

type PaintResult struct {
	metav1.TypeMeta `json:",inline"`
	Phase           string `json:"phase"`
	Coats           int64  `json:"coats"`
	DryRun          bool   `json:"dryRun"`
	User            string `json:"user,omitempty"`
}

func (p *PaintResult) DeepCopyObject() k8sruntime.Object { c := *p; return &c }

type LineOptions struct {
	metav1.TypeMeta `json:",inline"`
	Follow          bool     `json:"follow,omitempty"`
	Lines           *int64   `json:"lines,omitempty"`
	Prefix          string   `json:"prefix,omitempty"`
	Tags            []string `json:"tags,omitempty"`
}

func (o *LineOptions) DeepCopyObject() k8sruntime.Object { c := *o; return &c }

// paintSchema: coats at most 3, defaulted to 1; phase at most 12 long.
const paintSchema = `{"type":"object","properties":{
  "apiVersion":{"type":"string"},"kind":{"type":"string"},
  "phase":{"type":"string","maxLength":12},
  "coats":{"type":"integer","maximum":3,"default":1},
  "behavior":{"type":"string"}}}`

// streamHook is what the "lines" stream does: it writes each string it
// receives from lines as one line, until lines closes or the request
// ends; it reports its start and end on started and ended.
type streamHook struct {
	lines   chan string
	started chan *LineOptions
	ended   chan error
}

func customWidgets(sh *streamHook) *resource.Definition[*widget] {
	def := validatedWidgets(storagetest.Definition())
	def.Subresources = []resource.SubresourceInfo{
		{Name: "paint", Type: resource.Action, Verbs: []string{"create"}},
		{Name: "summary", Type: resource.View, Verbs: []string{"get"}},
		{Name: "lines", Type: resource.Stream, Verbs: []string{"get"}},
	}
	// A status write warns: an action's writes warn its client.
	def.Hooks = &hook.Hooks[*widget]{ValidateStatusUpdate: func(*hook.Request, *widget, *widget) (hook.Warnings, field.ErrorList) {
		return hook.Warnings{"fresh paint"}, nil
	}}
	def.Custom = []resource.Custom[*widget]{
		resource.NewAction("paint", func() *PaintRequest { return new(PaintRequest) }, paintSchema, paint),
		resource.NewView("summary", func(req *hook.Request, w *widget) (*PaintResult, error) {
			if w.Spec.Color == "broken" {
				return nil, errors.New("no summary of a broken widget")
			}
			return &PaintResult{Phase: w.Status.Phase, User: userName(req)}, nil
		}),
		resource.NewStream("lines", func() *LineOptions { return new(LineOptions) }, func(req *hook.Request, w *widget, o *LineOptions, out io.Writer) error {
			sh.started <- o
			err := func() error {
				for {
					select {
					case <-req.Context().Done():
						return req.Context().Err()
					case l, ok := <-sh.lines:
						if !ok {
							return nil
						}
						if l == "fail" {
							return apierrors.NewBadRequest("the stream refuses")
						}
						if _, err := io.WriteString(out, o.Prefix+l+"\n"); err != nil {
							return err
						}
					}
				}
			}()
			sh.ended <- err
			return err
		}),
	}
	return def
}

func userName(req *hook.Request) string {
	if req.User == nil {
		return ""
	}
	return req.User.GetName()
}

// paint sets the Widget's status.phase to the request's, through the
// server's write path.
func paint(req *hook.Request, w *widget, in *PaintRequest) (*PaintResult, error) {
	switch in.Behavior {
	case "panic":
		panic("paint spilled")
	case "hang":
		<-req.Context().Done()
		return nil, req.Context().Err()
	case "conflict":
		return nil, apierrors.NewConflict(storagetest.Definition().GroupResource(), w.Name, errors.New("being painted"))
	case "fail":
		return nil, errors.New("out of paint")
	}
	if req.Operation != hook.Create || req.Subresource != "paint" || req.Name != w.Name || req.Namespace != w.Namespace {
		return nil, fmt.Errorf("unexpected request %+v", req)
	}
	c := w.DeepCopyObject().(*widget)
	c.Status.Phase = in.Phase
	if _, err := hook.UpdateStatus(req, c); err != nil {
		return nil, err
	}
	return &PaintResult{Phase: in.Phase, Coats: in.Coats, DryRun: req.DryRun}, nil
}

func newCustomEnv(t *testing.T, maxStreams int) (*env, *streamHook) {
	sh := &streamHook{lines: make(chan string), started: make(chan *LineOptions, 10), ended: make(chan error, 10)}
	e := newEnvDefs(t, false, customWidgets(sh), gadgetDefinition(),
		WithHooks(nil, 300*time.Millisecond), WithWriters(NewWriters()), WithMaxStreams(maxStreams))
	return e, sh
}

func TestCustomAction(t *testing.T) {
	e, _ := newCustomEnv(t, 0)
	w := e.createWidget("ns", "w1", "red")
	path := widgetsPath + "ns/widgets/w1/paint"

	// Watch the Widget from its creation on: the action's write is one
	// MODIFIED event.
	watcher, err := e.widgets.Watch(e.ctx, storage.ListOptions{Namespace: "ns", ResourceVersion: w.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	events := storage.NewBlocking(watcher)
	defer events.Stop()

	resp := e.do("POST", path+"?dryRun=All", "application/json", `{"phase":"dry"}`, "User-Agent", "painter/1.0")
	if resp.code != http.StatusCreated {
		t.Fatalf("dry run: %d %s", resp.code, resp.body)
	}
	var res PaintResult
	if err := json.Unmarshal(resp.body, &res); err != nil || !res.DryRun || res.Coats != 1 || res.Kind != "PaintResult" || res.APIVersion != widgetAPI {
		t.Fatalf("dry run result %+v (%v): %s", res, err, resp.body)
	}
	resp = e.do("POST", path, "application/yaml", "kind: PaintRequest\napiVersion: "+widgetAPI+"\nphase: wet\ncoats: 2\n", "User-Agent", "painter/1.0")
	if resp.code != http.StatusCreated {
		t.Fatalf("action: %d %s", resp.code, resp.body)
	}
	if err := json.Unmarshal(resp.body, &res); err != nil || res.DryRun || res.Phase != "wet" || res.Coats != 2 {
		t.Fatalf("result %+v (%v)", res, err)
	}
	if got := resp.header.Values("Warning"); len(got) != 1 || !strings.Contains(got[0], "fresh paint") {
		t.Fatalf("warnings %q, want the status write's", got)
	}
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer cancel()
	evs, err := events.Next(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Type != watch.Modified || evs[0].Object.Status.Phase != "wet" {
		t.Fatalf("events %+v, want one MODIFIED to phase wet (the dry run stores nothing)", evs)
	}
	var found bool
	for _, mf := range evs[0].Object.ManagedFields {
		if mf.Manager == "painter" && mf.Subresource == "status" && mf.Operation == metav1.ManagedFieldsOperationUpdate {
			found = true
		}
	}
	if !found {
		t.Fatalf("no managed fields of painter on status: %+v", evs[0].Object.ManagedFields)
	}
	short, cancelShort := context.WithTimeout(e.ctx, 200*time.Millisecond)
	defer cancelShort()
	if more, err := events.Next(short, nil); len(more) > 0 {
		t.Fatalf("more events %+v (%v)", more, err)
	}
}

func TestCustomActionErrors(t *testing.T) {
	e, _ := newCustomEnv(t, 0)
	e.createWidget("ns", "w1", "red")
	path := widgetsPath + "ns/widgets/w1/paint"
	for _, tc := range []struct {
		name, path, body, ct string
		code                 int
		reason               metav1.StatusReason
		msg                  string
	}{
		{"invalid input", path, `{"phase":"much-too-long-a-phase","coats":4}`, "application/json", 422, metav1.StatusReasonInvalid, ""},
		{"wrong kind", path, `{"kind":"Widget"}`, "application/json", 400, metav1.StatusReasonBadRequest, ""},
		{"strict", path + "?fieldValidation=Strict", `{"colour":"x"}`, "application/json", 400, metav1.StatusReasonBadRequest, ""},
		{"bad dryRun", path + "?dryRun=Some", `{}`, "application/json", 422, metav1.StatusReasonInvalid, ""}, // as a create's
		{"apierror", path, `{"behavior":"conflict"}`, "application/json", 409, metav1.StatusReasonConflict, ""},
		{"plain error", path, `{"behavior":"fail"}`, "application/json", 500, metav1.StatusReasonInternalError, "Internal error occurred: paint of Widget: out of paint"},
		{"panic", path, `{"behavior":"panic"}`, "application/json", 500, metav1.StatusReasonInternalError, ""},
		{"timeout", path, `{"behavior":"hang"}`, "application/json", 500, metav1.StatusReasonInternalError, ""},
		{"missing parent", widgetsPath + "ns/widgets/nope/paint", `{}`, "application/json", 404, metav1.StatusReasonNotFound, `widgets.storagetest.apiloom.dev "nope" not found`},
		{"unsupported media", path, `x`, "text/plain", 415, metav1.StatusReasonUnsupportedMediaType, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.do("POST", tc.path, tc.ct, tc.body)
			st := resp.wantStatus(t, tc.code, tc.reason, tc.msg)
			if tc.name == "invalid input" && (st.Details == nil || len(st.Details.Causes) != 2) {
				t.Fatalf("want two causes: %s", resp.body)
			}
		})
	}
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		e.do(m, path, "application/json", `{}`).wantStatus(t, 405, metav1.StatusReasonMethodNotAllowed, "")
	}
	e.do("POST", widgetsPath+"ns/widgets/w1/unknown", "application/json", `{}`).wantStatus(t, 404, metav1.StatusReasonNotFound, "")
	e.do("POST", path, "application/json", `{}`, "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").wantStatus(t, 406, metav1.StatusReasonNotAcceptable, "")
}

func TestCustomView(t *testing.T) {
	e, _ := newCustomEnv(t, 0)
	e.createWidget("ns", "w1", "red")
	e.createWidget("ns", "w2", "broken")
	resp := e.do("GET", widgetsPath+"ns/widgets/w1/summary", "", "")
	var res PaintResult
	if resp.code != 200 || json.Unmarshal(resp.body, &res) != nil || res.Kind != "PaintResult" {
		t.Fatalf("view: %d %s", resp.code, resp.body)
	}
	resp = e.do("GET", widgetsPath+"ns/widgets/w1/summary", "", "", "Accept", "application/yaml")
	if resp.code != 200 || !strings.Contains(string(resp.body), "kind: PaintResult") {
		t.Fatalf("view as YAML: %d %s", resp.code, resp.body)
	}
	e.do("GET", widgetsPath+"ns/widgets/w2/summary", "", "").wantStatus(t, 500, metav1.StatusReasonInternalError, "")
	e.do("POST", widgetsPath+"ns/widgets/w1/summary", "application/json", "{}").wantStatus(t, 405, metav1.StatusReasonMethodNotAllowed, "")
	e.do("GET", widgetsPath+"ns/widgets/w1/summary", "", "", "Accept", "text/html").wantStatus(t, 406, metav1.StatusReasonNotAcceptable, "")
}

// waitGoroutines waits until at most n goroutines run, or fails.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for runtime.NumGoroutine() > n {
		select {
		case <-deadline:
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		case <-tick.C:
		}
	}
}

func TestCustomStream(t *testing.T) {
	e, sh := newCustomEnv(t, 1)
	e.createWidget("ns", "w1", "red")
	path := widgetsPath + "ns/widgets/w1/lines"
	e.srv.Client().CloseIdleConnections()
	before := runtime.NumGoroutine()

	ctx, cancel := context.WithCancel(e.ctx)
	// The answer starts with the hook's first Write.
	go func() { sh.lines <- "one" }()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+path+"?follow=true&lines=3&prefix=%3E&tags=a&tags=b&unknown=x", nil)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("%d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	o := <-sh.started
	if !o.Follow || o.Lines == nil || *o.Lines != 3 || o.Prefix != ">" || len(o.Tags) != 2 {
		t.Fatalf("options %+v", o)
	}
	// A second stream is beyond the limit of 1.
	r2 := e.do("GET", path, "", "")
	r2.wantStatus(t, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests, "")
	if r2.header.Get("Retry-After") != "1" {
		t.Fatalf("Retry-After %q", r2.header.Get("Retry-After"))
	}
	lines := bufio.NewReader(resp.Body)
	for i, l := range []string{"one", "two", "three"} {
		if i > 0 {
			sh.lines <- l // the hook writes it; the client reads it before the next
		}
		got, err := lines.ReadString('\n')
		if err != nil || got != ">"+l+"\n" {
			t.Fatalf("line %q (%v), want %q", got, err, l)
		}
	}
	cancel()
	resp.Body.Close()
	if err := <-sh.ended; !errors.Is(err, context.Canceled) {
		t.Fatalf("the hook ended with %v, want its context cancelled", err)
	}
	e.srv.Client().CloseIdleConnections()
	waitGoroutines(t, before)

	// An error before the first byte is the answer.
	go func() { sh.lines <- "fail" }()
	e.do("GET", path, "", "").wantStatus(t, 400, metav1.StatusReasonBadRequest, "the stream refuses")
	<-sh.started
	<-sh.ended
	e.do("GET", path+"?lines=many", "", "").wantStatus(t, 400, metav1.StatusReasonBadRequest, `invalid value "many" for query parameter "lines": not an integer of 64 bits`)
	e.do("GET", widgetsPath+"ns/widgets/nope/lines", "", "").wantStatus(t, 404, metav1.StatusReasonNotFound, "")
}

func TestIsLongRunning(t *testing.T) {
	h := NewHandler(NewResource(customWidgets(nil), nil)).(*router)
	for path, want := range map[string]bool{
		widgetsPath + "ns/widgets/w1/lines":                 true,
		widgetsPath + "ns/widgets/w1/lines?follow=1":        true,
		widgetsPath + "ns/widgets/w1/summary":               false,
		widgetsPath + "ns/widgets/w1":                       false,
		widgetsPath + "ns/widgets?watch=true":               true,
		"/apis/storagetest.apiloom.dev/v1/widgets/w1/lines": false, // not in its namespace
	} {
		r, _ := http.NewRequest("GET", path, nil)
		if got := h.IsLongRunning(r); got != want {
			t.Errorf("%s: %v, want %v", path, got, want)
		}
		// IsStream: the same but for the watch.
		if got, stream := h.IsStream(r), want && !strings.Contains(path, "watch="); got != stream {
			t.Errorf("%s: IsStream %v, want %v", path, got, stream)
		}
	}
	r0, _ := http.NewRequest("GET", "/apis/other.example/v1/things/t1/lines", nil)
	if h.IsStream(r0) {
		t.Error("a path of no served kind ending in a stream's name is no stream")
	}
	r, _ := http.NewRequest("POST", widgetsPath+"ns/widgets/w1/lines", nil)
	if h.IsLongRunning(r) {
		t.Error("POST of a stream is not long-running")
	}
}

func TestCustomStreamWebSocket(t *testing.T) {
	e, sh := newCustomEnv(t, 0)
	e.createWidget("ns", "w1", "red")
	e.srv.Client().CloseIdleConnections()
	before := runtime.NumGoroutine()
	url := strings.Replace(e.srv.URL, "http://", "ws://", 1) + widgetsPath + "ns/widgets/w1/lines?prefix=ws:"
	ws, err := websocket.Dial(url, "", e.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if o := <-sh.started; o.Prefix != "ws:" {
		t.Fatalf("options %+v", o)
	}
	for _, l := range []string{"a", "b"} {
		sh.lines <- l
		_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
		var msg []byte
		for len(msg) == 0 { // the stream starts with an empty ping message
			if err := websocket.Message.Receive(ws, &msg); err != nil {
				t.Fatal(err)
			}
		}
		if string(msg) != "ws:"+l+"\n" {
			t.Fatalf("message %q, want line %q", msg, l)
		}
	}
	ws.Close()
	if err := <-sh.ended; !errors.Is(err, context.Canceled) {
		t.Fatalf("the hook ended with %v, want its context cancelled", err)
	}
	waitGoroutines(t, before)
}

func FuzzDecodeQuery(f *testing.F) {
	f.Add("follow=true&lines=3&tags=a&tags=b&prefix=x")
	f.Add("lines=-9223372036854775809&follow=maybe")
	f.Add("%zz&lines=&=&&follow")
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		var o LineOptions
		if err := DecodeQuery(q, &o); err != nil && !apierrors.IsBadRequest(err) {
			t.Fatalf("%q: %v, not a 400", raw, err)
		}
	})
}

func TestDecodeQuery(t *testing.T) {
	type opts struct {
		metav1.TypeMeta `json:",inline"`
		N               uint8    `json:"n"`
		P               *bool    `json:"p"`
		S               []string `json:"s"`
		F               *float64 `json:"f"`
		Plain           string
	}
	var o opts
	q, _ := url.ParseQuery("n=7&p=true&s=x&s=y&f=1.5&Plain=z&kind=Other&other=1")
	if err := DecodeQuery(q, &o); err != nil {
		t.Fatal(err)
	}
	if o.N != 7 || o.P == nil || !*o.P || len(o.S) != 2 || o.F != nil || o.Plain != "z" || o.Kind != "" {
		t.Fatalf("%+v", o)
	}
	// Bools as apimachinery reads them: false only for 0 and false.
	for raw, want := range map[string]bool{"p": true, "p=yes": true, "p=0": false, "p=FALSE": false, "p=1": true} {
		var o opts
		q, _ := url.ParseQuery(raw)
		if err := DecodeQuery(q, &o); err != nil || o.P == nil || *o.P != want {
			t.Errorf("%s: %v, %v; want %v", raw, err, o.P, want)
		}
	}
	for _, bad := range []string{"n=256", "n=-1", "n=x"} {
		q, _ := url.ParseQuery(bad)
		if err := DecodeQuery(q, &opts{}); !apierrors.IsBadRequest(err) {
			t.Errorf("%s: %v, want 400", bad, err)
		}
	}
}

// TestCustomStreamHTTP2: over HTTP/2 each Write is a DATA frame the
// client reads before the next, and the hook ends when the client resets
// its stream.
func TestCustomStreamHTTP2(t *testing.T) {
	sh := &streamHook{lines: make(chan string), started: make(chan *LineOptions, 10), ended: make(chan error, 10)}
	e := newEnvDefs(t, true, customWidgets(sh), gadgetDefinition(), WithWriters(NewWriters()))
	e.createWidget("ns", "w1", "red")
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	go func() { sh.lines <- "one" }()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+widgetsPath+"ns/widgets/w1/lines?follow=true", nil)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.StatusCode != 200 {
		t.Fatalf("%s %d", resp.Proto, resp.StatusCode)
	}
	<-sh.started
	lines := bufio.NewReader(resp.Body)
	for i, l := range []string{"one", "two"} {
		if i > 0 {
			sh.lines <- l
		}
		if got, err := lines.ReadString('\n'); err != nil || got != l+"\n" {
			t.Fatalf("line %q (%v), want %q", got, err, l)
		}
	}
	cancel()
	if err := <-sh.ended; !errors.Is(err, context.Canceled) {
		t.Fatalf("the hook ended with %v, want its context cancelled", err)
	}
}
