package endpoints

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// scriptedStore serves watches from a script: each Poll returns the next
// step. It stands in for storage only where a real store cannot be made to
// fail on cue; everything else in these tests runs on etcd.
type scriptedStore struct {
	storage.Interface[*widget] // nil: only Watch is used
	steps                      []step
}

type step struct {
	events []storage.Event[*widget]
	err    error
}

func (s *scriptedStore) Watch(ctx context.Context, _ storage.ListOptions) (storage.Watcher[*widget], error) {
	return &scriptedWatcher{steps: s.steps}, nil
}

type scriptedWatcher struct {
	mu      sync.Mutex
	steps   []step
	stopped bool
}

func (w *scriptedWatcher) Poll(ctx context.Context, buf []storage.Event[*widget]) ([]storage.Event[*widget], error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.steps) == 0 {
		return buf, io.EOF
	}
	s := w.steps[0]
	w.steps = w.steps[1:]
	return append(buf, s.events...), s.err
}

// NotifyOnce: the script always has a next step (io.EOF at its end).
func (w *scriptedWatcher) NotifyOnce(wake func()) { wake() }

func (w *scriptedWatcher) Stop() { w.mu.Lock(); w.stopped = true; w.mu.Unlock() }

func TestWatchErrorEvent(t *testing.T) {
	obj := storagetest.NewWidget("ns", "a", "red")
	obj.ResourceVersion = "7"
	store := &scriptedStore{steps: []step{
		{events: []storage.Event[*widget]{{Type: watch.Added, Object: obj}}},
		// Events and an error together: the events go out first.
		{events: []storage.Event[*widget]{{Type: watch.Modified, Object: obj}}, err: &storage.Error{Err: storage.ErrExpired, ResourceVersion: 3, CurrentRevision: 9}},
		{events: []storage.Event[*widget]{{Type: watch.Deleted, Object: obj}}}, // never reached
	}}
	srv := httptest.NewServer(NewHandler(NewResource(storagetest.Definition(), store)))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + widgetsPath + "ns/widgets?watch=true&resourceVersion=3")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	if resp.StatusCode != 200 || len(lines) != 3 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	var ev metav1.WatchEvent
	decodeJSON(t, []byte(lines[2]), &ev)
	var st metav1.Status
	decodeJSON(t, ev.Object.Raw, &st)
	if ev.Type != "ERROR" || st.Kind != "Status" || st.Code != 410 || st.Reason != metav1.StatusReasonExpired || st.Message != "too old resource version: 3 (9)" {
		t.Fatalf("error event %s", lines[2])
	}
	if !strings.HasPrefix(lines[0], `{"type":"ADDED","object":{"kind":"Widget","apiVersion":"storagetest.apiloom.dev/v1",`) ||
		!strings.HasPrefix(lines[1], `{"type":"MODIFIED"`) {
		t.Fatalf("events %q", lines[:2])
	}
}

// TestWatchUsesProducerFrames checks that a frame the producer encoded is
// sent as it is, byte for byte, and that a Table watch does not use it.
func TestWatchUsesProducerFrames(t *testing.T) {
	obj := storagetest.NewWidget("ns", "a", "red")
	frame := []byte(`{"type":"ADDED","object":{"kind":"Widget","apiVersion":"storagetest.apiloom.dev/v1","metadata":{"name":"precomputed"}}}` + "\n")
	store := &scriptedStore{steps: []step{{events: []storage.Event[*widget]{{Type: watch.Added, Object: obj, Frame: frame}}}}}
	srv := httptest.NewServer(NewHandler(NewResource(storagetest.Definition(), store)))
	defer srv.Close()

	get := func(accept string) string {
		req, _ := http.NewRequest("GET", srv.URL+widgetsPath+"ns/widgets?watch=true", nil)
		req.Header.Set("Accept", accept)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	if got := get("application/json"); got != string(frame) {
		t.Fatalf("got %q", got)
	}
	var ev metav1.WatchEvent
	if err := json.Unmarshal([]byte(get("application/json;as=Table;v=v1;g=meta.k8s.io")), &ev); err != nil || !strings.Contains(string(ev.Object.Raw), `"cells":["a"`) {
		t.Fatalf("table event %s, %v", ev.Object.Raw, err)
	}
}
