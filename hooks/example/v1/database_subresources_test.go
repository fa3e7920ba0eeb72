package v1_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/authentication/user"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	hooksv1 "github.com/apiloom/apiloom/hooks/example/v1"
	"github.com/apiloom/apiloom/server/hook"
)

// world is an in-memory server for the hooks: Databases and Events that
// the writers store, Regions the readers read, and a watch of Events.
type world struct {
	mu        sync.Mutex
	dbs       map[string]*examplev1.Database
	regions   map[string]*examplev1.Region
	events    []*corev1.Event
	rv        int
	conflicts int // the next status writes that fail with Conflict
	watchers  map[*chanWatcher]bool
	watched   chan struct{} // a receive per watch started
}

func newWorld() *world {
	return &world{dbs: map[string]*examplev1.Database{}, regions: map[string]*examplev1.Region{}, watchers: map[*chanWatcher]bool{}, watched: make(chan struct{}, 10)}
}

func (w *world) Reader(t reflect.Type) any {
	switch t {
	case reflect.TypeFor[*examplev1.Region]():
		return regionReader{w}
	case reflect.TypeFor[*examplev1.Database]():
		return dbReader{w}
	}
	return nil
}

func (w *world) Writer(t reflect.Type) any {
	switch t {
	case reflect.TypeFor[*examplev1.Database]():
		return dbWriter{w}
	case reflect.TypeFor[*corev1.Event]():
		return eventWriter{w}
	}
	return nil
}

func (w *world) Watcher(t reflect.Type) any {
	if t == reflect.TypeFor[*corev1.Event]() {
		return eventSource{w}
	}
	return nil
}

type regionReader struct{ w *world }

func (r regionReader) Get(_ context.Context, _, name string, _ hook.ReadOptions) (*examplev1.Region, error) {
	if rg, ok := r.w.regions[name]; ok {
		return rg, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "regions"}, name)
}

func (r regionReader) List(context.Context, string, labels.Selector, hook.ReadOptions) ([]*examplev1.Region, error) {
	return nil, errors.New("not used")
}

type dbReader struct{ w *world }

func (r dbReader) Get(_ context.Context, ns, name string, _ hook.ReadOptions) (*examplev1.Database, error) {
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	if db, ok := r.w.dbs[ns+"/"+name]; ok {
		return db.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "databases"}, name)
}

func (r dbReader) List(context.Context, string, labels.Selector, hook.ReadOptions) ([]*examplev1.Database, error) {
	return nil, errors.New("not used")
}

type dbWriter struct{ w *world }

func (d dbWriter) Create(context.Context, *examplev1.Database, hook.WriteOptions) (*examplev1.Database, error) {
	return nil, errors.New("not used")
}

func (d dbWriter) Update(_ context.Context, db *examplev1.Database, opts hook.WriteOptions) (*examplev1.Database, error) {
	w := d.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if !opts.Status {
		return nil, errors.New("Backup must write only the status")
	}
	cur := w.dbs[db.Namespace+"/"+db.Name]
	if w.conflicts > 0 || cur.ResourceVersion != db.ResourceVersion {
		if w.conflicts > 0 {
			w.conflicts--
			w.rv++
			cur.ResourceVersion = fmt.Sprint(w.rv) // another writer's
		}
		return nil, apierrors.NewConflict(schema.GroupResource{Resource: "databases"}, db.Name, errors.New("changed"))
	}
	next := cur.DeepCopy()
	next.Status = db.Status
	w.rv++
	next.ResourceVersion = fmt.Sprint(w.rv)
	w.dbs[db.Namespace+"/"+db.Name] = next
	return next.DeepCopy(), nil
}

func (d dbWriter) Delete(context.Context, string, string, hook.WriteOptions) error {
	return errors.New("not used")
}

type eventWriter struct{ w *world }

func (e eventWriter) Create(_ context.Context, ev *corev1.Event, _ hook.WriteOptions) (*corev1.Event, error) {
	e.w.mu.Lock()
	defer e.w.mu.Unlock()
	e.w.events = append(e.w.events, ev)
	for c := range e.w.watchers {
		c.ch <- hook.WatchEvent[*corev1.Event]{Type: watch.Added, Object: ev}
	}
	return ev, nil
}

func (e eventWriter) Update(context.Context, *corev1.Event, hook.WriteOptions) (*corev1.Event, error) {
	return nil, errors.New("not used")
}

