package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Thing is the kind.
//
// +genclient
type Thing struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ThingSpec `json:"spec"`
}

// ThingSpec holds the markers.
type ThingSpec struct {
	// +kubebuilder:validation:Pattern=`^(unclosed$`
	BadPattern string `json:"badPattern,omitempty"`
}

// ThingList is a list of Things.
type ThingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Thing `json:"items"`
}
