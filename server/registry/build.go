package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	k8sadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/apiloom/apiloom/server/admission"
	"github.com/apiloom/apiloom/server/admission/nslifecycle"
	"github.com/apiloom/apiloom/server/admission/rbacescalation"
	"github.com/apiloom/apiloom/server/admission/schemacheck"
	"github.com/apiloom/apiloom/server/cache"
	"github.com/apiloom/apiloom/server/convert"
	"github.com/apiloom/apiloom/server/discovery"
	"github.com/apiloom/apiloom/server/endpoints"
	"github.com/apiloom/apiloom/server/endpoints/patch"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/hook"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// Backend is what every resource's storage is built on.
type Backend struct {
	Client *clientv3.Client
	// Prefix is the etcd key prefix all resources live under ("/registry").
	Prefix string
	// WatchCache puts a watch cache in front of each resource's etcd store.
	WatchCache bool
	// Metrics receives storage and cache metrics; may be nil.
	Metrics prometheus.Registerer
	Log     *slog.Logger
	// MaxRequestBytes is the largest request etcd accepts
	// (storage.DefaultMaxRequestBytes when 0).
	MaxRequestBytes int
	// Limits bound each resource's requests (request.DefaultLimits when
	// nil).
	Limits *request.Limits
	// TTL overrides the resource.Info.TTL of the resources it names
	// (--event-ttl for core events); 0 keeps their objects until deleted.
	TTL map[schema.GroupResource]time.Duration
	// LeaseReuse is how long objects that expire share a lease
	// (storage.WithTTL); negative: storage.DefaultLeaseReuse.
	LeaseReuse time.Duration
	// HookTimeout bounds each point of a request's hooks
	// (--hook-timeout); hook.DefaultTimeout when 0.
	HookTimeout time.Duration
	// MaxSubresourceStreams bounds the calls of each stream subresource
	// of each kind running at once (--max-subresource-streams,
	// endpoints.WithMaxStreams); endpoints.DefaultMaxStreams when 0.
	MaxSubresourceStreams int
	// Authorizer decides what a request needs beyond its own verb (the
	// unsafe delete's extra verb, endpoints.WithAuthorizer); without one
	// such requests are refused.
	Authorizer authorizer.Authorizer
	// RBAC, when set, resolves users' permissions for the escalation
	// prevention of the RBAC kinds (package rbacescalation), which their
	// writes then pass; nil: they are not checked (--authorization-mode
	// AlwaysAllow, where anyone may do anything anyway).
	RBAC rbacescalation.Resolver
	// Namespaces, when set, is the namespace lifecycle admission of every
	// write in place of the one over the served Namespaces: an aggregated
	// server's, which asks the host cluster (upstream's NamespaceLifecycle
	// on an informer of the host's namespaces).
	Namespaces k8sadmission.MutationInterface
	// Dynamic are the policies and webhooks every write passes
	// (server/admission/dynamic); none when empty.
	Dynamic admission.Dynamic
	// VerifyCreates reads every create back before acknowledging it
	// (storage.WithVerifiedCreates), on backends that may acknowledge a
	// create they did not store (kine).
	VerifyCreates bool
	// Encryption, when set, is each resource's encryption at rest
	// (storage.WithTransformer).
	Encryption func(schema.GroupResource) storage.Option
}

// encryption is the store option that encrypts gr's values, if any.
func (b *Backend) encryption(gr schema.GroupResource) storage.Option {
	if b.Encryption == nil {
		return storage.WithTransformer(nil)
	}
	return b.Encryption(gr)
}

// ttl is how long the objects of info live after their last write.
func (b *Backend) ttl(info *resource.Info) time.Duration {
	if d, ok := b.TTL[info.GroupResource()]; ok {
		return d
	}
	return info.TTL
}

// Served is the built form of a registry: one handler per resource and
// what must be stopped when the server ends.
type Served struct {
	Resources []endpoints.Resource
	closers   []func()
	readies   []func() bool
	// stored is used while building only.
	stored storedBy
	// byType is every served kind's storage by Go type (storage.go).
	byType servedStorages
}

// Close stops every resource's storage, in reverse order of construction.
func (s *Served) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// Ready reports whether every resource can serve reads.
func (s *Served) Ready() bool {
	for _, ready := range s.readies {
		if !ready() {
			return false
		}
	}
	return true
}

// shared is what every resource of a registry is built with, made once
// per Build.
type shared struct {
	// tc is the type converter of every kind: how the field manager sees
	// objects when it keeps managed fields and merges applies.
	tc managedfields.TypeConverter
	// schemas are the OpenAPI definitions strategic merge patch reads.
	schemas *patch.Schemas
	// versions are the versions of each kind and the conversion between
	// them, with which the field manager compares a write with the fields
	// managers own in other versions.
	versions map[schema.GroupKind]*convert.Versions
	// namespaces admits writes by their namespace's lifecycle; nil when
	// namespaces are not served (namespaces.go).
	namespaces *nslifecycle.Lifecycle
	// readers are every served kind's, for hooks (hookreaders.go).
	readers hookReaders
	// writers are every served kind's, for actions (endpoints.Writers).
	writers *endpoints.Writers
	// admission is the server's admission chain, every resource's.
	admission *admission.Chain
}