func (e eventWriter) Delete(context.Context, string, string, hook.WriteOptions) error {
	return errors.New("not used")
}

type eventSource struct{ w *world }

// Watch sends the Events stored now, the end of the initial events, and
// then what eventWriter writes.
func (s eventSource) Watch(_ context.Context, _ string, opts hook.WatchOptions) (hook.Watcher[*corev1.Event], error) {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	ch := make(chan hook.WatchEvent[*corev1.Event], 100)
	if opts.SendInitialEvents {
		for _, e := range s.w.events {
			ch <- hook.WatchEvent[*corev1.Event]{Type: watch.Added, Object: e}
		}
		ch <- hook.WatchEvent[*corev1.Event]{Type: hook.InitialEventsEnd}
	}
	c := &chanWatcher{w: s.w, ch: ch}
	s.w.watchers[c] = true
	s.w.watched <- struct{}{}
	return c, nil
}

type chanWatcher struct {
	w  *world
	ch chan hook.WatchEvent[*corev1.Event]
}

func (c *chanWatcher) Next(ctx context.Context) (hook.WatchEvent[*corev1.Event], error) {
	select {
	case e := <-c.ch:
		return e, nil
	case <-ctx.Done():
		return hook.WatchEvent[*corev1.Event]{}, ctx.Err()
	}
}

func (c *chanWatcher) Stop() {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	delete(c.w.watchers, c)
}

func (w *world) addDB(name string) *examplev1.Database {
	w.rv++
	db := &examplev1.Database{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: "uid-" + "name", ResourceVersion: fmt.Sprint(w.rv)},
		Spec:       examplev1.DatabaseSpec{Engine: "postgres", Region: "eu-1", Users: []examplev1.DatabaseUser{{Name: "alice"}, {Name: "bob"}}},
	}
	w.dbs["ns/"+name] = db
	return db.DeepCopy()
}

func (w *world) request(ctx context.Context, dryRun bool, db *examplev1.Database) *hook.Request {
	u := &user.DefaultInfo{Name: "jane"}
	return hook.NewRequest(ctx, hook.Create, "backup", dryRun, u, db.Namespace, db.Name, w).WithWriters(w)
}

func TestBackupRecordsInStatusAndLog(t *testing.T) {
	w := newWorld()
	db := w.addDB("orders")
	res, err := hooksv1.Database{}.Backup(w.request(context.Background(), false, db), db, &examplev1.BackupRequest{Destination: "s3://b/orders", Name: "nightly"})
	if err != nil {
		t.Fatal(err)
	}
	stored := w.dbs["ns/orders"]
	if got := stored.Status.Backups; len(got) != 1 || got[0].Name != "nightly" || got[0].RequestedBy != "jane" || got[0].Destination != "s3://b/orders" {
		t.Fatalf("status.backups = %+v", got)
	}
	if res.Backup.Name != "nightly" || res.DatabaseResourceVersion != stored.ResourceVersion {
		t.Fatalf("result %+v, stored resourceVersion %s", res, stored.ResourceVersion)
	}
	if len(w.events) != 1 || w.events[0].Reason != "BackupRequested" || w.events[0].InvolvedObject.UID != db.UID {
		t.Fatalf("events = %+v", w.events)
	}

	// The same name again is AlreadyExists, and writes nothing.
	_, err = hooksv1.Database{}.Backup(w.request(context.Background(), false, stored), stored.DeepCopy(), &examplev1.BackupRequest{Destination: "s3://b/x", Name: "nightly"})
	if !apierrors.IsAlreadyExists(err) {
		t.Fatalf("duplicate backup: %v, want AlreadyExists", err)
	}
}

func TestBackupRetriesConflictsAndKeepsTen(t *testing.T) {
	w := newWorld()
	db := w.addDB("orders")
	for i := range 12 {
		w.conflicts = i % 3 // a writer slips in before some of them
		cur := w.dbs["ns/orders"].DeepCopy()
		if _, err := (hooksv1.Database{}).Backup(w.request(context.Background(), false, db), cur, &examplev1.BackupRequest{Destination: "s3://b", Name: fmt.Sprintf("b%d", i)}); err != nil {
			t.Fatalf("backup %d: %v", i, err)
		}
	}
	got := w.dbs["ns/orders"].Status.Backups
	if len(got) != 10 || got[0].Name != "b2" || got[9].Name != "b11" {
		t.Fatalf("status.backups = %v names, first %s last %s; want b2..b11", len(got), got[0].Name, got[len(got)-1].Name)
	}
}

