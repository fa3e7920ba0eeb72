// Package crdconf is the CRD conformance test of issue 12: the same Go
// types (apis/crdconf) are served by apiloom and, turned into a CRD by
// controller-gen (testdata/crd, written by make generate), by a real
// kube-apiserver; one table of writes (testdata/cases.yaml) must get the
// same answers from both.
//
// The kube-apiserver half (make crd-conformance, hack/crd-conformance.sh)
// runs the table against a real kube-apiserver serving the CRD and records
// every answer in testdata/golden.yaml. The apiloom half
// (TestAPILoomMatchesCRD, part of make test) runs the same table against
// an in-process apiloom and compares its answers with that file, printing
// a table of same/different with totals.
package crdconf
