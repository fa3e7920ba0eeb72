package endpoints

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/websocket"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
)

// eventTimeout bounds every wait for a watch event.
const eventTimeout = 20 * time.Second

// watchStream is an open watch response, decoded event by event on its
// own goroutine, which ends when the stream ends or the test does.
type watchStream struct {
	t      *testing.T
	resp   *http.Response
	events chan metav1.WatchEvent
	done   chan error // the reader's final error (io.EOF for a clean end)
}

func (e *env) watch(path string, headers ...string) *watchStream {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.ctx, "GET", e.srv.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		e.t.Fatalf("watch %s: %d %s", path, resp.StatusCode, body)
	}
	s := &watchStream{t: e.t, resp: resp, events: make(chan metav1.WatchEvent, 100), done: make(chan error, 1)}
	go func() {
		dec := json.NewDecoder(resp.Body)
		for {
			var ev metav1.WatchEvent
			if err := dec.Decode(&ev); err != nil {
				s.done <- err
				close(s.events)
				return
			}
			s.events <- ev
		}
	}()
	e.t.Cleanup(func() {
		resp.Body.Close()
		for range s.events {
		}
	})
	return s
}

// next returns the next event, failing the test if none comes in time.
func (s *watchStream) next() metav1.WatchEvent {
	s.t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			s.t.Fatalf("watch ended: %v", <-s.done)
		}
		return ev
	case <-time.After(eventTimeout):
		s.t.Fatal("no watch event in time")
	}
	return metav1.WatchEvent{}
}

// nextWidget returns the next event, which must be of type typ, decoded.
func (s *watchStream) nextWidget(typ string) *widget {
	s.t.Helper()
	ev := s.next()
	var w widget
	if err := json.Unmarshal(ev.Object.Raw, &w); err != nil {
		s.t.Fatal(err)
	}
	if ev.Type != typ || w.Kind != "Widget" || w.APIVersion != widgetAPI {
		s.t.Fatalf("event %s %s, want %s of a Widget", ev.Type, ev.Object.Raw, typ)
	}
	return &w
}

// end waits for the stream to end cleanly.
func (s *watchStream) end() {
	s.t.Helper()
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				if err := <-s.done; !errors.Is(err, io.EOF) {
					s.t.Fatalf("stream ended with %v", err)
				}
				return
			}
			s.t.Fatalf("unexpected event %s %s", ev.Type, ev.Object.Raw)
		case <-time.After(eventTimeout):
			s.t.Fatal("stream did not end in time")
		}
	}
}

