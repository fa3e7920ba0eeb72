package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	svmv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/controllers/svm"
	"github.com/apiloom/apiloom/server/testserver"
)

// The storage version migration tests store Databases in an old form: the
// value the server wrote, with the apiVersion of the kind's other version
// (example.apiloom.dev/v2alpha1) in place of its storage version's (v1),
// as if written by a build whose +kubebuilder:storageversion was
// v2alpha1, and v2alpha1's own field names (spec.engineVersion where v1
// has spec.version): the storage layer decodes a stored value as the
// version its apiVersion names and converts it to the storage version.
const (
	dbPrefix      = "/registry/example.apiloom.dev/databases/"
	oldAPIVersion = "example.apiloom.dev/v2alpha1"
	newAPIVersion = "example.apiloom.dev/v1"
)

// svmEnv is a server with the clients the tests use.
type svmEnv struct {
	t    *testing.T
	ts   *testserver.TestServer
	kc   kubernetes.Interface
	cs   versioned.Interface
	etcd *clientv3.Client
}

func newSVMEnv(t *testing.T, opts ...testserver.Option) *svmEnv {
	t.Helper()
	ts, cs := startServer(t, opts...)
	return &svmEnv{t: t, ts: ts, kc: kubernetes.NewForConfigOrDie(ts.Config), cs: cs, etcd: etcdClient(t, ts)}
}

// pageSize sets the controller's page.
func pageSize(n int64) testserver.Option {
	return func(o *apiserver.Options) { o.StorageVersionMigrationPageSize = n }
}

// seed creates n Databases in ns through the server and rewrites each
// stored value in etcd to the old form.
func (e *svmEnv) seed(ns string, n int) {
	e.t.Helper()
	e.ts.CreateNamespaces(e.t, ns)
	for i := range n {
		if _, err := e.cs.ExampleV1().Databases(ns).Create(e.t.Context(), newDatabase(fmt.Sprintf("db-%04d", i)), metav1.CreateOptions{}); err != nil {
			e.t.Fatal(err)
		}
	}
	resp, err := e.etcd.Get(e.t.Context(), dbPrefix+ns+"/", clientv3.WithPrefix())
	if err != nil {
		e.t.Fatal(err)
	}
	for _, kv := range resp.Kvs {
		if _, err := e.etcd.Put(e.t.Context(), string(kv.Key), e.oldForm(kv.Key, kv.Value)); err != nil {
			e.t.Fatal(err)
		}
	}
}

// oldForm is value, a Database stored as v1, as v2alpha1 stores it:
// its apiVersion, and spec.version renamed spec.engineVersion.
func (e *svmEnv) oldForm(key, value []byte) string {
	e.t.Helper()
	var v map[string]any
	if err := json.Unmarshal(value, &v); err != nil {
		e.t.Fatalf("%s: %v", key, err)
	}
	spec, _ := v["spec"].(map[string]any)
	if v["apiVersion"] != newAPIVersion || spec == nil || spec["version"] == nil {
		e.t.Fatalf("%s is not stored as %s with spec.version: %s", key, newAPIVersion, value)
	}
	v["apiVersion"] = oldAPIVersion
	spec["engineVersion"] = spec["version"]
	delete(spec, "version")
	out, err := json.Marshal(v)
	if err != nil {
		e.t.Fatal(err)
	}
	return string(out)
}

// stored is one object's value in etcd.
type stored struct {
	apiVersion string
	// version and engineVersion are spec.version (v1's) and
	// spec.engineVersion (v2alpha1's).
	version, engineVersion string
	modRev, writes         int64  // writes: etcd's version, the puts since creation
	round                  string // the writers' annotation "round"
}

