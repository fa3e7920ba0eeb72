package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Widget exercises every marker controller-gen knows, with a status
// subresource. Its fields are pointers or omitempty so that a value a
// request sends survives decoding into Go (a CRD keeps every value sent):
// the test compares validation, not encoding.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:resource:shortName=wd
// +kubebuilder:subresource:status
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Spec   WidgetSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status WidgetStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// WidgetSpec holds one field (or a few) per marker.
//
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas",message="minReplicas must not exceed maxReplicas"
// +kubebuilder:validation:XValidation:rule="!has(self.alias) || self.alias != 'forbidden'",messageExpression="'alias ' + self.alias + ' is reserved'",reason=FieldValueForbidden,fieldPath=".alias"
// +kubebuilder:validation:XValidation:rule="!has(self.mode) || self.mode != 'locked' || has(self.lockReason)",message="a locked widget needs a lockReason",reason=FieldValueRequired,fieldPath=".lockReason"
type WidgetSpec struct {
	// Engine is required (field-level marker over the package's Optional).
	//
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Enum=postgres;mysql
	Engine string `json:"engine" protobuf:"bytes,1,opt,name=engine"`
	// Owner is required by the short marker.
	//
	// +required
	Owner *string `json:"owner,omitempty" protobuf:"bytes,2,opt,name=owner"`

	// Replicas: Minimum, Maximum and a default.
	//
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +kubebuilder:default=3
	Replicas *int32 `json:"replicas,omitempty" protobuf:"varint,3,opt,name=replicas"`
	// MinReplicas and MaxReplicas are compared by a CEL rule on the spec.
	MinReplicas *int32 `json:"minReplicas,omitempty" protobuf:"varint,4,opt,name=minReplicas"`
	MaxReplicas *int32 `json:"maxReplicas,omitempty" protobuf:"varint,5,opt,name=maxReplicas"`
	// Score: exclusive bounds.
	//
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:ExclusiveMinimum=true
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:validation:ExclusiveMaximum=true
	Score *int64 `json:"score,omitempty" protobuf:"varint,6,opt,name=score"`
	// Step: MultipleOf.
	//
	// +kubebuilder:validation:MultipleOf=5
	Step *int32 `json:"step,omitempty" protobuf:"varint,7,opt,name=step"`

	// Alias: MinLength, MaxLength.
	//
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=10
	Alias *string `json:"alias,omitempty" protobuf:"bytes,8,opt,name=alias"`
	// Code: Pattern.
	//
	// +kubebuilder:validation:Pattern=`^[a-z]+-[0-9]+$`
	Code *string `json:"code,omitempty" protobuf:"bytes,9,opt,name=code"`
	// Tier: an enum on a named type (the marker on the type).
	Tier *Tier `json:"tier,omitempty" protobuf:"bytes,10,opt,name=tier,casttype=Tier"`
	// Mode: an enum with a default.
	//
	// +kubebuilder:validation:Enum=open;locked
	// +kubebuilder:default=open
	Mode string `json:"mode,omitempty" protobuf:"bytes,11,opt,name=mode"`
	// LockReason is required by a CEL rule when mode is locked.
	LockReason *string `json:"lockReason,omitempty" protobuf:"bytes,12,opt,name=lockReason"`
	// Label is a value-type string with MinLength: an explicit "" is
	// dropped by Go's omitempty before any validation could see it.
	//
	// +kubebuilder:validation:MinLength=2
	Label string `json:"label,omitempty" protobuf:"bytes,13,opt,name=label"`
	// ShortName: a MaxLength on a named type.
	ShortName *ShortName `json:"shortName,omitempty" protobuf:"bytes,14,opt,name=shortName,casttype=ShortName"`

	// Formats has one field per format kube-apiserver checks.
	Formats *Formats `json:"formats,omitempty" protobuf:"bytes,15,opt,name=formats"`

	// Tags: MinItems, MaxItems, items:MinLength, items:MaxLength, items:Pattern.
	//
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=3
	// +kubebuilder:validation:items:MinLength=2
	// +kubebuilder:validation:items:MaxLength=5
	// +kubebuilder:validation:items:Pattern=`^[a-z]+$`
	// +listType=atomic
	Tags []string `json:"tags,omitempty" protobuf:"bytes,16,rep,name=tags"`
	// Ports: items:Minimum, items:Maximum, items:ExclusiveMaximum, items:MultipleOf.
	//
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=65535
	// +kubebuilder:validation:items:ExclusiveMaximum=true
	// +listType=set
	Ports []int32 `json:"ports,omitempty" protobuf:"varint,17,rep,name=ports"`
	// Kinds: items:Enum.
	//
	// +kubebuilder:validation:items:Enum=a;b;c
	Kinds []string `json:"kinds,omitempty" protobuf:"bytes,18,rep,name=kinds"`
	// Emails: items:Format.
	//
	// +kubebuilder:validation:items:Format=email
	Emails []string `json:"emails,omitempty" protobuf:"bytes,19,rep,name=emails"`
	// Entries: a list map keyed by name.
	//
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=4
	Entries []Entry `json:"entries,omitempty" protobuf:"bytes,20,rep,name=entries"`
	// Routes: a list map with two keys.
	//
	// +listType=map
	// +listMapKey=host
	// +listMapKey=port
	Routes []Route `json:"routes,omitempty" protobuf:"bytes,21,rep,name=routes"`
	// Zones: a set.
	//
	// +listType=set
	Zones []string `json:"zones,omitempty" protobuf:"bytes,22,rep,name=zones"`

	// Labels: MinProperties, MaxProperties, a granular map.
	//
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=2
	// +mapType=granular
	Labels map[string]string `json:"labels,omitempty" protobuf:"bytes,23,rep,name=labels"`
	// Limits: an atomic map whose values have a Maximum.
	//
	// +mapType=atomic
	Limits map[string]Limit `json:"limits,omitempty" protobuf:"bytes,24,rep,name=limits"`
	// Window: an atomic struct.
	Window *Window `json:"window,omitempty" protobuf:"bytes,25,opt,name=window"`

	// Port: int-or-string.
	Port *intstr.IntOrString `json:"port,omitempty" protobuf:"bytes,26,opt,name=port"`
	// Comment: nullable.
	//
	// +nullable
	Comment *string `json:"comment,omitempty" protobuf:"bytes,27,opt,name=comment"`

	// Config: schemaless, any JSON object.
	//
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Config *runtime.RawExtension `json:"config,omitempty" protobuf:"bytes,28,opt,name=config"`
	// Extra: a typed object that keeps the fields it does not declare.
	Extra *Extra `json:"extra,omitempty" protobuf:"bytes,29,opt,name=extra"`
	// Template: an embedded Kubernetes object.
	//
	// +kubebuilder:validation:EmbeddedResource
	// +kubebuilder:pruning:PreserveUnknownFields
	Template *runtime.RawExtension `json:"template,omitempty" protobuf:"bytes,30,opt,name=template"`

	// Not named Size in Go: generated.pb.go gives every type a Size method.

	// Capacity (size) may only grow (a transition rule).
	//
	// +kubebuilder:validation:XValidation:rule="self >= oldSelf",message="size may only grow"
	Capacity *int32 `json:"size,omitempty" protobuf:"varint,31,opt,name=size"`
	// Class may not change once set (immutability).
	//
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="field is immutable"
	Class *string `json:"class,omitempty" protobuf:"bytes,32,opt,name=class"`
	// Generation may be set once, then only grow; optionalOldSelf lets the
	// rule see a create and an update that adds it.
	//
	// +kubebuilder:validation:XValidation:rule="!oldSelf.hasValue() || self >= oldSelf.value()",message="generation may not decrease",optionalOldSelf=true
	Generation *int64 `json:"generation,omitempty" protobuf:"varint,33,opt,name=generation"`
	// Choice: exactly one of its fields.
	Choice *Choice `json:"choice,omitempty" protobuf:"bytes,34,opt,name=choice"`
}

