package storage_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// jsonSyntaxError is what encoding/json, and so kube-apiserver, says of
// "not json"; json-iterator, which the store decodes with, words it
// differently.
const jsonSyntaxError = "invalid character 'o' in literal null (expecting 'u')"

// testCorruptListReported: a list names the values it skipped, with their
// revision and encoding/json's decode error, page by page, so that the
// watch cache learns them when it lists.
func testCorruptListReported(t *testing.T, c *clientv3.Client) {
	s := newWidgetStore(t, c)
	ctx := t.Context()
	if _, err := s.Create(ctx, "ns/a", storagetest.NewWidget("ns", "a", "red")); err != nil {
		t.Fatal(err)
	}
	put, err := c.Put(ctx, storagetest.Prefix+"ns/bad", "not json")
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.GetList(ctx, storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 1 || len(l.Corrupt) != 1 {
		t.Fatalf("list: %d items, corrupt %v; want a and one corrupt value", len(l.Items), l.Corrupt)
	}
	if se := l.Corrupt[0]; !errors.Is(se, storage.ErrCorrupt) || se.Key != "ns/bad" ||
		se.ResourceVersion != put.Header.Revision || se.Detail != jsonSyntaxError {
		t.Errorf("reported %+v, want ns/bad at %d with %q", se, put.Header.Revision, jsonSyntaxError)
	}
	// Page by page: the page that skipped it reports it.
	first, err := s.GetList(ctx, storage.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.GetList(ctx, storage.ListOptions{Limit: 1, Continue: first.Continue})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Corrupt) != 0 || len(second.Items) != 0 || len(second.Corrupt) != 1 || second.Continue != "" {
		t.Errorf("pages: %d items %d corrupt, then %d items %d corrupt (continue %q)",
			len(first.Items), len(first.Corrupt), len(second.Items), len(second.Corrupt), second.Continue)
	}
}

// testCorruptLoggedOncePerRevision: every read of an unreadable value is
// counted, but it is logged once per key and revision, however many
// readers meet it.
func testCorruptLoggedOncePerRevision(t *testing.T, c *clientv3.Client) {
	var logs syncBuffer
	reg := prometheus.NewRegistry()
	s := newWidgetStore(t, c, storage.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), storage.WithMetrics(reg))
	ctx := t.Context()
	w, err := s.Watch(ctx, storage.ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	put, err := c.Put(ctx, storagetest.Prefix+"ns/bad", "not json")
	if err != nil {
		t.Fatal(err)
	}
	// The watch reads it once, and reports it DELETED.
	if evs, err := storage.NewBlocking(w).Next(ctx, nil); err != nil || len(evs) != 1 || evs[0].Type != watch.Deleted {
		t.Fatalf("watch: %v %v", evs, err)
	}
	for range 3 {
		if _, err := s.Get(ctx, "ns/bad", storage.GetOptions{}); !errors.Is(err, storage.ErrCorrupt) {
			t.Fatalf("get: %v", err)
		}
	}
	if _, err := s.GetList(ctx, storage.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	const want = `level=ERROR msg="storage: stored object does not decode`
	if n := strings.Count(logs.String(), want); n != 1 {
		t.Errorf("logged %d times, want once:\n%s", n, logs.String())
	}
	for _, part := range []string{"key=" + storagetest.Prefix + "ns/bad", "revision=" + storage.FormatResourceVersion(put.Header.Revision), jsonSyntaxError} {
		if !strings.Contains(logs.String(), part) {
			t.Errorf("log lacks %q:\n%s", part, logs.String())
		}
	}
	if n := decodeErrorCount(t, reg); n != 5 {
		t.Errorf("apiloom_storage_decode_errors_total = %v, want 5 (watch, 3 gets, list)", n)
	}

	// Another unreadable revision of the key is logged again.
	if _, err := c.Put(ctx, storagetest.Prefix+"ns/bad", "still not json"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "ns/bad", storage.GetOptions{}); !errors.Is(err, storage.ErrCorrupt) {
		t.Fatalf("get: %v", err)
	}
	if n := strings.Count(logs.String(), want); n != 2 {
		t.Errorf("logged %d times after a new revision, want twice:\n%s", n, logs.String())
	}

	// The unsafe delete is logged as what it is.
	if err := s.DeleteCorrupt(ctx, "ns/bad", false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "unsafe delete") {
		t.Errorf("unsafe delete not logged:\n%s", logs.String())
	}
}

// testCorruptWatchRepairWithoutSelector: a watch without a selector does
// not decode previous values; it still reports a readable value written
// over an unreadable one it saw (in its initial events or live) as ADDED.
func testCorruptWatchRepairWithoutSelector(t *testing.T, c *clientv3.Client) {
	s := newWidgetStore(t, c)
	ctx := t.Context()
	if _, err := c.Put(ctx, storagetest.Prefix+"ns/before", "not json"); err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ctx, storage.ListOptions{}) // initial events: none readable
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := c.Put(ctx, storagetest.Prefix+"ns/live", "not json"); err != nil {
		t.Fatal(err)
	}
	good := `{"kind":"Widget","apiVersion":"storagetest.apiloom.dev/v1","metadata":{"name":"%s","namespace":"ns"}}`
	for _, name := range []string{"before", "live"} {
		if _, err := c.Put(ctx, storagetest.Prefix+"ns/"+name, strings.ReplaceAll(good, "%s", name)); err != nil {
			t.Fatal(err)
		}
	}
	events := storage.NewBlocking(w)
	var evs []storage.Event[*storagetest.Widget]
	for len(evs) < 3 {
		if evs, err = events.Next(ctx, evs); err != nil {
			t.Fatal(err)
		}
	}
	got := []string{}
	for _, e := range evs {
		got = append(got, string(e.Type)+" "+e.Object.Name)
	}
	if want := "DELETED live,ADDED before,ADDED live"; strings.Join(got, ",") != want {
		t.Errorf("events %v, want %s", got, want)
	}
}

// syncBuffer is a bytes.Buffer safe for the watch goroutine and the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// decodeErrorCount is the widgets' apiloom_storage_decode_errors_total.
func decodeErrorCount(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "apiloom_storage_decode_errors_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == "widgets.storagetest.apiloom.dev" {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatal("apiloom_storage_decode_errors_total{resource=widgets.storagetest.apiloom.dev} not registered")
	return 0
}