// stored reads every Database of ns from etcd.
func (e *svmEnv) stored(ns string) map[string]stored {
	e.t.Helper()
	resp, err := e.etcd.Get(context.Background(), dbPrefix+ns+"/", clientv3.WithPrefix())
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]stored{}
	for _, kv := range resp.Kvs {
		var v struct {
			APIVersion string `json:"apiVersion"`
			Metadata   struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
			Spec struct {
				Version       string `json:"version"`
				EngineVersion string `json:"engineVersion"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(kv.Value, &v); err != nil {
			e.t.Fatalf("%s: %v", kv.Key, err)
		}
		name := strings.TrimPrefix(string(kv.Key), dbPrefix+ns+"/")
		out[name] = stored{apiVersion: v.APIVersion, version: v.Spec.Version, engineVersion: v.Spec.EngineVersion,
			modRev: kv.ModRevision, writes: kv.Version, round: v.Metadata.Annotations["round"]}
	}
	return out
}

// migrate creates a migration of Databases.
func (e *svmEnv) migrate(name string, gr metav1.GroupResource) {
	e.t.Helper()
	_, err := e.kc.StoragemigrationV1().StorageVersionMigrations().Create(e.t.Context(), &svmv1.StorageVersionMigration{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: svmv1.StorageVersionMigrationSpec{Resource: gr}}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
}

var databases = metav1.GroupResource{Group: "example.apiloom.dev", Resource: "databases"}

// waitFor waits for the migration's condition cond to be True and
// returns the migration.
func (e *svmEnv) waitFor(name string, cond svmv1.MigrationConditionType) *svmv1.StorageVersionMigration {
	e.t.Helper()
	var got *svmv1.StorageVersionMigration
	defer func() {
		if e.t.Failed() && got != nil {
			e.t.Logf("migration %s at the end: annotations %v, status %+v", name, got.Annotations, got.Status)
		}
	}()
	eventuallyWithin(e.t, 3*time.Minute, "migration "+name+" "+string(cond), func(ctx context.Context) (bool, error) {
		s, err := e.kc.StoragemigrationV1().StorageVersionMigrations().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = s
		return apimeta.IsStatusConditionTrue(s.Status.Conditions, string(svmv1.MigrationSucceeded)) ||
			apimeta.IsStatusConditionTrue(s.Status.Conditions, string(svmv1.MigrationFailed)), nil
	})
	if !apimeta.IsStatusConditionTrue(got.Status.Conditions, string(cond)) {
		e.t.Fatalf("migration %s ended without %s: %+v", name, cond, got.Status)
	}
	return got
}

// allCurrent fails unless every stored Database of ns has the storage
// version's apiVersion and its spec.version (what newDatabase sets,
// stored as spec.engineVersion by seed) under v1's name.
func allCurrent(t *testing.T, after map[string]stored) {
	t.Helper()
	for name, s := range after {
		if s.apiVersion != newAPIVersion {
			t.Errorf("%s is still stored as %q", name, s.apiVersion)
		}
		if s.version != newDatabase(name).Spec.Version || s.engineVersion != "" {
			t.Errorf("%s is stored with spec.version %q, spec.engineVersion %q; want version %q", name, s.version, s.engineVersion, newDatabase(name).Spec.Version)
		}
	}
}

// TestStorageVersionMigrationWithWriters: a migration of 120 Databases in
// pages of 20 while four writers keep updating a third of them. Every
// object ends in the current form; every writer's acknowledged update is
// the value stored at the end (the migration's writes carry the
// resourceVersion it listed, so one never lands on a newer object); an
// object no writer touched is written exactly once by the migration.
func TestStorageVersionMigrationWithWriters(t *testing.T) {
	e := newSVMEnv(t, pageSize(20))
	const ns, n, writers = "svm-writers", 120, 4
	e.seed(ns, n)
	before := e.stored(ns)
	seededAt := 0
	for _, b := range before {
		seededAt = max(seededAt, int(b.modRev))
	}

	// Writer w owns the objects i with i%12 == w (a third of them) and
	// updates them in turn, recording each acknowledged value.
	ctx, stop := context.WithCancel(t.Context())
	acked := make([]map[string]string, writers)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		acked[w] = map[string]string{}
		wg.Go(func() {
			dbs := e.cs.ExampleV1().Databases(ns)
			for round := 1; ctx.Err() == nil; round++ {
				for i := w; i < n; i += 12 {
					name := fmt.Sprintf("db-%04d", i)
					for {
						db, err := dbs.Get(ctx, name, metav1.GetOptions{})
						if err == nil {
							metav1.SetMetaDataAnnotation(&db.ObjectMeta, "round", strconv.Itoa(round))
							_, err = dbs.Update(ctx, db, metav1.UpdateOptions{})
						}
						if err == nil {
							acked[w][name] = strconv.Itoa(round)
							break
						}
						if ctx.Err() != nil {
							return
						}
						if !apierrors.IsConflict(err) {
							errs <- fmt.Errorf("writer %d: %s: %w", w, name, err)
							return
						}
					}
				}
			}
		})
	}
	e.migrate("dbs", databases)
	done := e.waitFor("dbs", svmv1.MigrationSucceeded)
	stop()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	start := mustRV(t, done.Status.ResourceVersion)
	after := e.stored(ns)
	if len(after) != n {
		t.Fatalf("%d Databases stored, want %d", len(after), n)
	}
	allCurrent(t, after)
	var touched, rewrittenOnce int
	// A write in flight when the writers stopped may land unacknowledged,
	// so the end state holds the last acknowledged round or a later one.
	for w := range writers {
		for name, v := range acked[w] {
			if roundOf(after[name].round) < roundOf(v) {
				t.Errorf("%s: stored round %q, but writer %d's last acknowledged update set %q (a lost update)", name, after[name].round, w, v)
			}
		}
	}
	// The end state hides a lost update a later round overwrote, so
	// every write of the whole history is checked: an object's round
	// never goes back, which a write of the migration carrying an object
	// older than the stored one would do.
	e.noRoundGoesBack(ns, int64(seededAt))
	for i := range n {
		name := fmt.Sprintf("db-%04d", i)
		b, a := before[name], after[name]
		if i%12 < writers {
			touched++
			if a.modRev <= start && a.apiVersion != newAPIVersion {
				t.Errorf("%s: neither written since the migration started (%d) nor current: %+v", name, start, a)
			}
			continue
		}
		if a.writes != b.writes+1 {
			t.Errorf("%s, written by no one else: %d writes during the migration, want exactly 1", name, a.writes-b.writes)
		}
		if a.modRev <= start {
			t.Errorf("%s: mod revision %d not past the migration's start %d", name, a.modRev, start)
		}
		rewrittenOnce++
	}
	if touched == 0 || rewrittenOnce == 0 {
		t.Fatalf("touched %d, untouched %d: the test checks nothing", touched, rewrittenOnce)
	}
	msg := apimeta.FindStatusCondition(done.Status.Conditions, string(svmv1.MigrationRunning)).Message
	t.Logf("%d of the writers' objects, %d others; Running: %s", touched, rewrittenOnce, msg)
	var p svm.Progress
	if err := json.Unmarshal([]byte(done.Annotations[svm.ProgressAnnotation]), &p); err != nil {
		t.Fatal(err)
	}
	if p.Rewritten < int64(rewrittenOnce) || p.Rewritten+p.Current+p.Newer+p.Gone != n {
		t.Errorf("progress %+v does not account for the %d objects (%d untouched by writers)", p, n, rewrittenOnce)
	}
	if !strings.Contains(msg, fmt.Sprintf("%d objects rewritten", p.Rewritten)) {
		t.Errorf("the final message does not count the rewrites: %q", msg)
	}
}

// TestStorageVersionMigrationResumesAfterRestart: the server stops while
// a migration is Running, after some pages are recorded; the server
// started on the same data resumes after the recorded key and reaches
// Succeeded. No object is missed, and only the page in flight at the stop
// may be written twice.
func TestStorageVersionMigrationResumesAfterRestart(t *testing.T) {
	dir := t.TempDir()
	const ns, n, page = "svm-restart", 150, 10
	var before map[string]stored
	var atStop svm.Progress
	t.Run("first server", func(t *testing.T) {
		e := newSVMEnv(t, testserver.WithDataDir(dir), pageSize(page))
		e.seed(ns, n)
		before = e.stored(ns)
		e.migrate("dbs", databases)
		eventually(t, "the migration to record a page", func(ctx context.Context) (bool, error) {
			s, err := e.kc.StoragemigrationV1().StorageVersionMigrations().Get(ctx, "dbs", metav1.GetOptions{})
			return err == nil && s.Annotations[svm.ProgressAnnotation] != "", err
		})
	}) // the first server stops here

	var mid map[string]stored
	t.Run("server without controllers", func(t *testing.T) {
		// Reads the state at the stop with no controller moving it on.
		e := newSVMEnv(t, testserver.WithDataDir(dir), testserver.WithControllers())
		s, err := e.kc.StoragemigrationV1().StorageVersionMigrations().Get(t.Context(), "dbs", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if apimeta.IsStatusConditionTrue(s.Status.Conditions, string(svmv1.MigrationSucceeded)) {
			t.Fatal("the migration finished before the first server stopped; the test checks no resumption")
		}
		if err := json.Unmarshal([]byte(s.Annotations[svm.ProgressAnnotation]), &atStop); err != nil || atStop.LastKey == "" {
			t.Fatalf("progress at the stop: %v %+v", err, atStop)
		}
		mid = e.stored(ns)
	})
	if t.Failed() {
		return
	}
	pending := 0
	for _, v := range mid {
		if v.apiVersion != newAPIVersion {
			pending++
		}
	}
	t.Logf("stopped at %+v, %d objects not yet rewritten", atStop, pending)
	if pending == 0 {
		t.Fatal("every object was rewritten before the stop")
	}

	e := newSVMEnv(t, testserver.WithDataDir(dir), pageSize(page))
	done := e.waitFor("dbs", svmv1.MigrationSucceeded)
	// Resumed, not started over: the third server's controller sent one
	// PATCH for each object after the recorded key still in the old form,
	// none for those before. Objects after the key that the page in flight
	// at the stop had already rewritten were written after the migration
	// began, so they count as already newer and are left alone.
	behind, inFlight := 0, 0
	for name, m := range mid {
		if ns+"/"+name > atStop.LastKey {
			if m.apiVersion == newAPIVersion {
				inFlight++
			} else {
				behind++
			}
		}
	}
	if patches := metric(t, e.ts.Config, "apiloom_request_duration_seconds_count", `verb="patch"`, `resource="databases"`); int(patches) != behind {
		t.Errorf("the resumed migration sent %v PATCHes, want one for each of the %d objects after %q in the old form", patches, behind, atStop.LastKey)
	}
	after := e.stored(ns)
	if len(after) != n {
		t.Fatalf("%d Databases stored, want %d", len(after), n)
	}
	allCurrent(t, after)
	twice := 0
	for name, a := range after {
		switch w := a.writes - before[name].writes; {
		case w == 2 && mid[name].apiVersion == newAPIVersion:
			twice++ // rewritten before the stop, then again in the resumed page
		case w != 1:
			t.Errorf("%s written %d times by the migration", name, w)
		}
	}
	if twice > page {
		t.Errorf("%d objects written twice, more than the page in flight at the stop (%d)", twice, page)
	}
	final := svm.Progress{}
	if err := json.Unmarshal([]byte(done.Annotations[svm.ProgressAnnotation]), &final); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d objects written twice; final progress %+v", twice, final)
	if final.Rewritten != int64(n-inFlight) || final.Newer != int64(inFlight) || final.Gone != 0 {
		t.Errorf("the migration counts %+v for %d objects in the old form, each written once, %d of them by the page in flight at the stop", final, n, inFlight)
	}
}

// mustRV parses a resourceVersion, an etcd revision.
func mustRV(t *testing.T, rv string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", rv, err)
	}
	return n
}

// eventuallyWithin is eventually with its own deadline: a migration
// writes every object, at the pace of etcd's fsyncs.
func eventuallyWithin(t *testing.T, d time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var lastErr error
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, d, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		lastErr = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s (last error: %v)", what, lastErr)
	}
}

// TestStorageVersionMigrationAfterVersionChange: Databases stored under
// their former storage version's apiVersion read the same through both
// served versions before and after the migration, which leaves every
// value stored as v1. The migration's API then behaves as kube-apiserver
// v1.37's: the spec is immutable, a finished migration stays finished,
// and a migration of a resource not served Fails with the reason.
func TestStorageVersionMigrationAfterVersionChange(t *testing.T) {
	e := newSVMEnv(t)
	ctx := t.Context()
	const ns, n = "svm-version", 25
	e.seed(ns, n)
	for name, s := range e.stored(ns) {
		if s.apiVersion != oldAPIVersion || s.version != "" || s.engineVersion == "" {
			t.Fatalf("%s stored as %q (version %q, engineVersion %q) before the migration", name, s.apiVersion, s.version, s.engineVersion)
		}
	}
	// Read as v2alpha1, converted to v1: spec.version has the value.
	if db, err := e.cs.ExampleV1().Databases(ns).Get(ctx, "db-0003", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else if want := newDatabase("db-0003").Spec.Version; db.Spec.Version != want {
		t.Fatalf("v1 GET of a value stored as v2alpha1: spec.version %q, want %q", db.Spec.Version, want)
	}
	if l, err := e.cs.ExampleV1().Databases(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	} else if len(l.Items) != n {
		t.Fatalf("v1 LIST: %d items, want %d", len(l.Items), n)
	} else {
		for _, db := range l.Items {
			if db.Spec.Version == "" {
				t.Errorf("v1 LIST: %s has no spec.version", db.Name)
			}
		}
	}
	read := func() string {
		v1, err := e.cs.ExampleV1().Databases(ns).Get(ctx, "db-0003", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		v2, err := e.cs.ExampleV2alpha1().Databases(ns).Get(ctx, "db-0003", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The rewrite changes nothing a client sees but the
		// resourceVersion: no managed fields of the controller's, no
		// generation.
		var managers []string
		for _, m := range v1.ManagedFields {
			managers = append(managers, m.Manager+"/"+string(m.Operation))
		}
		return fmt.Sprintf("%s %s %s %d gen %d managers %v | %s %s %d", v1.Spec.Engine, v1.Spec.Version, v1.Spec.Region, v1.Spec.Replicas,
			v1.Generation, managers, v2.Spec.Engine, v2.Spec.EngineVersion, v2.Spec.Replicas)
	}
	beforeRead := read()

	e.migrate("dbs", databases)
	done := e.waitFor("dbs", svmv1.MigrationSucceeded)
	allCurrent(t, e.stored(ns))
	if got := read(); got != beforeRead {
		t.Errorf("db-0003 reads %q after the migration, %q before", got, beforeRead)
	}
	if done.Status.ResourceVersion == "" {
		t.Error("no status.resourceVersion")
	}

	svms := e.kc.StoragemigrationV1().StorageVersionMigrations()
	done.Spec.Resource.Resource = "regions"
	if _, err := svms.Update(ctx, done, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "field is immutable") {
		t.Errorf("update of the spec: %v, want 422 field is immutable", err)
	}
	done.Spec.Resource.Resource = "databases"
	apimeta.SetStatusCondition(&done.Status.Conditions, metav1.Condition{Type: string(svmv1.MigrationSucceeded), Status: metav1.ConditionFalse, Reason: "Again"})
	if _, err := svms.UpdateStatus(ctx, done, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "cannot be set to false once it is true") {
		t.Errorf("Succeeded set back to False: %v, want 422", err)
	}
	if _, err := svms.Create(ctx, &svmv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: "bad"},
		Spec: svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Resource: "Not_A_Resource"}}}, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("create with an invalid resource: %v, want 422", err)
	}

	e.migrate("nothing", metav1.GroupResource{Group: "example.com", Resource: "widgets"})
	failed := e.waitFor("nothing", svmv1.MigrationFailed)
	if c := apimeta.FindStatusCondition(failed.Status.Conditions, string(svmv1.MigrationFailed)); c.Reason != "StorageVersionMigrationFailed" ||
		!strings.Contains(c.Message, `"widgets.example.com" is not served`) {
		t.Errorf("Failed condition %+v", c)
	}
	table := e.kc.StoragemigrationV1().RESTClient().Get().Resource("storageversionmigrations").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(ctx)
	raw, err := table.Raw()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"Resource"`, `"databases.example.apiloom.dev","Succeeded"`, `"widgets.example.com","Failed"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the Table lacks %s: %s", want, raw)
		}
	}
}

// roundOf is a writer's round annotation as a number (none: 0).
func roundOf(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// noRoundGoesBack reads etcd's history of every Database of ns back to
// revision from (the test server never compacts), walking each key from
// its current value to the one before, and fails if the object's round
// annotation ever decreases from one write to the next.
func (e *svmEnv) noRoundGoesBack(ns string, from int64) {
	e.t.Helper()
	ctx := e.t.Context()
	cur, err := e.etcd.Get(ctx, dbPrefix+ns+"/", clientv3.WithPrefix())
	if err != nil {
		e.t.Fatal(err)
	}
	writes := 0
	for _, kv := range cur.Kvs {
		var rounds []int // newest first
		var revs []int64
		for at := kv; ; {
			var v struct {
				Metadata struct {
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(at.Value, &v); err != nil {
				e.t.Fatalf("%s at %d: %v", at.Key, at.ModRevision, err)
			}
			rounds, revs = append(rounds, roundOf(v.Metadata.Annotations["round"])), append(revs, at.ModRevision)
			if at.ModRevision <= from || at.ModRevision == at.CreateRevision {
				break
			}
			prev, err := e.etcd.Get(ctx, string(kv.Key), clientv3.WithRev(at.ModRevision-1))
			if err != nil {
				e.t.Fatal(err)
			}
			if len(prev.Kvs) == 0 {
				break
			}
			at = prev.Kvs[0]
		}
		for i := len(rounds) - 1; i > 0; i-- {
			if rounds[i-1] < rounds[i] {
				e.t.Errorf("%s at revision %d: round %d after %d (a lost update)", kv.Key, revs[i-1], rounds[i-1], rounds[i])
			}
		}
		writes += len(rounds)
	}
	e.t.Logf("%d values of the history checked", writes)
}
