// Package tableconvert renders objects as the meta.k8s.io Table that
// kubectl get asks for: a resource's printer columns compiled once, each
// object's cells (JSONPath values, ages, or the kind's own printer), and
// the Table's rows with the object each row carries. It knows nothing of
// requests; the handlers hand it the negotiated form, so the same
// conversion serves gets, lists and watches.
package tableconvert
