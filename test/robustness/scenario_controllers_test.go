package robustness

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apiloom/apiloom/test/robustness/cluster"
)

// The controllers under failover: the namespace controller and the
// garbage collector run on the replica holding the controllers' Lease;
// kill -9 that replica in the middle of their work, and the other one
// must take the Lease over and finish it, as kube-controller-manager's
// would. Each runs beside the scenarios' normal traffic (runScenario), so
// every checker runs on that traffic too.

// TestReplicaRestartDuringNamespaceDeletion: a namespace of 300 objects,
// 10 of them held by a finalizer, is deleted; the Lease holder is killed
// while the namespace controller deletes its content. The survivor takes
// the Lease over, keeps the namespace's conditions as upstream's
// controller does (it follows a released hold), and once the holds are
// gone the namespace and every object in it are gone from etcd.
func TestReplicaRestartDuringNamespaceDeletion(t *testing.T) {
	const (
		ns                 = "gcns-doomed"
		databases, configs = 200, 100
		holdEvery          = 30 // every 30th object is held: 7 databases, 3 configmaps
	)
	runScenario(t, func(ctx context.Context, s *scenario) {
		holder, id := s.waitLeaseHolder(ctx, s.replicaClients(0), -1, takeoverDeadline)
		survivor := 1 - holder
		c := s.replicaClients(survivor)
		var objs, held []metav1.Object
		heldDB, heldCM := 0, 0
		for i := range databases + configs {
			var fin []string
			if i%holdEvery == 0 {
				fin = []string{holdFinalizer}
			}
			var o metav1.Object
			if i < databases {
				o = newDatabase(ns, fmt.Sprintf("db-%d", i), fin)
			} else {
				o = newConfigMap(ns, fmt.Sprintf("cm-%d", i), fin)
			}
			objs = append(objs, o)
			if fin != nil {
				held = append(held, o)
				if i < databases {
					heldDB++
				} else {
					heldCM++
				}
			}
		}
		if err := createNamespace(ctx, c, ns); err != nil {
			t.Fatal(err)
		}
		if err := createAll(ctx, c, objs); err != nil {
			t.Fatal(err)
		}
		deleted, err := c.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// Kill the holder once its namespace controller has begun deleting
		// the content.
		left := 0
		waitFor(ctx, t, 30*time.Second, "the namespace controller to begin", func(ctx context.Context) (bool, error) {
			var err error
			left, err = countObjects(ctx, c, ns)
			return err == nil && left < len(objs), err
		})
		t.Logf("killing replica %d, the controllers' Lease holder %q, with %d of %d objects of %s left", holder, id, left, len(objs), ns)
		s.failover(ctx, c, holder)

		// The new holder's controller deletes the rest and says what is
		// left and why; once one hold is released, it says so.
		waitNamespaceConditions(ctx, t, c, ns, deleted.UID, heldDB, heldCM)
		if err := release(ctx, c, held[0]); err != nil {
			t.Fatal(err)
		}
		waitNamespaceConditions(ctx, t, c, ns, deleted.UID, heldDB-1, heldCM)
		if h, _, err := s.leaseHolder(ctx, c); err != nil || h != survivor {
			t.Fatalf("Lease holder after the first release: replica %d, %v; want the survivor %d", h, err, survivor)
		}
		released := time.Now()
		for _, o := range held[1:] {
			if err := release(ctx, c, o); err != nil {
				t.Fatal(err)
			}
		}
		etcd, err := s.c.Etcd.Client()
		if err != nil {
			t.Fatal(err)
		}
		defer etcd.Close()
		waitFor(ctx, t, finishDeadline, "the namespace and its content gone from etcd", func(ctx context.Context) (bool, error) {
			keys, err := namespaceKeys(ctx, etcd, ns)
			if err != nil {
				return false, err
			}
			return len(keys) == 0, fmt.Errorf("%d keys left, first %+v", len(keys), keys[:min(len(keys), 3)])
		})
		t.Logf("namespace %s gone from etcd %v after the last hold was released", ns, time.Since(released).Round(time.Millisecond))
	})
}

