package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Order is a customer's order.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:resource:shortName=ord;ords,categories=all;shop
// +kubebuilder:subresource:status
// +kubebuilder:selectablefield:JSONPath=.spec.customer
// +kubebuilder:selectablefield:JSONPath=.spec.paid
// +kubebuilder:selectablefield:JSONPath=.spec.quantity
// +kubebuilder:selectablefield:JSONPath=`.spec.priority`
// +kubebuilder:selectablefield:JSONPath=".spec.shipping.carrier"
// +kubebuilder:selectablefield:JSONPath=.spec.shipping.express
// +kubebuilder:selectablefield:JSONPath=.spec.region
// +kubebuilder:selectablefield:JSONPath=.status.phase
// +kubebuilder:printcolumn:name=Customer,type=string,JSONPath=.spec.customer
// +kubebuilder:printcolumn:name="Qty",type="integer",JSONPath=".spec.quantity",format=int32,description="Items ordered."
// +kubebuilder:printcolumn:name=Paid,type=boolean,JSONPath=.spec.paid
// +kubebuilder:printcolumn:name=Phase,type=string,JSONPath=.status.phase
// +kubebuilder:printcolumn:name=Ready,type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Carrier",type=string,JSONPath=.spec.shipping.carrier,priority=1
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=.metadata.creationTimestamp
type Order struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec OrderSpec `json:"spec,omitempty"`
	// Notes sit beside the spec; SpecEqual compares them too.
	Notes  []string    `json:"notes,omitempty"`
	Status OrderStatus `json:"status,omitempty"`
}

// OrderSpec is what was ordered.
type OrderSpec struct {
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=20
	Customer string `json:"customer"`
	Paid     bool   `json:"paid,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:validation:ExclusiveMaximum=true
	Quantity int32 `json:"quantity"`
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:ExclusiveMinimum=true
	// +kubebuilder:default=500
	WeightGrams uint32 `json:"weightGrams,omitempty"`
	// +kubebuilder:validation:Enum=-3;0;3
	// +kubebuilder:default=0
	Priority *int64 `json:"priority,omitempty"`
	// +kubebuilder:default={carrier: post}
	Shipping *Shipping `json:"shipping,omitempty"`
	Location `json:",inline"`
	// +kubebuilder:validation:MaxItems=3
	Items []string `json:"items,omitempty"`
	// +kubebuilder:validation:MinItems=2
	Lines []OrderLine `json:"lines,omitempty"`
	// Gifts are wrapped items by recipient.
	Gifts map[string]OrderLine `json:"gifts,omitempty"`
	// Discount is a fraction: controller-gen refuses floats without
	// crd:allowDangerousTypes, and apiserver-gen does as it does.
	//
	// +kubebuilder:validation:Optional
	Discount *string `json:"discount,omitempty"`
}

// OrderLine is one line of an order, validated wherever it appears.
type OrderLine struct {
	// +required
	// +kubebuilder:validation:Pattern=`^[A-Z]{3}-[0-9]+$`
	SKU string `json:"sku"`
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	Count int32 `json:"count,omitempty"`
}

// Location is inlined into OrderSpec.
type Location struct {
	// +kubebuilder:validation:Enum=eu;us;apac
	Region string `json:"region,omitempty"`
}

// Shipping says how an order travels.
type Shipping struct {
	// +kubebuilder:default=post
	Carrier string `json:"carrier"`
	// +kubebuilder:default=false
	Express *bool `json:"express,omitempty"`
}

// OrderPhase is a named string type.
type OrderPhase string

// OrderStatus is the observed state of an Order.
type OrderStatus struct {
	// +kubebuilder:validation:Enum=Paid;Shipped
	Phase      OrderPhase         `json:"phase,omitempty"`
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// OrderList is a list of Orders.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type OrderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Order `json:"items"`
}

// Warehouse is cluster-scoped and has no status.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:resource:scope=Cluster
type Warehouse struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec WarehouseSpec `json:"spec,omitempty"`
}

// WarehouseSpec describes a Warehouse.
type WarehouseSpec struct {
	City string `json:"city,omitempty"`
}

// WarehouseList is a list of Warehouses.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type WarehouseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Warehouse `json:"items"`
}

// Receipt has a Status member that is not a subresource: clients write it
// with the rest of the object, and it counts towards SpecEqual.
//
// +genclient
// +genclient:noStatus
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type Receipt struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ReceiptSpec   `json:"spec,omitempty"`
	Status ReceiptStatus `json:"status,omitempty"`
	// cache is not serialized and never compared (controller-gen, like
	// encoding/json, needs the "-" tag to skip it).
	cache string `json:"-"`
}

// ReceiptSpec is what a Receipt records.
type ReceiptSpec struct {
	Order string `json:"order"`
}

// ReceiptStatus is ordinary content of a Receipt.
type ReceiptStatus struct {
	Printed bool `json:"printed,omitempty"`
}

// ReceiptList is a list of Receipts.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ReceiptList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Receipt `json:"items"`
}
