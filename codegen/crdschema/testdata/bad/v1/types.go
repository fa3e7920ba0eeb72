package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Thing is a kind with unknown markers and markers that do not fit.
//
// +genclient
// +kubebuilder:subresource:statuss
type Thing struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ThingSpec `json:"spec"`
}

// ThingSpec is used by Thing.
//
// +kubebuilder:validation:MinPropertie=1
type ThingSpec struct {
	// +kubebuilder:validation:maxLength=3
	NearMiss string `json:"nearMiss,omitempty"`
	// +kubebuilder:validation:Minimum=1
	MinOnString string `json:"minOnString,omitempty"`
	// +kubebuilder:validation:MinLength=1
	LengthOnInt int32 `json:"lengthOnInt,omitempty"`
	// +kubebuilder:validation:MinItems=1
	ItemsOnString string `json:"itemsOnString,omitempty"`
	Part          Part   `json:"part"`
}

// Part is reached from Thing.
type Part struct {
	// +kubebuilder:validation:Maxlength=3
	Name string `json:"name"`
}

// ThingList is a list of Things.
type ThingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Thing `json:"items"`
}

// Helper's markers are not read by any generator.
//
// +anything=goes
func Helper() {}
