// Package v1 is a test-only group for the CRD conformance test
// (test/crdconf): its one kind, Widget, carries every marker controller-gen
// knows, so the same Go types become a CRD on a real kube-apiserver
// (test/crdconf/testdata/crd, by controller-gen) and a kind apiloom serves,
// and a table of writes must get the same answers from both. It is not an
// example to copy: the example group is apis/example.
//
// Fields are optional unless marked required (the package-level marker
// below), as in most kubebuilder projects.
//
// +groupName=crdconf.apiloom.dev
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +kubebuilder:validation:Optional
package v1
