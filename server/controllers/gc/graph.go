package gc

import (
	"fmt"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ref identifies an object in the graph: its UID and the coordinates
// under which it was seen (an informer's event) or referred to (an
// ownerReference, with the dependent's namespace).
type ref struct {
	APIVersion, Kind, Namespace, Name string
	UID                               types.UID
}

// ownerRef is the identity an ownerReference gives its owner, as seen from
// a dependent in namespace.
func ownerRef(o metav1.OwnerReference, namespace string) ref {
	return ref{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: namespace, Name: o.Name, UID: o.UID}
}

// matches reports whether o names r's object: same UID and coordinates
// (the namespace is the referrer's, not part of a reference).
func (r ref) matches(o metav1.OwnerReference) bool {
	return r.UID == o.UID && r.Name == o.Name && r.Kind == o.Kind && r.APIVersion == o.APIVersion
}

// String is the form upstream's events and logs use.
func (r ref) String() string {
	return fmt.Sprintf("[%s/%s, namespace: %s, name: %s, uid: %s]", r.APIVersion, r.Kind, r.Namespace, r.Name, r.UID)
}

// less orders refs (kind, apiVersion, namespace, name, uid), for a
// deterministic choice among conflicting identities of one UID.
func (r ref) less(o ref) bool {
	switch {
	case r.Kind != o.Kind:
		return r.Kind < o.Kind
	case r.APIVersion != o.APIVersion:
		return r.APIVersion < o.APIVersion
	case r.Namespace != o.Namespace:
		return r.Namespace < o.Namespace
	case r.Name != o.Name:
		return r.Name < o.Name
	}
	return r.UID < o.UID
}

// A node is an object in the graph: observed through an informer, or
// virtual, known only from its dependents' references until an informer
// sees it or a live read finds it absent. Every field is guarded by the
// graph's mu; nodes are the work queues' items, compared by pointer.
type node struct {
	id         ref
	owners     []metav1.OwnerReference
	dependents map[*node]struct{}
	// virtual: not observed yet.
	virtual bool
	// beingDeleted: observed with a deletionTimestamp.
	beingDeleted bool
	// deletingDependents: observed being deleted with the
	// foregroundDeletion finalizer.
	deletingDependents bool
}

// graph is the owner/dependent graph, by UID. The builder (one goroutine)
// changes it; workers read it.
type graph struct {
	// mu guards nodes and every field of every node in it.
	mu    sync.RWMutex
	nodes map[types.UID]*node
}

func newGraph() *graph { return &graph{nodes: make(map[types.UID]*node)} }

// A view is a consistent copy of what the workers read of a node.
type view struct {
	id                                        ref
	owners                                    []metav1.OwnerReference
	virtual, beingDeleted, deletingDependents bool
	dependents                                int
}

// view reads n.
func (g *graph) view(n *node) view {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return view{id: n.id, owners: n.owners, virtual: n.virtual, beingDeleted: n.beingDeleted,
		deletingDependents: n.deletingDependents, dependents: len(n.dependents)}
}

// lookup is the node of uid, if the graph has one.
func (g *graph) lookup(uid types.UID) (*node, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	n, ok := g.nodes[uid]
	return n, ok
}

// dependents is n's dependents, with whether each is deleting its own
// dependents (foreground) and whether it blocks n's deletion (an
// ownerReference to n with blockOwnerDeletion).
func (g *graph) dependents(n *node) []dependent {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make([]dependent, 0, len(n.dependents))
	for d := range n.dependents {
		blocks := slices.ContainsFunc(d.owners, func(o metav1.OwnerReference) bool {
			return o.UID == n.id.UID && o.BlockOwnerDeletion != nil && *o.BlockOwnerDeletion
		})
		out = append(out, dependent{node: d, blocks: blocks, deletingDependents: d.deletingDependents})
	}
	return out
}

// dependent is one of a node's dependents, as graph.dependents reads it.
type dependent struct {
	node                       *node
	blocks, deletingDependents bool
}