// Tier is an enum type.
//
// +kubebuilder:validation:Enum=gold;silver;bronze
type Tier string

// ShortName is a bounded string type.
//
// +kubebuilder:validation:MaxLength=4
type ShortName string

// Formats are strings in every format kube-apiserver's schema validation knows.
type Formats struct {
	// +kubebuilder:validation:Format=email
	Email *string `json:"email,omitempty" protobuf:"bytes,1,opt,name=email"`
	// +kubebuilder:validation:Format=uuid
	UUID *string `json:"uuid,omitempty" protobuf:"bytes,2,opt,name=uuid"`
	// +kubebuilder:validation:Format=hostname
	Hostname *string `json:"hostname,omitempty" protobuf:"bytes,3,opt,name=hostname"`
	// +kubebuilder:validation:Format=ipv4
	IPv4 *string `json:"ipv4,omitempty" protobuf:"bytes,4,opt,name=ipv4"`
	// +kubebuilder:validation:Format=ipv6
	IPv6 *string `json:"ipv6,omitempty" protobuf:"bytes,5,opt,name=ipv6"`
	// +kubebuilder:validation:Format=cidr
	CIDR *string `json:"cidr,omitempty" protobuf:"bytes,6,opt,name=cidr"`
	// +kubebuilder:validation:Format=mac
	MAC *string `json:"mac,omitempty" protobuf:"bytes,7,opt,name=mac"`
	// +kubebuilder:validation:Format=uri
	URI *string `json:"uri,omitempty" protobuf:"bytes,8,opt,name=uri"`
	// +kubebuilder:validation:Format=date
	Date *string `json:"date,omitempty" protobuf:"bytes,9,opt,name=date"`
	// +kubebuilder:validation:Format=date-time
	DateTime *string `json:"dateTime,omitempty" protobuf:"bytes,10,opt,name=dateTime"`
	// +kubebuilder:validation:Format=duration
	Duration *string `json:"duration,omitempty" protobuf:"bytes,11,opt,name=duration"`
	// +kubebuilder:validation:Format=byte
	Byte *string `json:"byte,omitempty" protobuf:"bytes,12,opt,name=byte"`
	// +kubebuilder:validation:Format=bsonobjectid
	ObjectID *string `json:"objectID,omitempty" protobuf:"bytes,13,opt,name=objectID"`
}

