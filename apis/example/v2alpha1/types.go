package v2alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Database is a managed database instance that a controller provisions in a Region.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:resource:shortName=db;dbs,categories=all
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:selectablefield:JSONPath=.spec.engine
// +kubebuilder:printcolumn:name=Engine,type=string,JSONPath=.spec.engine,description="The database engine."
// +kubebuilder:printcolumn:name=Version,type=string,JSONPath=.spec.engineVersion,description="The engine version."
// +kubebuilder:printcolumn:name=Replicas,type=integer,JSONPath=.spec.replicas,format=int32,description="The number of instances asked for."
// +kubebuilder:printcolumn:name=Backups,type=string,JSONPath=.spec.backupSchedule,description="When backups are taken."
// +kubebuilder:printcolumn:name=Phase,type=string,JSONPath=.status.phase,description="What the controller last observed."
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=.metadata.creationTimestamp
type Database struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the database the user asks for.
	Spec DatabaseSpec `json:"spec,omitempty"`
	// Status is what the controller observed; written only through the status subresource.
	Status DatabaseStatus `json:"status,omitempty"`
}

// DatabaseSpec is the desired state of a Database.
type DatabaseSpec struct {
	// Engine is the database engine: postgres, mysql or mariadb.
	//
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Enum=postgres;mysql;mariadb
	Engine string `json:"engine"`
	// EngineVersion is the engine version, for example "16.4" (v1's
	// spec.version).
	//
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)*$`
	EngineVersion string `json:"engineVersion,omitempty"`
	// Replicas is the number of instances to run, one primary and the rest read replicas.
	//
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=9
	// +kubebuilder:default=1
	Replicas int32 `json:"replicas,omitempty"`
	// StorageGiB is the size of each instance's volume in GiB. Volumes
	// cannot shrink, so it may only grow.
	//
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=10
	// +kubebuilder:validation:XValidation:rule="self >= oldSelf",message="storageGiB may only grow"
	StorageGiB int32 `json:"storageGiB,omitempty"`
	// Region is the name of the cluster-scoped Region the database runs in.
	Region string `json:"region,omitempty"`
	// BackupSchedule is when backups are taken, a cron expression such as
	// "0 3 * * *". v1 has no such field: a v1 object keeps it in the
	// annotation BackupScheduleAnnotation.
	//
	// +kubebuilder:validation:MaxLength=64
	BackupSchedule string `json:"backupSchedule,omitempty"`
	// Users are the accounts the controller creates, one per name.
	//
	// +listType=map
	// +listMapKey=name
	Users []DatabaseUser `json:"users,omitempty"`
	// Extensions are the engine extensions to install.
	//
	// +listType=set
	// +patchStrategy=merge
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=63
	Extensions []string `json:"extensions,omitempty" patchStrategy:"merge"`
}

// DatabaseUser is a database account.
type DatabaseUser struct {
	// Name is the account's name.
	//
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Privilege is what the account may do: read, write or admin.
	//
	// +kubebuilder:validation:Enum=read;write;admin
	// +kubebuilder:default=read
	Privilege string `json:"privilege,omitempty"`
	// Email is where the account's owner is told about it.
	//
	// +kubebuilder:validation:Format=email
	Email string `json:"email,omitempty"`
	// ConnectionLimit is the most connections the account may hold at once.
	//
	// +kubebuilder:validation:Minimum=1
	ConnectionLimit int32 `json:"connectionLimit,omitempty"`
}

// DatabaseStatus is the observed state of a Database.
type DatabaseStatus struct {
	// Phase is a one-word summary: Pending, Provisioning, Ready or Failed.
	//
	// +kubebuilder:validation:Enum=Pending;Provisioning;Ready;Failed
	Phase string `json:"phase,omitempty"`
	// Replicas is the number of instances that exist, ready or not.
	Replicas int32 `json:"replicas,omitempty"`
	// Selector selects the database's instances by label, serialized.
	Selector string `json:"selector,omitempty"`
	// ReadyReplicas is the number of instances accepting connections.
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// Endpoint is the host:port clients connect to, once ready.
	Endpoint string `json:"endpoint,omitempty"`
	// ObservedGeneration is the metadata.generation the controller last acted on.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are the standard condition list (Ready, Degraded, ...).
	//
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// DatabaseList is a list of Databases.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type DatabaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Database `json:"items"`
}
