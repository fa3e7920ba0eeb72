package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Parcel is valid as a CRD, and its spec has fields named like methods
// generated.pb.go adds to every type (Size, String): make generate leaves
// it out of protobuf with a warning, and it is served as JSON, YAML and
// CBOR, as kube-apiserver serves its CRD (test/e2e/fieldnames_test.go).
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type Parcel struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ParcelSpec `json:"spec,omitempty"`
}

// ParcelSpec has the fields named like generated methods.
type ParcelSpec struct {
	// Size in grams.
	//
	// +kubebuilder:validation:Minimum=1
	Size *int32 `json:"size,omitempty"`
	// String is a label, the field name a CRD allows and gogo's
	// generated String method would clash with.
	String string `json:"string,omitempty"`
}

// ParcelList is a list of Parcels.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ParcelList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Parcel `json:"items"`
}
