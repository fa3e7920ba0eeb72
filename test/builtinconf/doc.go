// Package builtinconf is the built-in kinds' differential test of issue
// 31: one table of request sequences (testdata/cases.yaml) against every
// built-in kind apiloom serves from k8s.io/api (core/v1 Namespace,
// ConfigMap, Secret and Event, events.k8s.io/v1 Event,
// coordination.k8s.io/v1 Lease, the four RBAC kinds and the six of
// admissionregistration.k8s.io/v1) must get the same
// answers from apiloom as from a real kube-apiserver.
//
// The kube-apiserver half (make builtin-conformance,
// hack/builtin-conformance.sh) runs the table against kube-apiserver v1.37
// with kube-controller-manager's namespace and garbage-collector
// controllers, and records every answer, normalised (uids, resourceVersions
// and generated names become placeholders numbered in order of first
// appearance within a case, times become {time}), in testdata/golden.yaml.
// The apiloom half (TestAPILoomMatchesKubeAPIServer, part of make test)
// runs the same table against an in-process apiloom and compares its
// answers with that file field by field, printing a table of same and
// different with totals.
package builtinconf
