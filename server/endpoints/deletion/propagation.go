package deletion

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Propagation of a DELETE to the object's dependents, as kube-apiserver's
// generic store asks the garbage collector (server/controllers/gc) for it:
// the request's policy becomes one of two finalizers on the object, which
// the collector removes once it has done what they ask.
//
//   - Orphan (or the deprecated orphanDependents=true): the "orphan"
//     finalizer; the collector removes the object's ownerReference from its
//     dependents first, so they outlive it.
//   - Foreground: the "foregroundDeletion" finalizer; the collector deletes
//     the dependents first, the object once none with blockOwnerDeletion is
//     left.
//   - Background, or no policy (every kind's default here, as for a custom
//     resource): no finalizer; the object goes at once and the collector
//     deletes its dependents afterwards.
//
// Without a policy in the request, a finalizer the object already has
// decides, so a second DELETE of an object being deleted changes nothing;
// with one, the request's policy replaces the object's (a later DELETE
// with Orphan turns a foreground deletion into an orphaning one, and one
// with Background removes both finalizers, which deletes the object if no
// other finalizer is left). The two finalizers are never both set.

// Propagation is what a DeleteOptions says about dependents: its
// deprecated orphanDependents and its propagationPolicy, validated
// (never both set, a known policy) before it is read.
type Propagation struct {
	orphan *bool
	policy *metav1.DeletionPropagation
}

// PropagationOf is opts' propagation.
func PropagationOf(opts metav1.DeleteOptions) Propagation {
	//nolint:staticcheck // SA1019: the deprecated field is still served, as upstream serves it
	return Propagation{orphan: opts.OrphanDependents, policy: opts.PropagationPolicy}
}

// orphans reports whether dependents of obj are to be orphaned: the
// request decides when it says, else the finalizers obj has.
func (p Propagation) orphans(obj metav1.Object) bool {
	switch {
	case p.orphan != nil:
		return *p.orphan
	case p.policy != nil:
		return *p.policy == metav1.DeletePropagationOrphan
	}
	for _, f := range obj.GetFinalizers() {
		switch f {
		case metav1.FinalizerOrphanDependents:
			return true
		case metav1.FinalizerDeleteDependents:
			return false
		}
	}
	return false
}

// foreground reports whether dependents of obj are to be deleted before
// it: the request decides when it says, else the finalizers obj has.
func (p Propagation) foreground(obj metav1.Object) bool {
	switch {
	case p.orphan != nil:
		return false
	case p.policy != nil:
		return *p.policy == metav1.DeletePropagationForeground
	}
	for _, f := range obj.GetFinalizers() {
		switch f {
		case metav1.FinalizerDeleteDependents:
			return true
		case metav1.FinalizerOrphanDependents:
			return false
		}
	}
	return false
}

// Finalizers returns the finalizers obj is to have once deleted with p:
// its own without the two garbage-collection finalizers, then the one p
// asks for; changed reports whether that is another set than obj's.
func (p Propagation) Finalizers(obj metav1.Object) (_ []string, changed bool) {
	have := obj.GetFinalizers()
	want := make([]string, 0, len(have)+1)
	for _, f := range have {
		if f != metav1.FinalizerOrphanDependents && f != metav1.FinalizerDeleteDependents {
			want = append(want, f)
		}
	}
	if p.orphans(obj) {
		want = append(want, metav1.FinalizerOrphanDependents)
	}
	if p.foreground(obj) {
		want = append(want, metav1.FinalizerDeleteDependents)
	}
	return want, !sameSet(have, want)
}

// sameSet reports whether a and b hold the same strings, in any order and
// counting duplicates once.
func sameSet(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	for _, s := range b {
		if !slices.Contains(a, s) {
			return false
		}
	}
	return true
}

// Apply sets obj's finalizers to those deleting it with p
// leaves and reports whether any remain, i.e. whether obj is only marked
// as deleting rather than deleted. obj must be the caller's copy.
func (p Propagation) Apply(obj metav1.Object) (pending bool) {
	fins, changed := p.Finalizers(obj)
	if changed {
		obj.SetFinalizers(fins)
	}
	return len(obj.GetFinalizers()) > 0
}
