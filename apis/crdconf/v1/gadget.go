package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Gadget is a Widget with typed hooks (hooks/crdconf/v1): hooks that
// change nothing must not change what validation sees, so the table
// of test/crdconf runs against Gadgets too and must answer as the CRD of
// Widget does (a required field left out stays missing, not a Go zero).
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:subresource:status
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Spec   WidgetSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status WidgetStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// GadgetList is a list of Gadgets.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type GadgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []Gadget `json:"items" protobuf:"bytes,2,rep,name=items"`
}
