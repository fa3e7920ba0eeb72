// Package registry collects the resources one server serves. Generated code
// (generated/apiserver) calls Register once per type; the server then builds
// each resource's storage and handler from a Backend when it starts.
package registry
