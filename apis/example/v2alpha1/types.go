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
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is the database the user asks for.
	Spec DatabaseSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	// Status is what the controller observed; written only through the status subresource.
	Status DatabaseStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// DatabaseSpec is the desired state of a Database.
type DatabaseSpec struct {
	// Engine is the database engine: postgres, mysql or mariadb.
	//
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Enum=postgres;mysql;mariadb
	Engine string `json:"engine" protobuf:"bytes,1,opt,name=engine"`
	// EngineVersion is the engine version, for example "16.4" (v1's
	// spec.version).
	//
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)*$`
	EngineVersion string `json:"engineVersion,omitempty" protobuf:"bytes,2,opt,name=engineVersion"`
	// Replicas is the number of instances to run, one primary and the rest read replicas.
	//
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=9
	// +kubebuilder:default=1
	Replicas int32 `json:"replicas,omitempty" protobuf:"varint,3,opt,name=replicas"`
	// StorageGiB is the size of each instance's volume in GiB. Volumes
	// cannot shrink, so it may only grow.
	//
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=10
	// +kubebuilder:validation:XValidation:rule="self >= oldSelf",message="storageGiB may only grow"
	StorageGiB int32 `json:"storageGiB,omitempty" protobuf:"varint,4,opt,name=storageGiB"`
	// Region is the name of the cluster-scoped Region the database runs in.
	Region string `json:"region,omitempty" protobuf:"bytes,5,opt,name=region"`
	// BackupSchedule is when backups are taken, a cron expression such as
	// "0 3 * * *". v1 has no such field: a v1 object keeps it in the
	// annotation BackupScheduleAnnotation.
	//
	// +kubebuilder:validation:MaxLength=64
	BackupSchedule string `json:"backupSchedule,omitempty" protobuf:"bytes,6,opt,name=backupSchedule"`
	// Users are the accounts the controller creates, one per name.
	//
	// +listType=map
	// +listMapKey=name
	Users []DatabaseUser `json:"users,omitempty" protobuf:"bytes,7,rep,name=users"`
	// Extensions are the engine extensions to install.
	//
	// +listType=set
	// +patchStrategy=merge
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=63
	Extensions []string `json:"extensions,omitempty" patchStrategy:"merge" protobuf:"bytes,8,rep,name=extensions"`
}

// DatabaseUser is a database account.
type DatabaseUser struct {
	// Name is the account's name.
	//
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Privilege is what the account may do: read, write or admin.
	//
	// +kubebuilder:validation:Enum=read;write;admin
	// +kubebuilder:default=read
	Privilege string `json:"privilege,omitempty" protobuf:"bytes,2,opt,name=privilege"`
	// Email is where the account's owner is told about it.
	//
	// +kubebuilder:validation:Format=email
	Email string `json:"email,omitempty" protobuf:"bytes,3,opt,name=email"`
	// ConnectionLimit is the most connections the account may hold at once.
	//
	// +kubebuilder:validation:Minimum=1
	ConnectionLimit int32 `json:"connectionLimit,omitempty" protobuf:"varint,4,opt,name=connectionLimit"`
}

// DatabaseStatus is the observed state of a Database.
type DatabaseStatus struct {
	// Phase is a one-word summary: Pending, Provisioning, Ready or Failed.
	//
	// +kubebuilder:validation:Enum=Pending;Provisioning;Ready;Failed
	Phase string `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase"`
	// Replicas is the number of instances that exist, ready or not.
	Replicas int32 `json:"replicas,omitempty" protobuf:"varint,2,opt,name=replicas"`
	// Selector selects the database's instances by label, serialized.
	Selector string `json:"selector,omitempty" protobuf:"bytes,3,opt,name=selector"`
	// ReadyReplicas is the number of instances accepting connections.
	ReadyReplicas int32 `json:"readyReplicas,omitempty" protobuf:"varint,4,opt,name=readyReplicas"`
	// Endpoint is the host:port clients connect to, once ready.
	Endpoint string `json:"endpoint,omitempty" protobuf:"bytes,5,opt,name=endpoint"`
	// ObservedGeneration is the metadata.generation the controller last acted on.
	ObservedGeneration int64 `json:"observedGeneration,omitempty" protobuf:"varint,6,opt,name=observedGeneration"`
	// Conditions are the standard condition list (Ready, Degraded, ...).
	//
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" protobuf:"bytes,7,rep,name=conditions"`
	// Backups are the latest backups asked for through the backup
	// subresource of v1, newest last; the oldest go once there are ten.
	//
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=10
	Backups []DatabaseBackup `json:"backups,omitempty" protobuf:"bytes,8,rep,name=backups"`
}

// DatabaseBackup is one backup of a Database.
type DatabaseBackup struct {
	// Name names the backup within its Database.
	//
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Destination is where the backup is written.
	Destination string `json:"destination,omitempty" protobuf:"bytes,2,opt,name=destination"`
	// RequestedAt is when the backup was asked for.
	RequestedAt metav1.Time `json:"requestedAt,omitempty" protobuf:"bytes,3,opt,name=requestedAt"`
	// RequestedBy is the user who asked for it.
	RequestedBy string `json:"requestedBy,omitempty" protobuf:"bytes,4,opt,name=requestedBy"`
}

// DatabaseList is a list of Databases.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type DatabaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []Database `json:"items" protobuf:"bytes,2,rep,name=items"`
}
