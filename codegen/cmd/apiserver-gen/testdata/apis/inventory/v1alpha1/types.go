package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Cactus has nothing outside metadata and status.
//
// +genclient
// +genclient:nonNamespaced
// +resourceName=cacti
// +k8s:deepcopy-gen=true
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:resource:path=cacti,singular=cactus,scope=Cluster
// +kubebuilder:subresource:status
type Cactus struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Status CactusStatus `json:"status,omitempty"`
}

// CactusStatus holds no references, so deepcopy-gen gives it no methods
// and assignment copies it.
type CactusStatus struct {
	Height int32 `json:"height,omitempty"`
}

// CactusList is a list of Cacti.
//
// +k8s:deepcopy-gen=true
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type CactusList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cactus `json:"items"`
}

// Shelf has a pointer status, and a scale subresource whose status paths
// go through it.
//
// +genclient
// +k8s:deepcopy-gen=true
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:subresource:scale:specpath=.spec.slots,statuspath=.status.filled,selectorpath=.status.selector
type Shelf struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ShelfSpec    `json:"spec,omitempty"`
	Status *ShelfStatus `json:"status,omitempty"`
}

// ShelfSpec describes a Shelf.
type ShelfSpec struct {
	Slots int32 `json:"slots,omitempty"`
}

// ShelfStatus is the observed state of a Shelf.
//
// +k8s:deepcopy-gen=true
type ShelfStatus struct {
	Used []string `json:"used,omitempty"`
	// Filled is how many slots hold something.
	Filled int64 `json:"filled,omitempty"`
	// Selector is a label selector, serialized.
	Selector string `json:"selector,omitempty"`
}

// ShelfList is a list of Shelves.
//
// +k8s:deepcopy-gen=true
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ShelfList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Shelf `json:"items"`
}
