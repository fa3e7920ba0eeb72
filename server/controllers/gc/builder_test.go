package gc

import (
	"log/slog"
	"slices"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// events records what the builder reports.
type events struct {
	mu  sync.Mutex // guards got
	got []string
}

func (e *events) invalidNamespace(dependent, owner ref) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, dependent.Name+": "+invalidNamespaceMessage(dependent, owner))
}

func newTestCollector(t *testing.T) (*collector, *events) {
	t.Helper()
	ev := &events{}
	c := newCollector(nil, nil, ev, slog.New(slog.DiscardHandler))
	t.Cleanup(func() {
		c.changes.ShutDown()
		c.attemptToDelete.ShutDown()
		c.attemptToOrphan.ShutDown()
	})
	return c, ev
}

var configMaps = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

func object(ns, name string, uid types.UID, owners ...metav1.OwnerReference) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: uid, OwnerReferences: owners}}
}

func cmRef(name string, uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: name, UID: uid}
}

// apply applies changes in order, as the builder's goroutine does.
func (c *collector) apply(changes ...*change) {
	c.graph.mu.Lock()
	defer c.graph.mu.Unlock()
	for _, ch := range changes {
		c.processChangeLocked(ch)
	}
}

// queued drains attemptToDelete and returns the names queued.
func queued(c *collector) []string {
	var names []string
	for c.attemptToDelete.Len() > 0 {
		n, _ := c.attemptToDelete.Get()
		names = append(names, c.graph.view(n).id.Name)
		c.attemptToDelete.Done(n)
		c.attemptToDelete.Forget(n)
	}
	slices.Sort(names)
	return names
}

// TestCrossNamespaceReference: a dependent naming, by UID, a namespaced
// owner of another namespace is queued (to be found dangling) and reported
// with upstream's OwnerRefInvalidNamespace event, whichever is seen first.
func TestCrossNamespaceReference(t *testing.T) {
	const want = `dep: ownerRef [v1/ConfigMap, namespace: b, name: owner, uid: u1] does not exist in namespace "b"`
	t.Run("owner first", func(t *testing.T) {
		c, ev := newTestCollector(t)
		c.apply(&change{typ: added, gvk: configMaps, obj: object("a", "owner", "u1")})
		c.apply(&change{typ: added, gvk: configMaps, obj: object("b", "dep", "u2", cmRef("owner", "u1"))})
		if got := queued(c); !slices.Equal(got, []string{"dep"}) {
			t.Fatalf("queued %v", got)
		}
		if !slices.Equal(ev.got, []string{want}) {
			t.Fatalf("events %q", ev.got)
		}
	})
	t.Run("dependent first", func(t *testing.T) {
		c, ev := newTestCollector(t)
		c.apply(&change{typ: added, gvk: configMaps, obj: object("b", "dep", "u2", cmRef("owner", "u1"))})
		if got := queued(c); !slices.Equal(got, []string{"owner"}) { // the virtual owner, to verify
			t.Fatalf("queued %v", got)
		}
		c.apply(&change{typ: added, gvk: configMaps, obj: object("a", "owner", "u1")})
		if got := queued(c); !slices.Equal(got, []string{"dep"}) {
			t.Fatalf("queued %v", got)
		}
		if !slices.Equal(ev.got, []string{want}) {
			t.Fatalf("events %q", ev.got)
		}
	})
	t.Run("same namespace is fine", func(t *testing.T) {
		c, ev := newTestCollector(t)
		c.apply(&change{typ: added, gvk: configMaps, obj: object("a", "owner", "u1")},
			&change{typ: added, gvk: configMaps, obj: object("a", "dep", "u2", cmRef("owner", "u1"))})
		if got := queued(c); len(got) != 0 || len(ev.got) != 0 {
			t.Fatalf("queued %v, events %q", got, ev.got)
		}
	})
}

