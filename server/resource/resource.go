package resource

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiloom/apiloom/server/hook"
)

// Object is what every served type is: a runtime.Object with ObjectMeta.
// Type parameters constrained by it are pointer types such as *v1.Database.
type Object interface {
	runtime.Object
	metav1.Object
}

// Info is the type-independent description of a resource, enough for
// discovery, OpenAPI, routing and error messages.
type Info struct {
	Group    string // "example.apiloom.dev"
	Version  string // "v1"
	Kind     string // "Database"
	ListKind string // "DatabaseList"
	Plural   string // "databases": the URL segment and discovery name
	Singular string // "database"

	// Namespaced is false for cluster-scoped resources.
	Namespaced bool
	// ShortNames and Categories come from +kubebuilder:resource and drive
	// kubectl aliases and `kubectl get all`.
	ShortNames []string
	Categories []string
	// HasStatus is true when the type has a status subresource: main writes
	// ignore .status and /status writes change only .status.
	HasStatus bool
	// SelectableFields are the field-selector keys beyond metadata.name and
	// metadata.namespace, from +kubebuilder:selectablefield.
	SelectableFields []string
	// PrintColumns are the Table columns after the name, in order, from
	// +kubebuilder:printcolumn, as a CRD's additionalPrinterColumns. Empty
	// means the default columns, name and age. Each must pass Validate.
	PrintColumns []PrintColumn
	// OpenAPIName is the key openapi-gen gives the type's definition, e.g.
	// "github.com/apiloom/apiloom/apis/example/v1.Database".
	OpenAPIName string
	// Schema is the kind's structural schema: the JSON of an
	// apiextensions.k8s.io/v1 JSONSchemaProps, what controller-gen writes
	// as a CRD version's openAPIV3Schema for the same Go type and markers.
	// The server defaults and validates writes by it (OpenAPI constraints,
	// CEL rules, ratcheting) as kube-apiserver does for a CRD, and
	// publishes its constraints in OpenAPI. Empty: the kind has none yet.
	Schema string
	// Scale is the kind's scale subresource, from
	// +kubebuilder:subresource:scale; nil when it has none.
	Scale *ScaleInfo
	// StorageVersion is the version objects of this kind are stored in,
	// from +kubebuilder:storageversion, when the kind has several versions
	// and it is not this one: the resource is then registered with a
	// Conversion to it (registry.RegisterConverted). Empty: objects are
	// stored in this version.
	StorageVersion string
	// StorageAPIVersion is the apiVersion of the storage version when it
	// is in another API group than the resource's own ("v1" for the core
	// group): events.k8s.io/v1 Event is stored as core/v1 Event, as
	// kube-apiserver stores it, and StorageVersion is then the version
	// part of it. Empty: the storage version is in Group.
	StorageAPIVersion string
	// TTL, when positive, is how long an object lives after its last
	// write: its etcd key carries a lease that deletes it then, as
	// kube-apiserver expires Events (--event-ttl, which overrides it for
	// core/v1 events). Zero: objects live until deleted.
	TTL time.Duration
	// BuiltIn is true for a kind served from the upstream Go types of
	// k8s.io/api (a Namespace, a ConfigMap, ...), described to the
	// generator by builtin/apis.yaml rather than by markers; the server's
	// --builtin-apis flag chooses which of them are served.
	BuiltIn bool
	// HasFinalize is true when the kind has a finalize subresource
	// (Definition.Finalize), as a Namespace's namespaces/finalize.
	HasFinalize bool
	// Strategy is what kube-apiserver's registry strategy for the kind
	// decides beyond validation and defaults; the zero value is a custom
	// resource's (the CRD strategy's).
	Strategy Strategy
	// CreateOnly is true for a kind that is never stored, a review such as
	// authorization.k8s.io/v1 SelfSubjectAccessReview (package
	// server/reviews): it serves only create, on its collection, and has
	// no list kind, no status subresource and no storage version.
	CreateOnly bool
	// Subresources are subresources served by a handler of their own, not
	// by the kind's generic REST handler (a ServiceAccount's token):
	// discovery lists them; the server routes them.
	Subresources []SubresourceInfo
}

// SubresourceInfo is what discovery says of a subresource with a handler
// of its own.
type SubresourceInfo struct {
	// Name is the path segment after the object's name ("token").
	Name string
	// Kind is the kind it reads and answers (authentication.k8s.io/v1
	// TokenRequest).
	Kind metav1.GroupVersionKind
	// Verbs are the verbs it serves (create).
	Verbs []string
	// Type is what a kind's own subresource does (Definition.Custom);
	// "" for one the server serves itself (a ServiceAccount's token).
	Type SubresourceType
	// InputOpenAPIName and ResultOpenAPIName are the OpenAPI definitions
	// of what a custom subresource reads (an action's body, a stream's
	// query options) and answers (an action's or a view's result); ""
	// for none.
	InputOpenAPIName, ResultOpenAPIName string
}

