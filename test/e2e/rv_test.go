package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/server/testserver"
)

// TestResourceVersionSemantics: what a client reads at a resourceVersion,
// through the clientset, from the watch cache and from etcd (or kine):
// an Exact list shows the past state, NotOlderThan the present, a paged
// list stays on the snapshot of its first page while writes go on, a
// watch from a past resourceVersion replays what changed since in order,
// and a resourceVersion the backend has not reached is 504 "Too large
// resource version", as on kube-apiserver.
func TestResourceVersionSemantics(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []testserver.Option
	}{
		{name: "cache"},
		{name: "no-cache", opts: []testserver.Option{testserver.WithoutWatchCache()}},
	} {
		t.Run(tc.name, func(t *testing.T) { testResourceVersionSemantics(t, tc.opts...) })
	}
}

func testResourceVersionSemantics(t *testing.T, opts ...testserver.Option) {
	ts, cs := startServer(t, opts...)
	ts.CreateNamespaces(t, "shop")
	ctx := t.Context()
	dbs := cs.ExampleV1().Databases("shop")
	for _, name := range []string{"a", "b", "c"} {
		if _, err := dbs.Create(ctx, newDatabase(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	before, err := dbs.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := dbs.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a.Spec.Version = "17.0"
	if _, err := dbs.Update(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := dbs.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := dbs.Create(ctx, newDatabase("d"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	after, err := dbs.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := versions(after), "a=17.0 c=16.4 d=16.4"; got != want {
		t.Fatalf("consistent list: %s, want %s", got, want)
	}

	exact, err := dbs.List(ctx, metav1.ListOptions{ResourceVersion: before.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if err != nil {
		t.Fatalf("list Exact %s: %v", before.ResourceVersion, err)
	}
	if got, want := versions(exact), "a=16.4 b=16.4 c=16.4"; got != want || exact.ResourceVersion != before.ResourceVersion {
		t.Fatalf("list Exact %s: %s at %s, want %s at %[1]s", before.ResourceVersion, got, exact.ResourceVersion, want)
	}
	notOlder, err := dbs.List(ctx, metav1.ListOptions{ResourceVersion: before.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	if err != nil {
		t.Fatalf("list NotOlderThan %s: %v", before.ResourceVersion, err)
	}
	if got, want := versions(notOlder), versions(after); got != want || atoi(t, notOlder.ResourceVersion) < atoi(t, after.ResourceVersion) {
		t.Fatalf("list NotOlderThan %s: %s at %s, want %s at %s or later", before.ResourceVersion, got, notOlder.ResourceVersion, want, after.ResourceVersion)
	}

	// Pages follow their first page's snapshot while writes go on.
	first, err := dbs.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || first.Continue == "" {
		t.Fatalf("first page: %v %+v", err, first.ListMeta)
	}
	if _, err := dbs.Create(ctx, newDatabase("e"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := dbs.Delete(ctx, "c", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pages := []string{versions(first)}
	for page := first; page.Continue != ""; {
		if page, err = dbs.List(ctx, metav1.ListOptions{Limit: 1, Continue: page.Continue}); err != nil {
			t.Fatalf("next page: %v", err)
		}
		if page.ResourceVersion != first.ResourceVersion {
			t.Fatalf("page at %s, first page at %s", page.ResourceVersion, first.ResourceVersion)
		}
		pages = append(pages, versions(page))
	}
	if got, want := strings.Join(pages, " "), "a=17.0 c=16.4 d=16.4"; got != want {
		t.Fatalf("pages: %s, want the first page's snapshot %s", got, want)
	}

	w, err := dbs.Watch(ctx, metav1.ListOptions{ResourceVersion: before.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if got, want := readEvents(t, w, 5), "MODIFIED a, DELETED b, ADDED d, ADDED e, DELETED c"; got != want {
		t.Fatalf("watch from %s: %s, want %s", before.ResourceVersion, got, want)
	}

	assertTooLarge(t, cs.ExampleV1().RESTClient(), strconv.FormatInt(atoi(t, after.ResourceVersion)+1000, 10))
}

// versions is "name=spec.version ..." of a list's items, sorted by name.
func versions(l *examplev1.DatabaseList) string {
	var out []string
	for _, d := range l.Items {
		out = append(out, d.Name+"="+d.Spec.Version)
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// readEvents reads n events from w ("TYPE name, ..."), failing t after 30s.
func readEvents(t *testing.T, w watch.Interface, n int) string {
	t.Helper()
	var out []string
	timeout := time.After(30 * time.Second)
	for len(out) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch ended after %q", out)
			}
			if db, isDB := ev.Object.(*examplev1.Database); isDB {
				out = append(out, fmt.Sprintf("%s %s", ev.Type, db.Name))
			} else {
				out = append(out, fmt.Sprintf("%s %v", ev.Type, ev.Object))
			}
		case <-timeout:
			t.Fatalf("watch: %d events within 30s, want %d: %q", len(out), n, out)
		}
	}
	return strings.Join(out, ", ")
}

// assertTooLarge checks that an Exact list at rv, a revision the backend
// has not reached, fails with 504 "Too large resource version". client-go
// would retry it, as the Status asks (Retry-After 1 s), 10 times: the
// request is sent once.
func assertTooLarge(t *testing.T, rc rest.Interface, rv string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	err := rc.Get().Namespace("shop").Resource("databases").
		Param("resourceVersion", rv).Param("resourceVersionMatch", string(metav1.ResourceVersionMatchExact)).
		MaxRetries(0).Do(ctx).Error()
	if !apierrors.IsTimeout(err) || !strings.Contains(err.Error(), "Too large resource version") {
		t.Fatalf("list Exact at the future resourceVersion %s: %v, want 504 Too large resource version", rv, err)
	}
}