func TestBackupRefusesADatabaseBeingDeleted(t *testing.T) {
	w := newWorld()
	db := w.addDB("orders")
	db.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	_, err := hooksv1.Database{}.Backup(w.request(context.Background(), false, db), db, &examplev1.BackupRequest{Destination: "s3://b"})
	if !apierrors.IsConflict(err) {
		t.Fatalf("err = %v, want Conflict", err)
	}
}

func TestGetConnection(t *testing.T) {
	w := newWorld()
	db := w.addDB("orders")
	req := w.request(context.Background(), false, db)
	c, err := hooksv1.Database{}.GetConnection(req, db)
	if err != nil {
		t.Fatal(err)
	}
	if c.Ready || c.Endpoint != "" || len(c.URIs) != 0 || c.Region != "" {
		t.Fatalf("not ready, no region: %+v", c)
	}
	w.regions["eu-1"] = &examplev1.Region{ObjectMeta: metav1.ObjectMeta{Name: "eu-1"}, Spec: examplev1.RegionSpec{DisplayName: "Frankfurt", Zones: []string{"a", "b"}}}
	db.Status.Phase, db.Status.Endpoint = "Ready", "orders.db:5432"
	c, err = hooksv1.Database{}.GetConnection(req, db)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"postgres://alice@orders.db:5432/orders", "postgres://bob@orders.db:5432/orders"}
	if !c.Ready || c.Region != "Frankfurt" || !reflect.DeepEqual(c.URIs, want) || !reflect.DeepEqual(c.Zones, []string{"a", "b"}) {
		t.Fatalf("connection = %+v", c)
	}
}

// lineWriter hands each Write to a channel, as the server's stream
// writer hands it to the client.
type lineWriter chan string

func (l lineWriter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		l <- string(p)
	}
	return len(p), nil
}

func TestLogsTailsAndFollows(t *testing.T) {
	w := newWorld()
	db := w.addDB("orders")
	base := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for i, reason := range []string{"Second", "First", "Third"} {
		at := base.Add(time.Duration([]int{2, 1, 3}[i]) * time.Minute)
		w.events = append(w.events, &corev1.Event{InvolvedObject: corev1.ObjectReference{UID: db.UID}, Type: "Normal", Reason: reason, Message: "m", LastTimestamp: metav1.NewTime(at)})
	}
	// An Event about an earlier Database of the same name is not its log.
	w.events = append(w.events, &corev1.Event{InvolvedObject: corev1.ObjectReference{UID: "old"}, Type: "Normal", Reason: "Old", LastTimestamp: metav1.NewTime(base)})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	two := int64(2)
	var out strings.Builder
	req := hook.NewRequest(ctx, hook.Read, "logs", false, nil, db.Namespace, db.Name, w)
	if err := (hooksv1.Database{}).Logs(req, db, &examplev1.DatabaseLogOptions{TailLines: &two, Timestamps: true}, &out); err != nil {
		t.Fatal(err)
	}
	want := "2026-11-29T12:02:00Z Normal Second: m\n2026-11-29T12:03:00Z Normal Third: m\n"
	if out.String() != want {
		t.Fatalf("tail 2:\n%s\nwant:\n%s", out.String(), want)
	}

	// Follow: a backup's Event arrives as a line while the stream runs;
	// the stream ends, without error, when the client goes away.
	lines := make(lineWriter, 10)
	fctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	zero := int64(0)
	go func() {
		req := hook.NewRequest(fctx, hook.Read, "logs", false, nil, db.Namespace, db.Name, w)
		done <- hooksv1.Database{}.Logs(req, db, &examplev1.DatabaseLogOptions{Follow: true, TailLines: &zero}, lines)
	}()
	<-w.watched // the tail's watch
	<-w.watched // the follow's
	if _, err := (hooksv1.Database{}).Backup(w.request(ctx, false, db), db, &examplev1.BackupRequest{Destination: "s3://b", Name: "n1"}); err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-lines:
		if l != "Normal BackupRequested: backup n1 to s3://b requested by jane\n" {
			t.Fatalf("followed line %q", l)
		}
	case <-ctx.Done():
		t.Fatal("no followed line")
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Logs after the client went away: %v", err)
	}

	negative := int64(-1)
	err := hooksv1.Database{}.Logs(req, db, &examplev1.DatabaseLogOptions{TailLines: &negative}, io.Discard)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("tailLines=-1: %v, want Invalid", err)
	}
}
