package endpoints

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/cache"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
	"github.com/apiloom/apiloom/server/wire"
)

// TestGetWritesTheCachedJSON: a GET the watch cache answers is written
// from the item's JSON, byte for byte what encoding the object gives, and
// in YAML the same as a GET that encodes; a GET the cache passes to etcd
// is encoded as before.
func TestGetWritesTheCachedJSON(t *testing.T) {
	def := storagetest.Definition()
	store := storage.New(storagetest.NewClient(t, etcdtest.Start(t), "/get-test"), "/registry/widgets", def)
	c, err := cache.New(def, store)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	created, err := c.Create(ctx, storage.Key("ns", "a"), storagetest.NewWidget("ns", "a", "red", "tier", "web"))
	if err != nil {
		t.Fatal(err)
	}
	h := NewHandler(NewResource(def, c))
	get := func(query, accept string) []byte {
		t.Helper()
		r := httptest.NewRequestWithContext(ctx, "GET", widgetsPath+"ns/widgets/a"+query, nil)
		r.Header.Set("Accept", accept)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", query, w.Code, w.Body)
		}
		return w.Body.Bytes()
	}
	// The cache has the object at its revision once a list at it returns.
	if _, err := c.GetList(ctx, storage.ListOptions{ResourceVersion: created.ResourceVersion, ResourceVersionMatch: "NotOlderThan"}); err != nil {
		t.Fatal(err)
	}
	cached, _, err := c.GetEncoded(ctx, "ns/a", storage.GetOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	want, err := wire.EncodeObject(cached, cached.GroupVersionKind())
	if err != nil {
		t.Fatal(err)
	}
	if got := get("?resourceVersion=0", "application/json"); !bytes.Equal(got, want) {
		t.Errorf("GET from the cache:\n%s\nwant\n%s", got, want)
	}
	if got := get("", "application/json"); !bytes.Equal(got, want) {
		t.Errorf("consistent GET:\n%s\nwant\n%s", got, want)
	}
	fromCache, encoded := get("?resourceVersion=0", "application/yaml"), get("", "application/yaml")
	if !bytes.Equal(fromCache, encoded) || !strings.Contains(string(fromCache), "name: a") {
		t.Errorf("YAML from the cache:\n%s\nencoded:\n%s", fromCache, encoded)
	}
}

// markingStore answers every GetEncoded with JSON of its own, to show
// which GETs write the store's JSON.
type markingStore struct {
	storage.Interface[*widget]
}

var marker = []byte(`{"kind":"Widget","apiVersion":"storagetest.apiloom.dev/v1","metadata":{"name":"marked"}}`)

func (s markingStore) GetEncoded(ctx context.Context, key string, opts storage.GetOptions) (*widget, []byte, error) {
	obj, err := s.Get(ctx, key, opts)
	return obj, marker, err
}

// TestGetWritesTheStoresJSONOnlyForTheObject: the store's JSON is written
// for a GET of the object in JSON, and never for a Table or partial
// metadata, which are built from the object.
func TestGetWritesTheStoresJSONOnlyForTheObject(t *testing.T) {
	def := storagetest.Definition()
	store := storage.New(storagetest.NewClient(t, etcdtest.Start(t), "/get-test"), "/registry/widgets", def)
	ctx := t.Context()
	if _, err := store.Create(ctx, storage.Key("ns", "a"), storagetest.NewWidget("ns", "a", "red")); err != nil {
		t.Fatal(err)
	}
	h := NewHandler(NewResource(def, markingStore{store}))
	for accept, marked := range map[string]bool{
		"application/json": true,
		"application/json;as=Table;v=v1;g=meta.k8s.io":                   false,
		"application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io":   false,
		"application/json;as=Table;v=v1;g=meta.k8s.io, application/json": false,
	} {
		r := httptest.NewRequestWithContext(ctx, "GET", widgetsPath+"ns/widgets/a", nil)
		r.Header.Set("Accept", accept)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", accept, w.Code, w.Body)
		}
		if got := bytes.Equal(w.Body.Bytes(), marker); got != marked {
			t.Errorf("%s: the store's JSON written %v, want %v: %s", accept, got, marked, w.Body)
		}
	}
}