// TestOwnerDeletedQueuesDependents: an owner's deletion queues its
// dependents and remembers it absent; a foreground deletion starting
// queues the dependents and the owner; an orphaning one the owner.
func TestOwnerDeletedQueuesDependents(t *testing.T) {
	c, _ := newTestCollector(t)
	owner := object("a", "owner", "u1")
	c.apply(&change{typ: added, gvk: configMaps, obj: owner},
		&change{typ: added, gvk: configMaps, obj: object("a", "d1", "u2", cmRef("owner", "u1"))},
		&change{typ: added, gvk: configMaps, obj: object("a", "d2", "u3", cmRef("owner", "u1"))})
	queued(c)

	deleting := owner.DeepCopy()
	now := metav1.Now()
	deleting.DeletionTimestamp, deleting.Finalizers = &now, []string{metav1.FinalizerDeleteDependents}
	c.apply(&change{typ: updated, gvk: configMaps, obj: deleting, old: owner})
	if got := queued(c); !slices.Equal(got, []string{"d1", "d2", "owner"}) {
		t.Fatalf("foreground queued %v", got)
	}
	c.apply(&change{typ: updated, gvk: configMaps, obj: deleting, old: deleting})
	if got := queued(c); len(got) != 0 {
		t.Fatalf("an unchanged deletion queued %v", got)
	}

	orphaning := deleting.DeepCopy()
	orphaning.Finalizers = []string{metav1.FinalizerOrphanDependents}
	c.apply(&change{typ: updated, gvk: configMaps, obj: orphaning, old: deleting})
	if c.attemptToOrphan.Len() != 1 {
		t.Fatalf("orphan queue %d", c.attemptToOrphan.Len())
	}

	c.apply(&change{typ: deleted, gvk: configMaps, obj: orphaning})
	if got := queued(c); !slices.Equal(got, []string{"d1", "d2"}) {
		t.Fatalf("deletion queued %v", got)
	}
	if !c.isAbsent(ref{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "owner", UID: "u1"}) {
		t.Fatal("the deleted owner is not remembered absent")
	}
	if _, ok := c.graph.lookup("u1"); ok {
		t.Fatal("the deleted owner is still in the graph")
	}
}

// TestDiffOwners compares reference lists by UID.
func TestDiffOwners(t *testing.T) {
	yes, no := true, false
	a, b, c := cmRef("a", "1"), cmRef("b", "2"), cmRef("c", "3")
	blockingB := b
	blockingB.BlockOwnerDeletion = &yes
	unblockedB := b
	unblockedB.BlockOwnerDeletion = &no
	added, removed, changed := diffOwners([]metav1.OwnerReference{a, blockingB}, []metav1.OwnerReference{unblockedB, c})
	if len(added) != 1 || added[0].UID != "3" || len(removed) != 1 || removed[0].UID != "1" ||
		len(changed) != 1 || !blocks(changed[0][0]) || blocks(changed[0][1]) {
		t.Fatalf("added %v removed %v changed %v", added, removed, changed)
	}
}

// TestAlternateIdentity: dependents naming one UID under several
// identities are verified in turn, in order, and the turn ends.
func TestAlternateIdentity(t *testing.T) {
	deps := []*node{
		{id: ref{Namespace: "a", Name: "d1"}, owners: []metav1.OwnerReference{cmRef("x", "u")}},
		{id: ref{Namespace: "a", Name: "d2"}, owners: []metav1.OwnerReference{cmRef("y", "u")}},
	}
	x := ref{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "x", UID: "u"}
	y := x
	y.Name = "y"
	if got, ok := alternateIdentity(deps, x); !ok || got != y {
		t.Fatalf("after x: %v %v", got, ok)
	}
	if got, ok := alternateIdentity(deps, y); !ok || got != x {
		t.Fatalf("after y: %v %v", got, ok)
	}
	if _, ok := alternateIdentity(deps[:1], x); ok {
		t.Fatal("an alternate with a single identity")
	}
}