// Strategy holds the facts of a kind that kube-apiserver's registry
// strategy for it states in code (pkg/registry/<group>/<kind>/strategy.go
// for a built-in kind, the CRD strategy for a custom resource), and that
// clients observe: Helm, for one, updates its release records without a
// resourceVersion. Each is false for a custom resource; a built-in kind
// states its own in builtin/apis.yaml, checked against a real
// kube-apiserver by test/builtinconf.
type Strategy struct {
	// UnconditionalUpdate is the strategy's AllowUnconditionalUpdate: an
	// update (PUT, of the object or a subresource) without
	// metadata.resourceVersion writes over whatever is stored, retried on
	// a concurrent write. False: such an update is 422 Invalid
	// ("metadata.resourceVersion: must be specified for an update").
	UnconditionalUpdate bool
	// UntrackedGeneration is true when the strategy leaves
	// metadata.generation alone: a create stores what the client sent, an
	// update keeps the stored value, and nothing moves it but a graceful
	// deletion of an object whose generation is set (kube-apiserver's
	// rest.BeforeUpdate and BeforeDelete, for every kind). False: 1 on
	// create and one more on every change of anything but metadata and
	// status, as a CR's.
	UntrackedGeneration bool
	// StatusUpdatesMetadata is true when a write to the status subresource
	// also stores the metadata it carries (labels, annotations, ...): the
	// status strategy resets only the spec, as a Namespace's does. False:
	// a status write changes only status, as a CR's.
	StatusUpdatesMetadata bool
	// DeleteAnswersStatus is true when a DELETE that removes the object
	// answers a Status (Success, its details naming the object) rather
	// than the object: kube-apiserver's registry store for the kind leaves
	// ReturnDeletedObject off, as every built-in kind's but a Namespace's
	// does. False: the deleted object, as for a CR. A DELETE that only
	// marks the object (finalizers) answers the object either way.
	DeleteAnswersStatus bool
}

// ListItemsTyped reports whether the items of a list of the resource carry
// their kind and apiVersion. kube-apiserver encodes a built-in kind's list
// from its typed items, whose kind and apiVersion are empty (the list
// states them once); a custom resource's items are unstructured objects
// that carry theirs. A single object (a GET, a watch event) always does.
func (i *Info) ListItemsTyped() bool { return !i.BuiltIn }

// Stored reports whether objects of this version are stored as they are
// (it is the storage version, or the kind has only this one).
func (i *Info) Stored() bool {
	return i.StorageAPIVersion == "" && (i.StorageVersion == "" || i.StorageVersion == i.Version)
}

// StorageGroupVersion is the group-version objects of the resource are
// stored in: its own, or StorageVersion in Group or in StorageAPIVersion's
// group.
func (i *Info) StorageGroupVersion() schema.GroupVersion {
	switch {
	case i.StorageAPIVersion != "":
		gv, err := schema.ParseGroupVersion(i.StorageAPIVersion)
		if err == nil {
			return gv
		}
	case i.StorageVersion != "":
		return schema.GroupVersion{Group: i.Group, Version: i.StorageVersion}
	}
	return i.GroupVersion()
}

// Conversion converts the objects of one version of a kind (O) to and from
// the version the kind is stored in (S), the functions conversion-gen
// generates or the user writes beside the types. The server keeps one key
// per object in the storage version; every read, write, list and watch of
// O converts. A conversion must not change its input (which may be shared)
// nor keep any of it that the output may later change: the server copies
// the output before changing it.
type Conversion[O, S Object] struct {
	// Storage is the definition of the storage version.
	Storage *Definition[S]
	// ToStorage sets out to in, converted.
	ToStorage func(in O, out S) error
	// FromStorage sets out to in, converted.
	FromStorage func(in S, out O) error
	// FieldLabels maps O's field-selector keys to the storage version's,
	// where they differ (events.k8s.io/v1 Event's regarding.kind is core/v1
	// Event's involvedObject.kind): selectors are evaluated on stored
	// objects. A key not in the map is the same in both.
	FieldLabels map[string]string
}

// ScaleInfo says where the fields of a kind's scale subresource
// (.../{name}/scale, an autoscaling/v1 Scale) live in its objects, as a
// CRD's subresources.scale does. Each path is a simple JSONPath of field
// names (".spec.replicas"); the generator checks that it names a field of
// the right type before it emits one.
type ScaleInfo struct {
	// SpecReplicasPath is the integer field under .spec the Scale's
	// spec.replicas reads and writes.
	SpecReplicasPath string
	// StatusReplicasPath is the integer field under .status the Scale's
	// status.replicas reads.
	StatusReplicasPath string
	// LabelSelectorPath is the string field under .spec or .status the
	// Scale's status.selector reads (a serialized label selector); empty
	// when the kind has none.
	LabelSelectorPath string
}

// GroupVersion is the resource's API group and version.
func (i *Info) GroupVersion() schema.GroupVersion {
	return schema.GroupVersion{Group: i.Group, Version: i.Version}
}

