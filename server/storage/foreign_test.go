package storage_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// widgetV0 is a former version of Widget: spec.colour where v1 has
// spec.color, and a size that was a string.
type widgetV0 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Colour string `json:"colour,omitempty"`
		Size   string `json:"size,omitempty"`
	} `json:"spec,omitempty"`
}

const widgetV0Version = "storagetest.apiloom.dev/v0"

// decodeWidgetV0 is the foreign decoder of a Widget store that knows v0.
func decodeWidgetV0(apiVersion string, data []byte) (resource.Object, error) {
	if apiVersion != widgetV0Version {
		return nil, fmt.Errorf("stored apiVersion %q is not a version of Widget", apiVersion)
	}
	var old widgetV0
	if err := json.Unmarshal(data, &old); err != nil {
		return nil, err
	}
	w := &storagetest.Widget{ObjectMeta: old.ObjectMeta}
	w.Spec.Color = old.Spec.Colour
	if old.Spec.Size != "" {
		n, err := strconv.Atoi(old.Spec.Size)
		if err != nil {
			return nil, err
		}
		w.Spec.Size = n
	}
	return w, nil
}

// TestForeignVersions: values stored as another version of the kind are
// read through the foreign decoder on every path, and an update that
// changes nothing rewrites them in the store's version.
func TestForeignVersions(t *testing.T) {
	c := storagetest.NewClient(t, etcdtest.Start(t), "/foreign")
	ctx := t.Context()
	s := newWidgetStore(t, c, storage.WithForeignDecoder(decodeWidgetV0))
	cur, err := s.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ctx, storage.ListOptions{ResourceVersion: storage.FormatResourceVersion(cur)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// "old" decodes as v1 too (its colour is unknown there and lost);
	// "typed" does not (size is a string), so its own version decides.
	stored := map[string]string{
		"ns/old":   `{"apiVersion":"` + widgetV0Version + `","kind":"Widget","metadata":{"name":"old","namespace":"ns"},"spec":{"colour":"blue"}}`,
		"ns/typed": `{"apiVersion":"` + widgetV0Version + `","kind":"Widget","metadata":{"name":"typed","namespace":"ns"},"spec":{"colour":"green","size":"3"}}`,
	}
	want := map[string]storagetest.WidgetSpec{"old": {Color: "blue"}, "typed": {Color: "green", Size: 3}}
	for _, key := range []string{"ns/old", "ns/typed"} {
		if _, err := c.Put(ctx, storagetest.Prefix+key, stored[key]); err != nil {
			t.Fatal(err)
		}
	}
	check := func(how string, got *storagetest.Widget) {
		t.Helper()
		if got.Spec != want[got.Name] || got.APIVersion != "storagetest.apiloom.dev/v1" || got.Kind != "Widget" || got.ResourceVersion == "" {
			t.Errorf("%s %s: %s %s spec %+v rv %q; want v1 Widget spec %+v", how, got.Name, got.APIVersion, got.Kind, got.Spec, got.ResourceVersion, want[got.Name])
		}
	}

	for _, ev := range next(t, w, 2) {
		if ev.Type != watch.Added {
			t.Errorf("watch: %s, want ADDED", ev.Type)
		}
		check("watch", ev.Object)
	}
	for _, key := range []string{"ns/old", "ns/typed"} {
		got, err := s.Get(ctx, key, storage.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		check("get", got)
	}
	l, err := s.GetList(ctx, storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 2 || len(l.Corrupt) != 0 {
		t.Fatalf("list: %d items, corrupt %v; want 2", len(l.Items), l.Corrupt)
	}
	for _, it := range l.Items {
		check("list", it)
	}

	// A no-op update (a storage version migration's) writes v1.
	before, err := s.Get(ctx, "ns/typed", storage.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	after, err := s.GuaranteedUpdate(ctx, "ns/typed", nil, func(cur *storagetest.Widget) (*storagetest.Widget, error) { return cur, nil })
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion == before.ResourceVersion {
		t.Errorf("no-op update of a v0 value was not written (resourceVersion %s)", after.ResourceVersion)
	}
	check("update", after)
	resp, err := c.Get(ctx, storagetest.Prefix+"ns/typed")
	if err != nil {
		t.Fatal(err)
	}
	if v := string(resp.Kvs[0].Value); !strings.Contains(v, `"apiVersion":"storagetest.apiloom.dev/v1"`) || !strings.Contains(v, `"color":"green"`) || !strings.Contains(v, `"size":3`) {
		t.Errorf("stored after update: %s; want v1 with color green, size 3", v)
	}
	ev := next(t, w, 1)[0]
	if ev.Type != watch.Modified {
		t.Errorf("watch: %s, want MODIFIED", ev.Type)
	}
	check("watch", ev.Object)
	// Now in the store's version, a second no-op update writes nothing.
	again, err := s.GuaranteedUpdate(ctx, "ns/typed", nil, func(cur *storagetest.Widget) (*storagetest.Widget, error) { return cur, nil })
	if err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != after.ResourceVersion {
		t.Errorf("no-op update of a v1 value wrote: %s, was %s", again.ResourceVersion, after.ResourceVersion)
	}

	// A version the kind does not have is corrupt, and says so.
	if _, err := c.Put(ctx, storagetest.Prefix+"ns/alien", `{"apiVersion":"storagetest.apiloom.dev/v9","kind":"Widget","metadata":{"name":"alien","namespace":"ns"}}`); err != nil {
		t.Fatal(err)
	}
	_, err = s.Get(ctx, "ns/alien", storage.GetOptions{})
	if se, ok := storage.AsError(err); !errors.Is(err, storage.ErrCorrupt) || !ok || !strings.Contains(se.Detail, "storagetest.apiloom.dev/v9") {
		t.Errorf("get of a v9 value: %v; want ErrCorrupt naming v9", err)
	}
}

// TestForeignVersionsNeedTheOption: without a foreign decoder a value is
// read as the store's version whatever its apiVersion, as before (the
// test above fails without the option).
func TestForeignVersionsNeedTheOption(t *testing.T) {
	c := storagetest.NewClient(t, etcdtest.Start(t), "/plain")
	ctx := t.Context()
	s := newWidgetStore(t, c)
	if _, err := c.Put(ctx, storagetest.Prefix+"ns/old", `{"apiVersion":"`+widgetV0Version+`","kind":"Widget","metadata":{"name":"old","namespace":"ns"},"spec":{"colour":"blue"}}`); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "ns/old", storage.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Color != "" || got.APIVersion != "storagetest.apiloom.dev/v1" {
		t.Errorf("got %s spec %+v", got.APIVersion, got.Spec)
	}
}
