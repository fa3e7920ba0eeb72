package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Good is a test case.
//
// +genclient
// +genclient:method=Backup,verb=create,subresource=backup,input=BackupRequest,result=BackupResult
// +genclient:method=GetConnection,verb=get,subresource=connection,result=Connection
// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s.io/api/autoscaling/v1.Scale
// +apiloom:stream:method=Logs,subresource=logs,input=LogOptions
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type Good struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

// GoodList is a list of Good.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type GoodList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Good `json:"items"`
}

// BadVerb is a test case.
//
// +genclient
// +genclient:method=PatchThing,verb=patch,subresource=thing
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type BadVerb struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

// BadVerbList is a list of BadVerb.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type BadVerbList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BadVerb `json:"items"`
}

// NotObject is a test case.
//
// +genclient
// +genclient:method=Poke,verb=create,subresource=poke,input=Plain,result=BackupResult
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type NotObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

// NotObjectList is a list of NotObject.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type NotObjectList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NotObject `json:"items"`
}

// StructOpts is a test case.
//
// +genclient
// +apiloom:stream:method=Logs,subresource=logs,input=StructOptions
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type StructOpts struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

// StructOptsList is a list of StructOpts.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type StructOptsList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StructOpts `json:"items"`
}

// Missing is a test case.
//
// +genclient
// +genclient:method=GetConnection,verb=get,subresource=connection,result=Connection
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type Missing struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

// MissingList is a list of Missing.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type MissingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Missing `json:"items"`
}

// Mistyped is a test case.
//
// +genclient
// +genclient:method=GetConnection,verb=get,subresource=connection,result=Connection
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type Mistyped struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

// MistypedList is a list of Mistyped.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type MistypedList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Mistyped `json:"items"`
}

// Misnamed is a test case.
//
// +genclient
// +genclient:method=GetConnection,verb=get,subresource=connection,result=Connection
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type Misnamed struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

// MisnamedList is a list of Misnamed.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type MisnamedList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Misnamed `json:"items"`
}

// BackupRequest is an action's input.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type BackupRequest struct {
	metav1.TypeMeta `json:",inline"`
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MaxLength=512
	Destination string `json:"destination"`
}

// BackupResult is an action's result.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type BackupResult struct {
	metav1.TypeMeta `json:",inline"`
	Name            string `json:"name"`
}

// Connection is a view's result.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type Connection struct {
	metav1.TypeMeta `json:",inline"`
	Endpoint        string `json:"endpoint"`
}

// LogOptions are a stream's options: every kind of field a query can
// carry.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type LogOptions struct {
	metav1.TypeMeta `json:",inline"`
	Follow          bool     `json:"follow,omitempty"`
	TailLines       *int64   `json:"tailLines,omitempty"`
	Container       string   `json:"container,omitempty"`
	Since           *string  `json:"since,omitempty"`
	Limit           uint32   `json:"limit,omitempty"`
	Filters         []string `json:"filters,omitempty"`
}

// StructOptions has a field no query string can carry.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type StructOptions struct {
	metav1.TypeMeta `json:",inline"`
	Follow          bool        `json:"follow,omitempty"`
	Since           metav1.Time `json:"since,omitempty"`
}

// Plain is not a runtime.Object, nor a kind to have a stream.
//
// +apiloom:stream:method=Logs,subresource=logs,input=LogOptions
type Plain struct {
	Name string `json:"name"`
}
