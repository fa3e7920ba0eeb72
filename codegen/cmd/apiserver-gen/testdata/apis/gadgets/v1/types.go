package v1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Gadget exercises every schema marker.
//
// +genclient
// +genclient:method=Inspect,verb=create,subresource=inspect,input=InspectRequest,result=InspectResult
// +genclient:method=GetSummary,verb=get,subresource=summary,result=InspectResult
// +apiloom:stream:method=Events,subresource=events,input=GadgetEventOptions
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 40",message="name too long"
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec GadgetSpec `json:"spec,omitempty"`
	// +optional
	Status GadgetStatus `json:"status,omitempty"`
}

// Colour is a string enum declared Kubernetes' way: its constants are the values.
//
// +k8s:enum
type Colour string

const (
	ColourRed  Colour = "red"
	ColourBlue Colour = "blue"
)

// Size is an enum by kubebuilder marker on the type.
//
// +kubebuilder:validation:Enum=S;M;L
type Size string

// Port is a validated type reused by several fields.
//
// +kubebuilder:validation:Minimum=1
// +kubebuilder:validation:Maximum=65535
type Port int32

// GadgetSpec has one field per marker.
//
// +kubebuilder:validation:XValidation:rule="!has(self.min) || !has(self.max) || self.min <= self.max",message="min must not exceed max",reason=FieldValueInvalid,fieldPath=".min"
// +kubebuilder:validation:AtMostOneOf=left;right
// +kubebuilder:validation:ExactlyOneOf=one;two
// +kubebuilder:validation:MinProperties=1
// +kubebuilder:validation:MaxProperties=60
type GadgetSpec struct {
	// Name is `required` by the package default.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:Pattern=`^[a-z]+$`
	Name string `json:"name"`
	// +optional
	// +kubebuilder:validation:Minimum=-5
	// +kubebuilder:validation:Maximum=5
	// +kubebuilder:validation:ExclusiveMinimum=true
	// +kubebuilder:validation:ExclusiveMaximum=true
	// +kubebuilder:validation:MultipleOf=2
	Min *int32 `json:"min,omitempty"`
	// +optional
	// +k8s:minimum=0
	// +k8s:maximum=100
	Max *int64 `json:"max,omitempty"`
	// +optional
	// +kubebuilder:validation:Format=email
	Email string `json:"email,omitempty"`
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=date-time
	When metav1.Time `json:"when,omitempty"`
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:MaxLength=10
	// +kubebuilder:validation:items:Pattern=`^[a-z]+$`
	Tags []string `json:"tags,omitempty"`
	// +optional
	// +kubebuilder:validation:items:Enum=a;b
	Letters []string `json:"letters,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=name
	// +listMapKey=zone
	// +k8s:maxItems=8
	Entries []Entry `json:"entries,omitempty"`
	// +optional
	// +listType=set
	Set []string `json:"set,omitempty"`
	// +optional
	// +listType=atomic
	Atomic []string `json:"atomic,omitempty"`
	// +optional
	// +k8s:listType=map
	// +k8s:listMapKey=name
	K8sList []Entry `json:"k8sList,omitempty"`
	// +optional
	// +mapType=granular
	// +kubebuilder:validation:MaxProperties=3
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	// +mapType=atomic
	Atomics map[string]int32 `json:"atomics,omitempty"`
	// +optional
	// +structType=atomic
	Pair *Pair `json:"pair,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Free *apiextensionsv1.JSON `json:"free,omitempty"`
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	Extra runtime.RawExtension `json:"extra,omitempty"`
	// +optional
	// +kubebuilder:validation:EmbeddedResource
	// +kubebuilder:pruning:PreserveUnknownFields
	Template runtime.RawExtension `json:"template,omitempty"`
	// +optional
	Target intstr.IntOrString `json:"target,omitempty"`
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern=`^[0-9]+%?$`
	Surge *intstr.IntOrString `json:"surge,omitempty"`
	// +optional
	Memory resource.Quantity `json:"memory,omitempty"`
	// +optional
	// +nullable
	Nothing *string `json:"nothing,omitempty"`
	// +optional
	// +kubebuilder:default=3
	Replicas int32 `json:"replicas,omitempty"`
	// +optional
	// +default="blue"
	Colour Colour `json:"colour,omitempty"`
	// +optional
	// +kubebuilder:default={name: x, zone: a}
	Primary *Entry `json:"primary,omitempty"`
	// +optional
	// +kubebuilder:default={a,b}
	Defaults []string `json:"defaults,omitempty"`
	Size     Size     `json:"size"`
	// +optional
	Port Port `json:"port,omitempty"`
	// +optional
	// +kubebuilder:validation:Enum=1;2;3
	Level int32 `json:"level,omitempty"`
	// Grows may only grow: a transition rule.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self >= oldSelf",message="may only grow"
	Grows int64 `json:"grows,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:XValidation:rule="!oldSelf.hasValue() || self == oldSelf.value()",messageExpression="'may not change once set'",optionalOldSelf=true
	Once string `json:"once,omitempty"`
	// +optional
	// +k8s:immutable
	Fixed string `json:"fixed,omitempty"`
	// +k8s:required
	Must string `json:"must"`
	// +k8s:optional
	Maybe string `json:"maybe,omitempty"`
	// +kubebuilder:validation:Optional
	Perhaps string `json:"perhaps,omitempty"`
	// +required
	Needed []string `json:"needed"`
	// +optional
	// +kubebuilder:title=Left side
	// +kubebuilder:example=l
	Left string `json:"left,omitempty"`
	// +optional
	// +kubebuilder:externalDocs:url=https://example.com/right,description="About right."
	Right string `json:"right,omitempty"`
	// +optional
	One *string `json:"one,omitempty"`
	// +optional
	Two *string `json:"two,omitempty"`
	// +optional
	Flag *bool `json:"flag,omitempty"`
	// +optional
	Bytes []byte `json:"bytes,omitempty"`
	// Nested types carry their own markers and are reached through a map.
	// +optional
	Nested map[string][]Entry `json:"nested,omitempty"`

	Embedded `json:",inline"`
}

// Embedded is inlined into GadgetSpec.
type Embedded struct {
	// +optional
	// +kubebuilder:validation:MaxLength=5
	Inlined string `json:"inlined,omitempty"`
}

// Entry is a list-map item.
type Entry struct {
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// +optional
	// +kubebuilder:default=a
	Zone string `json:"zone,omitempty"`
}

// Pair is an atomic struct.
type Pair struct {
	// +optional
	A string `json:"a,omitempty"`
	// +optional
	B string `json:"b,omitempty"`
}

// GadgetStatus is what was observed.
type GadgetStatus struct {
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	Ready bool `json:"ready,omitempty"`
}

// GadgetList is a list of Gadgets.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type GadgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Gadget `json:"items"`
}

// InspectRequest is the body of the inspect action.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type InspectRequest struct {
	metav1.TypeMeta `json:",inline"`

	// Depth is how deep to look.
	//
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=1
	Depth int32 `json:"depth,omitempty"`
}

// InspectResult answers the inspect action and the summary view.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type InspectResult struct {
	metav1.TypeMeta `json:",inline"`

	Summary string `json:"summary"`
}

// GadgetEventOptions are the query parameters of the events stream.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type GadgetEventOptions struct {
	metav1.TypeMeta `json:",inline"`

	Follow bool   `json:"follow,omitempty"`
	Limit  *int64 `json:"limit,omitempty"`
}
