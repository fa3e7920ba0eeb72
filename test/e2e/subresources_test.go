package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/server/testserver"
)

// The example Database's own verbs (hooks/example/v1): the backup action,
// the connection view and the logs stream, through the generated
// clientset, client-go's Stream(), raw HTTP/1.1, HTTP/2 and WebSocket.

const dbPath = "/apis/example.apiloom.dev/v1/namespaces/default/databases/"

// subresourceFixture is a server with a Region and a Database in it.
func subresourceFixture(t *testing.T) (versioned.Interface, *examplev1.Database, *testserver.TestServer) {
	t.Helper()
	ts, cs := startServer(t)
	ctx := t.Context()
	if _, err := cs.ExampleV1().Regions().Create(ctx, &examplev1.Region{
		ObjectMeta: metav1.ObjectMeta{Name: "eu-1"},
		Spec:       examplev1.RegionSpec{DisplayName: "Frankfurt", Zones: []string{"eu-1a", "eu-1b"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	db, err := cs.ExampleV1().Databases("default").Create(ctx, &examplev1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: "orders"},
		Spec:       examplev1.DatabaseSpec{Engine: "postgres", Version: "16.4", Region: "eu-1", Users: []examplev1.DatabaseUser{{Name: "alice"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cs, db, ts
}

func TestCustomSubresourceAction(t *testing.T) {
	cs, db, _ := subresourceFixture(t)
	ctx := t.Context()
	dbs := cs.ExampleV1().Databases("default")
	w, err := dbs.Watch(ctx, metav1.ListOptions{ResourceVersion: db.ResourceVersion, FieldSelector: fields.OneTermEqualSelector("metadata.name", "orders").String()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	res, err := dbs.Backup(ctx, "orders", &examplev1.BackupRequest{Destination: "s3://backups/orders", Name: "nightly"}, metav1.CreateOptions{FieldManager: "backup-cli"})
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	if res.Backup.Name != "nightly" || res.Backup.RequestedBy == "" || res.DatabaseResourceVersion == "" {
		t.Fatalf("backup answered %+v", res)
	}

	// The action's write is one watch event, with the backup in status and
	// managedFields naming the action's client on the status subresource;
	// the next event is the next write's.
	if _, err := dbs.Patch(ctx, "orders", types.MergePatchType, []byte(`{"metadata":{"labels":{"after":"backup"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	first, second := nextEvent(t, w), nextEvent(t, w)
	stored := first.Object.(*examplev1.Database)
	if first.Type != watch.Modified || stored.ResourceVersion != res.DatabaseResourceVersion || len(stored.Status.Backups) != 1 || stored.Status.Backups[0].Name != "nightly" {
		t.Fatalf("first event %s rv %s backups %+v; want the backup's write at %s", first.Type, stored.ResourceVersion, stored.Status.Backups, res.DatabaseResourceVersion)
	}
	if i := slices.IndexFunc(stored.ManagedFields, func(m metav1.ManagedFieldsEntry) bool { return m.Manager == "backup-cli" }); i < 0 ||
		stored.ManagedFields[i].Subresource != "status" || stored.ManagedFields[i].Operation != metav1.ManagedFieldsOperationUpdate ||
		!strings.Contains(string(stored.ManagedFields[i].FieldsV1.Raw), `"f:backups"`) {
		t.Fatalf("managedFields %+v; want backup-cli's Update of status.backups", stored.ManagedFields)
	}
	if got := second.Object.(*examplev1.Database); got.Labels["after"] != "backup" {
		t.Fatalf("second event is not the label patch: %+v", got.ObjectMeta)
	}

	// dryRun: answered, nothing stored.
	if _, err := dbs.Backup(ctx, "orders", &examplev1.BackupRequest{Destination: "s3://backups/orders", Name: "dry"}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatalf("dry-run backup: %v", err)
	}
	got, err := dbs.Get(ctx, "orders", metav1.GetOptions{})
	if err != nil || len(got.Status.Backups) != 1 {
		t.Fatalf("after a dry-run backup: %v, backups %+v", err, got.Status.Backups)
	}

	// The input is validated by its markers; the hook's API errors pass
	// through; a missing parent is 404.
	_, err = dbs.Backup(ctx, "orders", &examplev1.BackupRequest{Destination: "ftp://x"}, metav1.CreateOptions{})
	var st apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &st) || st.Status().Details == nil || len(st.Status().Details.Causes) == 0 || st.Status().Details.Causes[0].Field != "destination" {
		t.Fatalf("backup to ftp://: %v, want 422 on destination", err)
	}
	if _, err := dbs.Backup(ctx, "orders", &examplev1.BackupRequest{Destination: "s3://b", Name: "nightly"}, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("a second backup named nightly: %v, want 409 AlreadyExists", err)
	}
	if _, err := dbs.Backup(ctx, "missing", &examplev1.BackupRequest{Destination: "s3://b"}, metav1.CreateOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("backup of a missing database: %v, want 404", err)
	}
	// A view is not an action: POST is refused, as is GET of an action.
	if err := cs.ExampleV1().RESTClient().Get().AbsPath(dbPath + "orders/backup").Do(ctx).Error(); !apierrors.IsMethodNotSupported(err) {
		t.Fatalf("GET of an action: %v, want 405", err)
	}
}

// nextEvent is w's next event, failing t after 30s.
func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no watch event in 30s")
	}
	return watch.Event{}
}

func TestCustomSubresourceView(t *testing.T) {
	cs, _, _ := subresourceFixture(t)
	ctx := t.Context()
	dbs := cs.ExampleV1().Databases("default")
	c, err := dbs.GetConnection(ctx, "orders", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Ready || c.Region != "Frankfurt" || !slices.Equal(c.Zones, []string{"eu-1a", "eu-1b"}) || len(c.URIs) != 0 {
		t.Fatalf("connection before ready: %+v", c)
	}
	if _, err := dbs.Patch(ctx, "orders", types.MergePatchType, []byte(`{"status":{"phase":"Ready","endpoint":"orders.db:5432"}}`), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	c, err = dbs.GetConnection(ctx, "orders", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Ready || !slices.Equal(c.URIs, []string{"postgres://alice@orders.db:5432/orders"}) {
		t.Fatalf("connection when ready: %+v", c)
	}
	if _, err := dbs.GetConnection(ctx, "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("connection of a missing database: %v, want 404", err)
	}
}

// logsRequest is a GET of orders' logs through client-go.
func logsRequest(cs versioned.Interface, params map[string]string) *rest.Request {
	r := cs.ExampleV1().RESTClient().Get().Namespace("default").Resource("databases").Name("orders").SubResource("logs")
	for k, v := range params {
		r = r.Param(k, v)
	}
	return r
}

func TestCustomSubresourceStream(t *testing.T) {
	cs, _, _ := subresourceFixture(t)
	ctx := t.Context()
	dbs := cs.ExampleV1().Databases("default")
	for _, name := range []string{"one", "two"} {
		if _, err := dbs.Backup(ctx, "orders", &examplev1.BackupRequest{Destination: "s3://b", Name: name}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Without follow: the tail, then the end of the stream; through the
	// typed client's stream method (its options as query parameters).
	one := int64(1)
	body, err := dbs.Logs("orders", &examplev1.DatabaseLogOptions{TailLines: &one}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(body)), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "BackupRequested: backup two to s3://b") {
		t.Fatalf("tailLines=1: %q", body)
	}
	if err := logsRequest(cs, map[string]string{"tailLines": "x"}).Do(ctx).Error(); !apierrors.IsBadRequest(err) {
		t.Fatalf("tailLines=x: %v, want 400", err)
	}

	// Follow: lines arrive as they are written, and the stream's
	// goroutines are gone once the client goes away.
	sctx, cancel := context.WithCancel(ctx)
	zero := int64(0)
	stream, err := dbs.Logs("orders", &examplev1.DatabaseLogOptions{Follow: true, TailLines: &zero}).Stream(sctx)
	if err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewReader(stream)
	eventually(t, "the follow to start", func(context.Context) (bool, error) { return streamGoroutines(t) == 1, nil })
	if _, err := dbs.Backup(ctx, "orders", &examplev1.BackupRequest{Destination: "s3://b", Name: "three"}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	line, err := readLine(lines)
	if err != nil || !strings.Contains(line, "BackupRequested: backup three to s3://b") {
		t.Fatalf("followed line %q: %v", line, err)
	}
	cancel()
	_ = stream.Close()
	eventually(t, "the stream's goroutines to end", func(context.Context) (bool, error) { return streamGoroutines(t) == 0, nil })
}

// readLine reads one line within 30s.
func readLine(r *bufio.Reader) (string, error) {
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		l, err := r.ReadString('\n')
		ch <- result{l, err}
	}()
	select {
	case res := <-ch:
		return res.line, res.err
	case <-time.After(30 * time.Second):
		return "", errors.New("no line in 30s")
	}
}

// streamGoroutines is how many goroutines of this process run the example's
// logs stream (the server runs in the test's process).
func streamGoroutines(t *testing.T) int {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 2); err != nil {
		t.Fatal(err)
	}
	n := 0
	for g := range strings.SplitSeq(buf.String(), "\n\n") {
		if strings.Contains(g, "hooks/example/v1.Database.Logs") {
			n++
		}
	}
	return n
}

func TestCustomSubresourceDiscovery(t *testing.T) {
	cs, _, _ := subresourceFixture(t)
	list, err := cs.Discovery().ServerResourcesForGroupVersion("example.apiloom.dev/v1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"databases/backup": "create", "databases/connection": "get", "databases/logs": "get"}
	for _, r := range list.APIResources {
		if verb, ok := want[r.Name]; ok {
			if !slices.Equal(r.Verbs, []string{verb}) || !r.Namespaced {
				t.Errorf("%s: verbs %v namespaced %v", r.Name, r.Verbs, r.Namespaced)
			}
			delete(want, r.Name)
		}
	}
	if len(want) > 0 {
		t.Fatalf("discovery lacks %v", want)
	}
	raw, err := cs.ExampleV1().RESTClient().Get().AbsPath("/openapi/v3/apis/example.apiloom.dev/v1").DoRaw(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for path, method := range map[string]string{"backup": "post", "connection": "get", "logs": "get"} {
		p := "/apis/example.apiloom.dev/v1/namespaces/{namespace}/databases/{name}/" + path
		if _, ok := doc.Paths[p][method]; !ok {
			t.Errorf("OpenAPI v3 lacks %s %s", method, p)
		}
	}
}
