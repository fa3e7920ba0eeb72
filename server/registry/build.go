package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiloom/apiloom/server/cache"
	"github.com/apiloom/apiloom/server/endpoints"
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
	// Limits bound each resource's requests (endpoints.DefaultLimits when
	// nil).
	Limits *endpoints.Limits
}

// Served is the built form of a registry: one handler per resource and
// what must be stopped when the server ends.
type Served struct {
	Resources []endpoints.Resource
	closers   []func()
	readies   []func() bool
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

// builder builds one resource's storage and handler on a backend; schemas
// are the registry's OpenAPI definitions (nil without them).
type builder func(ctx context.Context, b Backend, schemas *endpoints.Schemas, out *Served) error

func buildFor[O resource.Object](def *resource.Definition[O]) builder {
	return func(ctx context.Context, b Backend, schemas *endpoints.Schemas, out *Served) error {
		var log *slog.Logger
		if b.Log != nil {
			log = b.Log.With("resource", def.GroupResource().String())
		}
		store := storage.New(b.Client, storage.ResourcePrefix(b.Prefix, &def.Info), def,
			storage.WithLogger(log), storage.WithMetrics(b.Metrics), storage.WithMaxRequestBytes(b.MaxRequestBytes))
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
		var opts []endpoints.Option
		if b.Limits != nil {
			opts = append(opts, endpoints.WithLimits(*b.Limits))
		}
		if schemas != nil {
			opts = append(opts, endpoints.WithSchemas(schemas))
		}
		out.Resources = append(out.Resources, endpoints.NewResource(def, iface, opts...))
		return nil
	}
}

// Build constructs storage and handlers for every registered resource. On
// error, whatever was built is closed again.
func (r *Registry) Build(ctx context.Context, b Backend) (*Served, error) {
	if b.Client == nil {
		return nil, errors.New("registry: backend has no etcd client")
	}
	var schemas *endpoints.Schemas
	if r.openAPI != nil {
		schemas = endpoints.NewSchemas(r.openAPI) // once, shared by every resource
	}
	out := &Served{}
	for _, e := range r.entries {
		if err := e.build(ctx, b, schemas, out); err != nil {
			out.Close()
			return nil, fmt.Errorf("build %s: %w", e.Info.GroupResource(), err)
		}
	}
	return out, nil
}