// Entry is an item of a list map keyed by name.
type Entry struct {
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MaxLength=8
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=1
	Weight *int32 `json:"weight,omitempty" protobuf:"varint,2,opt,name=weight"`
}

// Route is an item of a list map keyed by host and port.
type Route struct {
	// +kubebuilder:validation:Required
	Host string `json:"host" protobuf:"bytes,1,opt,name=host"`
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Minimum=1
	Port int32   `json:"port" protobuf:"varint,2,opt,name=port"`
	Path *string `json:"path,omitempty" protobuf:"bytes,3,opt,name=path"`
}

// Limit is a map value.
type Limit struct {
	// +kubebuilder:validation:Maximum=1000
	Max *int32 `json:"max,omitempty" protobuf:"varint,1,opt,name=max"`
}

// Window is replaced whole by server-side apply.
//
// +structType=atomic
type Window struct {
	// +kubebuilder:validation:Pattern=`^[0-9]{2}:[0-9]{2}$`
	Start *string `json:"start,omitempty" protobuf:"bytes,1,opt,name=start"`
	// +kubebuilder:validation:Pattern=`^[0-9]{2}:[0-9]{2}$`
	End *string `json:"end,omitempty" protobuf:"bytes,2,opt,name=end"`
}

// Extra is a typed object that keeps unknown fields.
//
// +kubebuilder:pruning:PreserveUnknownFields
type Extra struct {
	// +kubebuilder:validation:MaxLength=5
	Known *string `json:"known,omitempty" protobuf:"bytes,1,opt,name=known"`
}

// Choice holds exactly one of its fields.
//
// +kubebuilder:validation:ExactlyOneOf=a;b
// +kubebuilder:validation:AtMostOneOf=b;c
type Choice struct {
	A *string `json:"a,omitempty" protobuf:"bytes,1,opt,name=a"`
	B *string `json:"b,omitempty" protobuf:"bytes,2,opt,name=b"`
	C *string `json:"c,omitempty" protobuf:"bytes,3,opt,name=c"`
}

// WidgetStatus is written through the status subresource.
type WidgetStatus struct {
	// +kubebuilder:validation:Enum=Pending;Ready;Failed
	Phase *string `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase"`
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration *int64 `json:"observedGeneration,omitempty" protobuf:"varint,2,opt,name=observedGeneration"`
	// +kubebuilder:validation:XValidation:rule="self >= oldSelf",message="readyReplicas may only grow"
	ReadyReplicas *int32 `json:"readyReplicas,omitempty" protobuf:"varint,3,opt,name=readyReplicas"`
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" protobuf:"bytes,4,rep,name=conditions"`
}

// WidgetList is a list of Widgets.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []Widget `json:"items" protobuf:"bytes,2,rep,name=items"`
}