func TestWatch(t *testing.T) {
	e := newEnv(t, false)
	ns := widgetsPath + "watch/widgets"
	e.createWidget("watch", "old", "red")

	t.Run("legacy watch from 0", func(t *testing.T) {
		s := e.watch(ns + "?watch=true&resourceVersion=0")
		if ct := s.resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Fatalf("Content-Type %q", ct)
		}
		if w := s.nextWidget("ADDED"); w.Name != "old" {
			t.Fatalf("initial %s", w.Name)
		}
		created := e.createWidget("watch", "new", "red")
		if w := s.nextWidget("ADDED"); w.Name != "new" || w.ResourceVersion != created.ResourceVersion {
			t.Fatalf("added %+v", w.ObjectMeta)
		}
		created.Spec.Color = "blue"
		updated := e.put(ns+"/new", created).widget(t, http.StatusOK)
		if w := s.nextWidget("MODIFIED"); w.ResourceVersion != updated.ResourceVersion || w.Spec.Color != "blue" {
			t.Fatalf("modified %+v", w)
		}
		deleted := e.do("DELETE", ns+"/new", "", "").widget(t, http.StatusOK)
		if w := s.nextWidget("DELETED"); w.ResourceVersion != deleted.ResourceVersion {
			t.Fatalf("deleted at %s, event at %s", deleted.ResourceVersion, w.ResourceVersion)
		}
	})

	t.Run("watch from a list", func(t *testing.T) {
		l := e.list(t, ns)
		s := e.watch(ns + "?watch=1&resourceVersion=" + l.Metadata.ResourceVersion + "&allowWatchBookmarks=true")
		e.createWidget("watch", "after-list", "red")
		if w := s.nextWidget("ADDED"); w.Name != "after-list" {
			t.Fatalf("first event after the list: %s", w.Name)
		}
	})

	t.Run("timeoutSeconds ends the stream", func(t *testing.T) {
		s := e.watch(ns + "?watch=true&timeoutSeconds=1&resourceVersion=" + e.list(t, ns).Metadata.ResourceVersion)
		s.end()
	})

	t.Run("watch-list", func(t *testing.T) {
		s := e.watch(ns + "?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
		names := map[string]bool{}
		for {
			ev := s.next()
			if ev.Type == "BOOKMARK" {
				var w widget
				decodeJSON(t, ev.Object.Raw, &w)
				if w.Annotations[metav1.InitialEventsAnnotationKey] != "true" || w.Kind != "Widget" || w.ResourceVersion == "" {
					t.Fatalf("bookmark %s", ev.Object.Raw)
				}
				break
			}
			var w widget
			decodeJSON(t, ev.Object.Raw, &w)
			names[w.Name] = ev.Type == "ADDED"
		}
		if !names["old"] || !names["after-list"] || len(names) != 2 {
			t.Fatalf("initial events %v", names)
		}
		e.do("GET", ns+"?watch=true&sendInitialEvents=true", "", "").wantStatus(t, 422, metav1.StatusReasonInvalid, "")
		e.do("GET", ns+"?watch=true&resourceVersionMatch=NotOlderThan", "", "").wantStatus(t, 422, metav1.StatusReasonInvalid, "")
	})

	t.Run("single object", func(t *testing.T) {
		s := e.watch(ns + "/old?watch=true")
		if w := s.nextWidget("ADDED"); w.Name != "old" {
			t.Fatalf("got %s", w.Name)
		}
		e.createWidget("watch", "other", "red")
		old := e.do("GET", ns+"/old", "", "").widget(t, 200)
		old.Spec.Size = 5
		e.put(ns+"/old", old).widget(t, 200)
		if w := s.nextWidget("MODIFIED"); w.Name != "old" {
			t.Fatalf("got %s", w.Name)
		}
		e.do("GET", ns+"/old?watch=true&fieldSelector=metadata.name%3Dother", "", "").wantStatus(t, 400, metav1.StatusReasonBadRequest, "fieldSelector metadata.name doesn't match requested name")
	})

	t.Run("expired resourceVersion", func(t *testing.T) {
		rv := e.list(t, ns).Metadata.ResourceVersion
		e.createWidget("watch", "bump", "red")
		e.createWidget("watch", "bump2", "red")
		e.compact(e.rev())
		r := e.do("GET", ns+"?watch=true&resourceVersion="+rv, "", "")
		if r.code == http.StatusOK {
			var ev metav1.WatchEvent
			decodeJSON(t, r.body, &ev)
			var st metav1.Status
			decodeJSON(t, ev.Object.Raw, &st)
			if ev.Type != "ERROR" || st.Code != 410 || st.Reason != metav1.StatusReasonExpired || st.Kind != "Status" {
				t.Fatalf("expired watch: %s", r.body)
			}
			return
		}
		r.wantStatus(t, 410, metav1.StatusReasonExpired, "")
	})

	t.Run("table watch", func(t *testing.T) {
		s := e.watch(ns+"?watch=true&resourceVersion=0", "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
		for i := 0; i < 2; i++ {
			ev := s.next()
			var tbl metav1.Table
			decodeJSON(t, ev.Object.Raw, &tbl)
			if tbl.Kind != "Table" || len(tbl.Rows) != 1 || (i == 0) != (len(tbl.ColumnDefinitions) == 2) {
				t.Fatalf("event %d: %s", i, ev.Object.Raw)
			}
		}
	})

	t.Run("not acceptable", func(t *testing.T) {
		// A watch has no YAML form; its 406 has, as from kube-apiserver.
		st := e.do("GET", ns+"?watch=true", "", "", "Accept", "application/yaml").statusAs(t, negotiation.MediaYAML)
		if st.Code != 406 || st.Reason != metav1.StatusReasonNotAcceptable || st.Message != "only the following media types are accepted: application/json, application/cbor" {
			t.Fatalf("%+v", st)
		}
	})
}

func TestWatchHTTP2(t *testing.T) {
	e := newEnv(t, true)
	ns := widgetsPath + "h2/widgets"
	e.createWidget("h2", "a", "red")
	s := e.watch(ns + "?watch=true&resourceVersion=0")
	if s.resp.ProtoMajor != 2 {
		t.Fatalf("protocol %s", s.resp.Proto)
	}
	s.nextWidget("ADDED")
	e.createWidget("h2", "b", "red")
	if w := s.nextWidget("ADDED"); w.Name != "b" {
		t.Fatalf("got %s", w.Name)
	}
}

func TestWatchWebSocket(t *testing.T) {
	e := newEnv(t, false)
	ns := widgetsPath + "ws/widgets"
	e.createWidget("ws", "a", "red")
	url := strings.Replace(e.srv.URL, "http://", "ws://", 1) + ns + "?watch=true&resourceVersion=0"
	ws, err := websocket.Dial(url, "", e.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	read := func(want string) {
		t.Helper()
		_ = ws.SetReadDeadline(time.Now().Add(eventTimeout))
		var msg string
		if err := websocket.Message.Receive(ws, &msg); err != nil {
			t.Fatal(err)
		}
		var ev metav1.WatchEvent
		decodeJSON(t, []byte(msg), &ev)
		var w widget
		decodeJSON(t, ev.Object.Raw, &w)
		if ev.Type != "ADDED" || w.Name != want || strings.Count(msg, "\n") != 1 {
			t.Fatalf("message %q", msg)
		}
	}
	read("a")
	e.createWidget("ws", "b", "red")
	read("b")

	// Without an Origin the handshake is refused, as kube-apiserver does.
	r := e.do("GET", ns+"?watch=true", "", "", "Connection", "Upgrade", "Upgrade", "websocket",
		"Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	if r.code != http.StatusForbidden {
		t.Fatalf("handshake without Origin: %d %s", r.code, r.body)
	}
}