// countObjects counts the Databases and ConfigMaps of ns.
func countObjects(ctx context.Context, c clients, ns string) (int, error) {
	dbs, err := c.example.ExampleV1().Databases(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	cms, err := c.kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	return len(dbs.Items) + len(cms.Items), nil
}

// waitNamespaceConditions waits until the Terminating namespace ns (of uid)
// has the conditions kube-controller-manager's namespace deleter sets
// while heldDB Databases and heldCM ConfigMaps, each held by
// holdFinalizer, remain: every type present, the failures False with
// their "ok" reasons, ContentRemaining and FinalizersRemaining True
// counting what is left (upstream's words, namespaced_resources_deleter.go).
func waitNamespaceConditions(ctx context.Context, t *testing.T, c clients, ns string, uid types.UID, heldDB, heldCM int) {
	t.Helper()
	var remaining []string
	if heldCM > 0 {
		remaining = append(remaining, fmt.Sprintf("configmaps. has %d resource instances", heldCM))
	}
	if heldDB > 0 {
		remaining = append(remaining, fmt.Sprintf("databases.example.apiloom.dev has %d resource instances", heldDB))
	}
	want := map[corev1.NamespaceConditionType]string{
		corev1.NamespaceDeletionDiscoveryFailure: "False ResourcesDiscovered All resources successfully discovered",
		corev1.NamespaceDeletionGVParsingFailure: "False ParsedGroupVersions All legacy kube types successfully parsed",
		corev1.NamespaceDeletionContentFailure:   "False ContentDeleted All content successfully deleted, may be waiting on finalization",
		corev1.NamespaceContentRemaining:         "True SomeResourcesRemain Some resources are remaining: " + strings.Join(remaining, ", "),
		corev1.NamespaceFinalizersRemaining:      fmt.Sprintf("True SomeFinalizersRemain Some content in the namespace has finalizers remaining: %s in %d resource instances", holdFinalizer, heldDB+heldCM),
	}
	waitFor(ctx, t, finishDeadline, fmt.Sprintf("%s's conditions with %d databases and %d configmaps held", ns, heldDB, heldCM), func(ctx context.Context) (bool, error) {
		got, err := c.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if got.UID != uid || got.Status.Phase != corev1.NamespaceTerminating || got.DeletionTimestamp == nil {
			return false, fmt.Errorf("namespace %s uid %s phase %s deletionTimestamp %v", ns, got.UID, got.Status.Phase, got.DeletionTimestamp)
		}
		have := map[corev1.NamespaceConditionType]string{}
		for _, cond := range got.Status.Conditions {
			if _, dup := have[cond.Type]; dup {
				return false, fmt.Errorf("condition %s twice", cond.Type)
			}
			have[cond.Type] = fmt.Sprintf("%s %s %s", cond.Status, cond.Reason, cond.Message)
		}
		return maps.Equal(have, want), fmt.Errorf("conditions %v", have)
	})
}

// waitFor waits up to d for cond, failing t with what was still wrong.
func waitFor(ctx context.Context, t *testing.T, d time.Duration, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	// cond may explain itself even when it holds: ok wins. The last
	// explanation before the deadline is kept: the call the deadline cuts
	// short says only that.
	var last error
	err := cluster.Until(ctx, what, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if ok {
			return true, nil
		}
		if ctx.Err() == nil {
			last = err
		}
		return false, err
	})
	if err != nil {
		t.Fatalf("%v; last seen: %v", err, last)
	}
}

// gcOwner is one owner of TestReplicaRestartDuringGarbageCollection and
// what its dependents must become.
type gcOwner struct {
	name   string
	policy metav1.DeletionPropagation // "" for the keeper, never deleted
	uid    types.UID
	deps   []gcDep
}

// gcDep is one dependent: a Database or a ConfigMap.
type gcDep struct {
	obj metav1.Object
	// blocks is its ownerReference's blockOwnerDeletion; held, whether it
	// carries holdFinalizer; kept, whether the keeper owns it too.
	blocks, held, kept bool
}

// resource is the dependent's resource, as in etcd's keys.
func (d gcDep) resource() string {
	if _, ok := d.obj.(*corev1.ConfigMap); ok {
		return "configmaps"
	}
	return "databases"
}

