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

// Mode is an enum the Kubernetes way.
//
// +k8s:enum
type Mode string

const (
	ModeA Mode = "A"
	ModeB Mode = "B"
)

// Name is a validated type.
//
// +k8s:maxLength=10
type Name string

// ThingSpec has one field per tag.
type ThingSpec struct {
	// +k8s:minimum=1
	// +k8s:maximum=9
	Count int32 `json:"count"`
	// +k8s:minLength=2
	// +k8s:maxLength=8
	Short string `json:"short"`
	// +k8s:minItems=1
	// +k8s:maxItems=3
	// +k8s:listType=set
	Items []string `json:"items"`
	// +k8s:minProperties=1
	// +k8s:maxProperties=2
	Props map[string]string `json:"props"`
	// +k8s:format=k8s-short-name
	Label string `json:"label"`
	// +k8s:format=k8s-long-name
	Host string `json:"host"`
	// +k8s:format=k8s-label-value
	Value string `json:"value"`
	// +k8s:format=k8s-uuid
	ID string `json:"id"`
	// +k8s:format=k8s-ip
	IP string `json:"ip"`
	// +k8s:maxBytes=16
	Bytes string `json:"bytes"`
	// +k8s:neq=none
	NotNone string `json:"notNone"`
	// +k8s:immutable
	Fixed string `json:"fixed"`
	// +k8s:required
	Must string `json:"must"`
	// +k8s:optional
	Maybe string `json:"maybe,omitempty"`
	Mode  Mode   `json:"mode"`
	Name  Name   `json:"name"`
}

// ThingList is a list of Things.
type ThingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Thing `json:"items"`
}
