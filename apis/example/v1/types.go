package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Database is a managed database instance that a controller provisions in a Region.
//
// +genclient
// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s.io/api/autoscaling/v1.Scale
// +genclient:method=UpdateScale,verb=update,subresource=scale,input=k8s.io/api/autoscaling/v1.Scale,result=k8s.io/api/autoscaling/v1.Scale
// +genclient:method=Backup,verb=create,subresource=backup,input=BackupRequest,result=BackupResult
// +genclient:method=GetConnection,verb=get,subresource=connection,result=DatabaseConnection
// +apiloom:stream:method=Logs,subresource=logs,input=DatabaseLogOptions
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:resource:shortName=db;dbs,categories=all
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:selectablefield:JSONPath=.spec.engine
// +kubebuilder:selectablefield:JSONPath=.spec.region
// +kubebuilder:printcolumn:name=Engine,type=string,JSONPath=.spec.engine,description="The database engine."
// +kubebuilder:printcolumn:name=Version,type=string,JSONPath=.spec.version,description="The engine version."
// +kubebuilder:printcolumn:name=Replicas,type=integer,JSONPath=.spec.replicas,format=int32,description="The number of instances asked for."
// +kubebuilder:printcolumn:name=Phase,type=string,JSONPath=.status.phase,description="What the controller last observed."
// +kubebuilder:printcolumn:name=Region,type=string,JSONPath=.spec.region,priority=1,description="The Region the database runs in."
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
	// Version is the engine version, for example "16.4".
	//
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)*$`
	Version string `json:"version,omitempty" protobuf:"bytes,2,opt,name=version"`
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
	// Users are the accounts the controller creates, one per name. A
	// strategic merge patch (and kubectl apply) merges them by name.
	//
	// +listType=map
	// +listMapKey=name
	Users []DatabaseUser `json:"users,omitempty" protobuf:"bytes,6,rep,name=users"`
	// Extensions are the engine extensions to install, for example
	// "pg_stat_statements". A strategic merge patch adds to them, and
	// removes with $deleteFromPrimitiveList.
	//
	// +listType=set
	// +patchStrategy=merge
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=63
	Extensions []string `json:"extensions,omitempty" patchStrategy:"merge" protobuf:"bytes,7,rep,name=extensions"`
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
	// Replicas is the number of instances that exist, ready or not; the
	// scale subresource reports it.
	Replicas int32 `json:"replicas,omitempty" protobuf:"varint,2,opt,name=replicas"`
	// Selector selects the database's instances by label, serialized
	// ("app=orders"); the scale subresource reports it, so an autoscaler
	// can find them.
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
	// subresource, newest last; the oldest go once there are ten.
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

// BackupRequest asks for a backup of a Database: the body of a POST to
// .../databases/NAME/backup.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type BackupRequest struct {
	metav1.TypeMeta `json:",inline"`

	// Destination is where the backup is written: an s3://, gs:// or
	// file:// URL.
	//
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^(s3|gs|file)://.+`
	Destination string `json:"destination" protobuf:"bytes,1,opt,name=destination"`
	// Name names the backup within its Database; the time it is asked
	// for when empty.
	//
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name,omitempty" protobuf:"bytes,2,opt,name=name"`
}

// BackupResult is the answer to a BackupRequest: the backup as the
// Database's status now records it.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type BackupResult struct {
	metav1.TypeMeta `json:",inline"`

	// Backup is the backup recorded.
	Backup DatabaseBackup `json:"backup" protobuf:"bytes,1,opt,name=backup"`
	// DatabaseResourceVersion is the Database's resourceVersion once the
	// backup is recorded in its status (empty on a dry run).
	DatabaseResourceVersion string `json:"databaseResourceVersion,omitempty" protobuf:"bytes,2,opt,name=databaseResourceVersion"`
}

// DatabaseConnection is how a client connects to a Database, computed
// from it and its Region: the answer to a GET of
// .../databases/NAME/connection.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type DatabaseConnection struct {
	metav1.TypeMeta `json:",inline"`

	// Ready is true once the database accepts connections.
	Ready bool `json:"ready" protobuf:"varint,1,opt,name=ready"`
	// Endpoint is the host:port to connect to, once ready.
	Endpoint string `json:"endpoint,omitempty" protobuf:"bytes,2,opt,name=endpoint"`
	// URIs are a connection URI per user, without passwords
	// ("postgres://alice@host:5432/orders").
	URIs []string `json:"uris,omitempty" protobuf:"bytes,3,rep,name=uris"`
	// Region is the display name of the database's Region, or its name
	// when it has none; empty when the Region does not exist.
	Region string `json:"region,omitempty" protobuf:"bytes,4,opt,name=region"`
	// Zones are the zones of that Region.
	Zones []string `json:"zones,omitempty" protobuf:"bytes,5,rep,name=zones"`
}

// DatabaseLogOptions are the query parameters of a GET of
// .../databases/NAME/logs, a Database's log as pods/log is a Pod's: the
// Events about it, one line each.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type DatabaseLogOptions struct {
	metav1.TypeMeta `json:",inline"`

	// Follow keeps the stream open, writing each new line as it happens.
	Follow bool `json:"follow,omitempty" protobuf:"varint,1,opt,name=follow"`
	// TailLines is how many of the latest lines to start with; all when
	// unset.
	TailLines *int64 `json:"tailLines,omitempty" protobuf:"varint,2,opt,name=tailLines"`
	// Timestamps starts each line with its time (RFC 3339).
	Timestamps bool `json:"timestamps,omitempty" protobuf:"varint,3,opt,name=timestamps"`
}

// DatabaseList is a list of Databases.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type DatabaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []Database `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// Region is a cluster-scoped location where databases can be placed.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:resource:scope=Cluster,shortName=rg
// +kubebuilder:printcolumn:name=Provider,type=string,JSONPath=.spec.provider,description="The infrastructure provider."
// +kubebuilder:printcolumn:name="Display Name",type=string,JSONPath=.spec.displayName,description="The human-readable name."
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=.metadata.creationTimestamp
type Region struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec describes the region.
	Spec RegionSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
}

// RegionSpec describes a Region.
type RegionSpec struct {
	// DisplayName is the human-readable name, for example "Frankfurt".
	DisplayName string `json:"displayName,omitempty" protobuf:"bytes,1,opt,name=displayName"`
	// Provider is the infrastructure provider: aws, gcp, azure or on-prem.
	//
	// +kubebuilder:validation:Enum=aws;gcp;azure;on-prem
	Provider string `json:"provider,omitempty" protobuf:"bytes,2,opt,name=provider"`
	// Zones are the availability zones databases may be spread over.
	//
	// +listType=set
	Zones []string `json:"zones,omitempty" protobuf:"bytes,3,rep,name=zones"`
}

// RegionList is a list of Regions.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type RegionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []Region `json:"items" protobuf:"bytes,2,rep,name=items"`
}
