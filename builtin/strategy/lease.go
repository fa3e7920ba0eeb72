package strategy

import (
	coordinationv1 "k8s.io/api/coordination/v1"
)

// LeasePrepare is kube-apiserver's Lease strategy with its
// CoordinatedLeaderElection feature gate off, its default (apiloom has no
// such gate, nor the coordinated leader election that uses these fields):
// a created Lease loses spec.strategy and spec.preferredHolder, and an
// update loses each one the stored Lease does not have, so a Lease that
// has one (written while the gate was on) keeps it. It runs before
// validation, so what it drops is never validated; the writer's managed
// fields, recorded from the request, still name them, as upstream's do.
func LeasePrepare(obj, old *coordinationv1.Lease) {
	if old == nil || old.Spec.Strategy == nil {
		obj.Spec.Strategy = nil
	}
	if old == nil || old.Spec.PreferredHolder == nil {
		obj.Spec.PreferredHolder = nil
	}
}