// builder builds one resource's storage and handler on a backend.
type builder func(ctx context.Context, b Backend, sh shared, out *Served) error

// storedBy is what Build knows of the storages it built: by the Info of
// each stored version, its storage.Interface[O] (the etcd store or the
// watch cache), which the versions converted to it are served over.
type storedBy map[*resource.Info]any

// buildConverted builds the resource of def over the storage that the
// storage version's builder built, which must come first.
func buildConverted[O, S resource.Object](def *resource.Definition[O], conv resource.Conversion[O, S]) builder {
	return func(ctx context.Context, b Backend, sh shared, out *Served) error {
		inner, ok := out.stored[&conv.Storage.Info].(storage.Interface[S])
		if !ok {
			return fmt.Errorf("%w: %s", ErrNoStorageVersion, conv.Storage.GroupVersionResource())
		}
		if def.Hooks == nil && conv.Storage.Hooks != nil {
			// The kind's hooks, written for its storage version, hold
			// through this version too.
			d := *def
			d.Hooks = hook.Converted(conv.Storage.Hooks, conv.Storage.New, conv.ToStorage, conv.FromStorage)
			def = &d
		}
		return serve(ctx, b, sh, out, def, storage.Interface[O](convert.New(inner, def, conv)))
	}
}

// ErrNoStorageVersion is returned by Build when a version is registered
// converted to a storage version that is not registered.
var ErrNoStorageVersion = errors.New("registry: storage version not registered")

func buildFor[O resource.Object](def *resource.Definition[O]) builder {
	return func(ctx context.Context, b Backend, sh shared, out *Served) error {
		probe := def.New()
		probe.GetObjectKind().SetGroupVersionKind(def.GroupVersionKind())
		if _, err := sh.tc.ObjectToTyped(probe); err != nil {
			return fmt.Errorf("%w: %w", ErrNoSchema, err)
		}
		var log *slog.Logger
		if b.Log != nil {
			log = b.Log.With("resource", def.GroupResource().String())
		}
		storeOpts := []storage.Option{storage.WithLogger(log), storage.WithMetrics(b.Metrics), storage.WithMaxRequestBytes(b.MaxRequestBytes),
			storage.WithTTL(b.ttl(&def.Info), b.LeaseReuse), storage.WithVerifiedCreates(b.VerifyCreates), b.encryption(def.GroupResource())}
		if v := sh.versions[storedKind(&def.Info)]; v != nil && len(v.Infos()) > 1 {
			// Values stored before the kind's storage version changed
			// are in another of its versions.
			storeOpts = append(storeOpts, storage.WithForeignDecoder(v.DecodeStored))
		}
		store := storage.New(b.Client, storage.ResourcePrefix(b.Prefix, &def.Info), def, storeOpts...)
		var iface storage.Interface[O] = store
		if b.WatchCache {
			opts := []cache.Option{}
			if log != nil {
				opts = append(opts, cache.WithLogger(log))
			}
			if b.Metrics != nil {
				opts = append(opts, cache.WithMetrics(b.Metrics))
			}
			c, err := cache.New(def, store, opts...)
			if err != nil {
				return err
			}
			out.closers = append(out.closers, c.Close)
			out.readies = append(out.readies, c.Ready)
			iface = c
		}
		if out.stored == nil {
			out.stored = storedBy{}
		}
		out.stored[&def.Info] = iface
		sh.bindNamespaces(iface)
		return serve(ctx, b, sh, out, def, iface)
	}
}

// serve adds the handler of def, over iface, to out.
func serve[O resource.Object](ctx context.Context, b Backend, sh shared, out *Served, def *resource.Definition[O], iface storage.Interface[O]) error {
	check, err := schemacheck.New(ctx, &def.Info)
	if err != nil {
		return err
	}
	opts := []endpoints.Option{endpoints.WithTypeConverter(sh.tc), endpoints.WithSchemas(sh.schemas), endpoints.WithSchemaCheck(check)}
	if v := sh.versions[storedKind(&def.Info)]; v != nil {
		opts = append(opts, endpoints.WithVersions(v))
	}
	if b.Limits != nil {
		opts = append(opts, endpoints.WithLimits(*b.Limits))
	}
	if sh.admission != nil {
		opts = append(opts, endpoints.WithAdmission(sh.admission))
	}
	if b.Authorizer != nil {
		opts = append(opts, endpoints.WithAuthorizer(b.Authorizer))
	}
	addHookReader(sh.readers, def, iface)
	addStorage(out, iface)
	opts = append(opts, endpoints.WithHooks(sh.readers, b.HookTimeout), endpoints.WithWriters(sh.writers), endpoints.WithMaxStreams(b.MaxSubresourceStreams))
	out.Resources = append(out.Resources, endpoints.NewResource(def, iface, opts...))
	return nil
}

