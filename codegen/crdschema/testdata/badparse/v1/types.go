package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Thing has a malformed marker.
//
// +genclient
type Thing struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ThingSpec `json:"spec"`
}

// ThingSpec holds it.
type ThingSpec struct {
	// +kubebuilder:validation:MinLength=abc
	Name string `json:"name,omitempty"`
}

// ThingList is a list of Things.
type ThingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Thing `json:"items"`
}