// TestReplicaRestartDuringGarbageCollection: 12 owners with 40 dependents
// each are deleted, 4 in the foreground (half the dependents
// blockOwnerDeletion, 5 of those held by a finalizer), 4 in the background
// and 4 orphaning; some dependents of the latter two are owned by a
// fifth, kept owner too. The Lease holder is killed once the collector has
// begun; the survivor takes the Lease over and finishes: the foreground
// owners wait for their held dependents, and in the end every dependent of
// a background or foreground owner is gone (those the keeper owns too stay,
// owned by it alone), every dependent of an orphaning owner stays without
// the reference, every deleted owner is gone, and etcd's history deletes
// each foreground owner after its blocking dependents.
func TestReplicaRestartDuringGarbageCollection(t *testing.T) {
	const (
		ns       = "gcns-gc"
		perOwner = 40
		perKind  = 4
	)
	runScenario(t, func(ctx context.Context, s *scenario) {
		holder, id := s.waitLeaseHolder(ctx, s.replicaClients(0), -1, takeoverDeadline)
		survivor := 1 - holder
		c := s.replicaClients(survivor)
		if err := createNamespace(ctx, c, ns); err != nil {
			t.Fatal(err)
		}
		keeper := &gcOwner{name: "keeper"}
		owners := []*gcOwner{keeper}
		for _, p := range []metav1.DeletionPropagation{metav1.DeletePropagationForeground, metav1.DeletePropagationBackground, metav1.DeletePropagationOrphan} {
			for i := range perKind {
				owners = append(owners, &gcOwner{name: fmt.Sprintf("%s-%d", strings.ToLower(string(p)), i), policy: p})
			}
		}
		for _, o := range owners {
			db, err := c.example.ExampleV1().Databases(ns).Create(ctx, newDatabase(ns, o.name, nil), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			o.uid = db.UID
		}
		ref := func(o *gcOwner, block bool) metav1.OwnerReference {
			return metav1.OwnerReference{APIVersion: "example.apiloom.dev/v1", Kind: "Database", Name: o.name, UID: o.uid, BlockOwnerDeletion: &block}
		}
		var objs []metav1.Object
		total := 0
		for _, o := range owners[1:] {
			for j := range perOwner {
				d := gcDep{blocks: j%2 == 0}
				d.held = o.policy == metav1.DeletePropagationForeground && j%8 == 0
				d.kept = o.policy != metav1.DeletePropagationForeground && j%10 == 1
				refs := []metav1.OwnerReference{ref(o, d.blocks)}
				if d.kept {
					refs = append(refs, ref(keeper, false))
				}
				var fin []string
				if d.held {
					fin = []string{holdFinalizer}
				}
				name := fmt.Sprintf("%s-dep-%d", o.name, j)
				if j%4 == 3 {
					d.obj = newDatabase(ns, name, fin, refs...)
				} else {
					d.obj = newConfigMap(ns, name, fin, refs...)
				}
				o.deps = append(o.deps, d)
				objs = append(objs, d.obj)
				total++
			}
		}
		if err := createAll(ctx, c, objs); err != nil {
			t.Fatal(err)
		}
		for _, o := range owners[1:] {
			p := o.policy
			if err := c.example.ExampleV1().Databases(ns).Delete(ctx, o.name, metav1.DeleteOptions{PropagationPolicy: &p}); err != nil {
				t.Fatal(err)
			}
		}
		// Kill the holder once its collector has begun.
		left := 0
		waitFor(ctx, t, 30*time.Second, "the collector to begin", func(ctx context.Context) (bool, error) {
			n, err := countObjects(ctx, c, ns)
			left = n - len(owners) // owners not yet gone count too: a lower bound
			return err == nil && n < total+len(owners), err
		})
		t.Logf("killing replica %d, the controllers' Lease holder %q, with at most %d of %d dependents left", holder, id, left, total)
		s.failover(ctx, c, holder)

		// The held dependents are marked for deletion by the collector, and
		// keep their foreground owners.
		waitFor(ctx, t, finishDeadline, "the held dependents marked for deletion", func(ctx context.Context) (bool, error) {
			for _, o := range owners[1:] {
				for _, d := range o.deps {
					if !d.held {
						continue
					}
					cm, err := c.kube.CoreV1().ConfigMaps(ns).Get(ctx, d.obj.GetName(), metav1.GetOptions{})
					if err != nil {
						return false, err
					}
					if cm.DeletionTimestamp == nil {
						return false, fmt.Errorf("held %s not marked", cm.Name)
					}
				}
			}
			return true, nil
		})
		for _, o := range owners[1 : perKind+1] {
			db, err := c.example.ExampleV1().Databases(ns).Get(ctx, o.name, metav1.GetOptions{})
			if err != nil || db.DeletionTimestamp == nil || !slices.Contains(db.Finalizers, metav1.FinalizerDeleteDependents) {
				t.Fatalf("foreground owner %s with held blocking dependents: %v %+v", o.name, err, db)
			}
		}
		released := time.Now()
		for _, o := range owners[1:] {
			for _, d := range o.deps {
				if d.held {
					if err := release(ctx, c, d.obj); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		etcd, err := s.c.Etcd.Client()
		if err != nil {
			t.Fatal(err)
		}
		defer etcd.Close()
		// What must stay: the keeper, the orphans, the kept dependents.
		stay := map[string]*gcDep{"databases/keeper": nil}
		for _, o := range owners[1:] {
			for i, d := range o.deps {
				if o.policy == metav1.DeletePropagationOrphan || d.kept {
					stay[d.resource()+"/"+d.obj.GetName()] = &o.deps[i]
				}
			}
		}
		waitFor(ctx, t, finishDeadline, "the collection finished in etcd", func(ctx context.Context) (bool, error) {
			keys, err := namespaceKeys(ctx, etcd, ns)
			if err != nil {
				return false, err
			}
			var extra []string
			have := map[string]bool{}
			for _, k := range keys {
				if k.Resource == "namespaces" {
					continue
				}
				have[k.Resource+"/"+k.Name] = true
				if _, ok := stay[k.Resource+"/"+k.Name]; !ok && k.Resource != "events" {
					extra = append(extra, k.Resource+"/"+k.Name)
				}
			}
			for k := range stay {
				if !have[k] {
					return false, fmt.Errorf("%s deleted, must stay", k)
				}
			}
			return len(extra) == 0, fmt.Errorf("%d objects left to collect, first %v", len(extra), extra[:min(len(extra), 3)])
		})
		t.Logf("collection finished %v after the holds were released", time.Since(released).Round(time.Millisecond))
		checkSurvivors(ctx, t, c, ns, keeper, owners[1:])
		checkForegroundOrder(ctx, t, etcd, ns, owners[1:perKind+1])
	})
}

// checkSurvivors checks every dependent that stays: owned by the keeper
// alone when the keeper owns it, by nobody otherwise (an orphan).
func checkSurvivors(ctx context.Context, t *testing.T, c clients, ns string, keeper *gcOwner, owners []*gcOwner) {
	t.Helper()
	for _, o := range owners {
		for _, d := range o.deps {
			if o.policy != metav1.DeletePropagationOrphan && !d.kept {
				continue
			}
			var refs []metav1.OwnerReference
			if d.resource() == "configmaps" {
				cm, err := c.kube.CoreV1().ConfigMaps(ns).Get(ctx, d.obj.GetName(), metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				refs = cm.OwnerReferences
			} else {
				db, err := c.example.ExampleV1().Databases(ns).Get(ctx, d.obj.GetName(), metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				refs = db.OwnerReferences
			}
			want := 0
			if d.kept {
				want = 1
			}
			if len(refs) != want || (want == 1 && refs[0].UID != keeper.uid) {
				t.Errorf("%s/%s of %s (%s): ownerReferences %+v, want %d to the keeper", d.resource(), d.obj.GetName(), o.name, o.policy, refs, want)
			}
		}
	}
}

// checkForegroundOrder checks in etcd's history that each foreground
// owner was deleted after every dependent that blocked it.
func checkForegroundOrder(ctx context.Context, t *testing.T, etcd *clientv3.Client, ns string, owners []*gcOwner) {
	t.Helper()
	revs, err := deleteRevisions(ctx, etcd, ns)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range owners {
		own, ok := revs["databases/"+o.name]
		if !ok {
			t.Errorf("foreground owner %s: no delete in etcd's history", o.name)
			continue
		}
		last := int64(0)
		for _, d := range o.deps {
			rev, ok := revs[d.resource()+"/"+d.obj.GetName()]
			if !ok {
				t.Errorf("dependent %s of %s: no delete in etcd's history", d.obj.GetName(), o.name)
			}
			if d.blocks {
				last = max(last, rev)
			}
		}
		if own <= last {
			t.Errorf("foreground owner %s deleted at revision %d, before its last blocking dependent (%d)", o.name, own, last)
		}
		t.Logf("foreground owner %s deleted at revision %d, its last blocking dependent at %d", o.name, own, last)
	}
}
