package strategy

import (
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"
)

func TestLeasePrepare(t *testing.T) {
	withFields := func() *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{
			HolderIdentity:  ptr.To("h"),
			Strategy:        ptr.To[coordinationv1.CoordinatedLeaseStrategy]("Unknown"),
			PreferredHolder: ptr.To("p"),
		}}
	}
	created := withFields()
	LeasePrepare(created, nil)
	if created.Spec.Strategy != nil || created.Spec.PreferredHolder != nil || created.Spec.HolderIdentity == nil {
		t.Fatalf("created %+v", created.Spec)
	}

	// An update keeps only what the stored Lease has.
	updated := withFields()
	LeasePrepare(updated, &coordinationv1.Lease{})
	if updated.Spec.Strategy != nil || updated.Spec.PreferredHolder != nil {
		t.Fatalf("update of a lease without them: %+v", updated.Spec)
	}
	old := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{Strategy: ptr.To(coordinationv1.OldestEmulationVersion)}}
	updated = withFields()
	LeasePrepare(updated, old)
	if updated.Spec.Strategy == nil || *updated.Spec.Strategy != "Unknown" || updated.Spec.PreferredHolder != nil {
		t.Fatalf("update of a lease with a strategy: %+v", updated.Spec)
	}
	old = &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{PreferredHolder: ptr.To("q")}}
	updated = withFields()
	LeasePrepare(updated, old)
	if updated.Spec.Strategy != nil || updated.Spec.PreferredHolder == nil || *updated.Spec.PreferredHolder != "p" {
		t.Fatalf("update of a lease with a preferred holder: %+v", updated.Spec)
	}
	if old.Spec.Strategy != nil || *old.Spec.PreferredHolder != "q" {
		t.Fatalf("old changed: %+v", old.Spec)
	}
}