// admissionChain is the server's admission chain (admission.New), with
// the namespace lifecycle when there is one (namespaces served, or the
// host's) and RBAC's escalation prevention when the server has a
// resolver.
func admissionChain(namespaces k8sadmission.MutationInterface, rbac rbacescalation.Resolver, dynamic admission.Dynamic) *admission.Chain {
	p := admission.ServerPlugins{Dynamic: dynamic}
	if namespaces != nil {
		p.NamespaceLifecycle = namespaces
	}
	if rbac != nil {
		p.RBACEscalation = rbacescalation.Plugin{Resolver: rbac}
	}
	return admission.New(p)
}

// Build constructs storage and handlers for every registered resource. On
// error, whatever was built is closed again.
//
// The resources share one type converter, built here once from the OpenAPI
// schemas of every kind (discovery.Models), as kube-apiserver builds its
// own: it is how the field manager of each resource sees objects when it
// keeps their managed fields and merges server-side applies. Build fails
// with ErrNoSchema when a kind has no OpenAPI schema, and with an error
// wrapping schemacheck.ErrInvalidSchema when a kind's Schema is one
// kube-apiserver would refuse in a CRD (not structural, a CEL rule that does
// not compile or costs too much, ...).
func (r *Registry) Build(ctx context.Context, b Backend) (*Served, error) {
	if b.Client == nil {
		return nil, errors.New("registry: backend has no etcd client")
	}
	tc, err := r.TypeConverter()
	if err != nil {
		return nil, err
	}
	versions, err := r.versions()
	if err != nil {
		return nil, err
	}
	sh := shared{tc: tc, schemas: r.patchSchemas(), versions: versions, namespaces: r.namespaceLifecycle(), readers: hookReaders{}, writers: endpoints.NewWriters()}
	var namespaces k8sadmission.MutationInterface = b.Namespaces
	if namespaces == nil && sh.namespaces != nil {
		namespaces = sh.namespaces
	}
	objects, err := r.ObjectInterfaces()
	if err != nil {
		return nil, err
	}
	sh.admission = admissionChain(namespaces, b.RBAC, b.Dynamic).WithObjects(objects)
	out := &Served{}
	// Storage versions first: the other versions are served over them.
	for _, converted := range []bool{false, true} {
		for _, e := range r.entries {
			if (e.storedAs != nil) != converted {
				continue
			}
			if err := e.build(ctx, b, sh, out); err != nil {
				out.Close()
				return nil, fmt.Errorf("build %s: %w", e.Info.GroupVersionResource(), err)
			}
		}
	}
	out.stored = nil
	return out, nil
}

// patchSchemas are the definitions strategic merge patch reads: those of
// the registered kinds and what they refer to, as patch.Meta looks up a
// kind's own definition only and follows its refs from there. Every
// resource's handler holds them for the life of the server, so they are
// reachableDefinitions', not the whole of r's.
func (r *Registry) patchSchemas() *patch.Schemas {
	kinds := make([]string, len(r.entries))
	for i, e := range r.entries {
		kinds[i] = e.Info.OpenAPIName
	}
	return patch.NewSchemas(reachableDefinitions(r.openAPI, kinds))
}

// versions groups the registered resources by kind: the versions of each
// kind with the conversion between any two of them, through its storage
// version. A kind with converted versions but no storage version is
// ErrNoStorageVersion.
func (r *Registry) versions() (map[schema.GroupKind]*convert.Versions, error) {
	byKind := map[schema.GroupKind][]convert.Version{}
	var kinds []schema.GroupKind
	for _, e := range r.entries {
		gk := storedKind(e.Info)
		if _, seen := byKind[gk]; !seen {
			kinds = append(kinds, gk)
		}
		byKind[gk] = append(byKind[gk], e.version)
	}
	out := make(map[schema.GroupKind]*convert.Versions, len(kinds))
	for _, gk := range kinds {
		vs := byKind[gk]
		if !slices.ContainsFunc(vs, func(v convert.Version) bool { return v.ToStorage == nil }) {
			return nil, fmt.Errorf("%w: %s", ErrNoStorageVersion, gk)
		}
		v, err := convert.NewVersions(vs...)
		if err != nil {
			return nil, err
		}
		out[gk] = v
	}
	return out, nil
}

// storedKind is the kind a resource's objects are stored as: the
// versions of a kind are those stored as one, whatever their group
// (events.k8s.io/v1 Event is a version of core/v1 Event).
func storedKind(info *resource.Info) schema.GroupKind {
	return schema.GroupKind{Group: info.StorageGroupVersion().Group, Kind: info.Kind}
}

// ErrNoSchema is returned by Build and TypeConverter when the OpenAPI
// definitions lack a registered kind's schema, without which its managed
// fields cannot be kept.
var ErrNoSchema = errors.New("registry: no OpenAPI schema")

// TypeConverter returns the type converter of every registered kind, built
// from the OpenAPI definitions SetOpenAPIDefinitions recorded: what
// structured-merge-diff merges server-side applies with. Build calls it;
// it is exported for tests and benchmarks that serve a resource by hand.
func (r *Registry) TypeConverter() (managedfields.TypeConverter, error) {
	models, err := discovery.Models(r.Infos(), r.openAPI)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoSchema, err)
	}
	tc, err := managedfields.NewTypeConverter(models, false)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoSchema, err)
	}
	return tc, nil
}
