package registry

import (
	"k8s.io/kube-openapi/pkg/common"

	"github.com/apiloom/apiloom/server/convert"
	"github.com/apiloom/apiloom/server/resource"
)

// Registry is the set of resources to serve plus the OpenAPI definitions of
// their types. The zero value is empty and ready to use.
type Registry struct {
	entries []*Entry
	openAPI common.GetOpenAPIDefinitions
}

// Entry is one registered resource.
type Entry struct {
	Info  *resource.Info
	build builder
	// storedAs is the Info of the storage version whose storage this
	// entry's is built over; nil when the entry is stored as it is.
	storedAs *resource.Info
	// version converts the entry's objects to and from the other versions
	// of its kind (Registry.versions).
	version convert.Version
	// defaults are the kind's built-in defaults (resource.Definition's
	// Default), nil when it has none.
	defaults func(resource.Object)
}

// Register adds def to r. Generated Install functions call it once per type.
func Register[O resource.Object](r *Registry, def *resource.Definition[O]) {
	r.entries = append(r.entries, &Entry{Info: &def.Info, build: buildFor(def), version: convert.StorageVersion(def), defaults: defaultsOf(def)})
}

// RegisterConverted adds def, a version of a kind stored in another
// version (conv.Storage, registered with Register), to r. The two share
// one store and one watch cache: def's resource is served over the
// storage version's, converting every object (package convert).
// Generated Install functions call it for each version of a kind that is
// not its +kubebuilder:storageversion.
func RegisterConverted[O, S resource.Object](r *Registry, def *resource.Definition[O], conv resource.Conversion[O, S]) {
	r.entries = append(r.entries, &Entry{Info: &def.Info, build: buildConverted(def, conv), storedAs: &conv.Storage.Info,
		version: convert.ConvertedVersion(def, conv), defaults: defaultsOf(def)})
}

// defaultsOf is def's Default for any object of its type; nil when def
// has none.
func defaultsOf[O resource.Object](def *resource.Definition[O]) func(resource.Object) {
	if def.Default == nil {
		return nil
	}
	return func(obj resource.Object) {
		if o, ok := obj.(O); ok {
			def.Default(o)
		}
	}
}

// SetOpenAPIDefinitions records openapi-gen's definitions for every type in
// the registry; discovery serves /openapi/v2 and /openapi/v3 from them, and
// strategic merge patch reads each field's patch strategy from them.
func (r *Registry) SetOpenAPIDefinitions(defs common.GetOpenAPIDefinitions) {
	r.openAPI = withListMapMerge(defs)
}

// OpenAPIDefinitions returns what SetOpenAPIDefinitions recorded, with the
// strategic-merge-patch strategy of +listType=map lists made explicit
// (withListMapMerge).
func (r *Registry) OpenAPIDefinitions() common.GetOpenAPIDefinitions { return r.openAPI }

// Select returns a registry of r's resources that keep accepts, in the same
// order, with r's OpenAPI definitions. r is unchanged.
func (r *Registry) Select(keep func(*resource.Info) bool) *Registry {
	out := &Registry{openAPI: r.openAPI}
	for _, e := range r.entries {
		if keep(e.Info) {
			out.entries = append(out.entries, e)
		}
	}
	return out
}

// Entries returns the registered resources in registration order.
func (r *Registry) Entries() []*Entry { return r.entries }

// Infos returns the Info of every registered resource, in registration order.
func (r *Registry) Infos() []*resource.Info {
	infos := make([]*resource.Info, len(r.entries))
	for i, e := range r.entries {
		infos[i] = e.Info
	}
	return infos
}
