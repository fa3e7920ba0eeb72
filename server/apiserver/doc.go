// Package apiserver assembles a running server from a registry of resources:
// etcd (embedded by default, or an external cluster), one storage (and watch
// cache) per resource, the REST and discovery handlers, TLS with ALPN h2,
// bearer-token authentication, health and metrics endpoints, compaction, and
// a graceful shutdown that ends watches before stopping etcd.
package apiserver