// PathPrefix is the URL path the resource's group-version is served under:
// /api/v1 for the core (legacy, "") group, as kube-apiserver serves it,
// /apis/{group}/{version} for every other group.
func (i *Info) PathPrefix() string { return GroupVersionPath(i.GroupVersion()) }

// GroupVersionPath is the URL path gv is served under (Info.PathPrefix).
func GroupVersionPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "/api/" + gv.Version
	}
	return "/apis/" + gv.Group + "/" + gv.Version
}

// GroupVersionKind is the kind every served object carries.
func (i *Info) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: i.Group, Version: i.Version, Kind: i.Kind}
}

// GroupVersionResource names the resource in URLs.
func (i *Info) GroupVersionResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: i.Group, Version: i.Version, Resource: i.Plural}
}

// GroupResource is what API errors name ("databases.example.apiloom.dev").
func (i *Info) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: i.Group, Resource: i.Plural}
}

// Definition is a resource's Info plus the per-type functions the generic
// server calls. Generated code fills every field; none may be nil.
type Definition[O Object] struct {
	Info

	// New returns a new, empty object.
	New func() O
	// Fields returns the object's selectable fields as field-selector keys,
	// always including metadata.name and metadata.namespace.
	Fields func(obj O) fields.Set
	// CopyStatus sets dst's status to src's. For types without a status
	// subresource it does nothing.
	CopyStatus func(dst, src O)
	// SpecEqual reports whether a and b agree on everything but metadata and
	// status; a write that changes it bumps metadata.generation.
	SpecEqual func(a, b O) bool

	// Validate, optional, returns what is wrong with obj, the object a
	// create (old nil) or an update (old the stored object) would store,
	// beyond the metadata rules and the schema: the upstream validation of a
	// built-in kind, which has no schema (its rules are Go code in
	// kube-apiserver). Every write path calls it through the admission
	// pipeline, after the metadata rules and before storage; violations
	// are one 422 Invalid with a cause each. It must not change obj or old.
	Validate func(obj, old O) field.ErrorList

	// Default, optional, sets the defaults of a built-in kind on obj, a
	// write's object as decoded (kube-apiserver's SetDefaults_ functions
	// and the conversions it decodes through: a Secret's type Opaque). Every
	// write path calls it where the request's object is decoded, a patch
	// or an apply merged, before managed fields are tracked, so defaulted
	// fields count as set by the writer.
	Default func(obj O)
	// Prepare, optional, sets the fields the server owns on obj, the
	// object a create (old nil) or an update of the main resource (old the
	// stored object) stores, after the generic metadata rules and before
	// validation: kube-apiserver's strategy PrepareForCreate and
	// PrepareForUpdate (a Namespace starts Active with the "kubernetes"
	// finalizer, and keeps its spec.finalizers on update). It must not
	// change old.
	Prepare func(obj, old O)
	// ValidateName, optional, is the kind's rule for object names and
	// generateName prefixes, in place of the DNS-subdomain rule of
	// metadata validation: the RBAC kinds accept any name that can be a
	// URL path segment ("system:basic-user"), as kube-apiserver does.
	ValidateName func(name string, prefix bool) []string
	// ValidateStatus, optional, returns what is wrong with obj, the object
	// a write to the status subresource would store over old, the stored
	// object, beyond the metadata rules: kube-apiserver's status strategy
	// ValidateUpdate of a built-in kind (a Namespace's phase agrees with
	// its deletionTimestamp). Validate is not called on status writes, as
	// upstream's status strategies do not call it. Violations join the
	// metadata's in one 422 Invalid. It must not change obj or old.
	ValidateStatus func(obj, old O) field.ErrorList
	// Finalize, optional, is the kind's own deletion lifecycle and its
	// finalize subresource (lifecycle.go); Info.HasFinalize says it is set.
	Finalize *Finalize[O]

	// Hooks, optional, are the kind's own logic in Go (package
	// server/hook): defaulting, mutation before storage, validation of
	// creates, updates and deletes, and warnings, wired by apiserver-gen
	// from the kind's type in hooks/<group>/<version>.
	Hooks *hook.Hooks[O]

	// Custom, optional, are the kind's own subresources (subresource.go),
	// each also described in Info.Subresources; apiserver-gen wires them
	// from the kind's +genclient:method markers and hooks.
	Custom []Custom[O]

	// Printer, optional, renders the kind's Table in place of the name
	// and PrintColumns: a built-in kind whose kube-apiserver printer
	// computes its cells (core/v1 Event's "Object" is kind/name).
	Printer *Printer[O]
}

// Printer is a kind's own Table: its columns and the cells of one
// object, one per column, with ages measured to now.
type Printer[O Object] struct {
	Columns []metav1.TableColumnDefinition
	Cells   func(obj O, now time.Time) []any
}

// ObjectFields is the field set every resource supports; generated Fields
// functions start from it.
func ObjectFields(obj metav1.Object, namespaced bool) fields.Set {
	s := fields.Set{"metadata.name": obj.GetName()}
	if namespaced {
		s["metadata.namespace"] = obj.GetNamespace()
	}
	return s
}
