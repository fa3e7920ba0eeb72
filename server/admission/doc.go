// Package admission is the one pipeline every write goes through: a chain
// of plugins shaped as k8s.io/apiserver's admission plugins
// (admission.MutationInterface, admission.ValidationInterface, given
// admission.Attributes), so that upstream's own plugins (namespace
// lifecycle, ValidatingAdmissionPolicy, MutatingAdmissionPolicy, the
// webhooks) join it without reshaping it.
//
// The chain is built once per server (server/registry) in the order
// Order names, and the handlers (server/endpoints) call it on every write
// path: create, update, each patch type, server-side apply, /status,
// /scale, /finalize, delete and each item of a deletecollection, dry run
// or not. Its mutating phase runs first, every plugin that mutates in
// chain order, then its validating phase, likewise.
//
// What a resource's own definition brings to a write (its hooks, the
// fields the server owns, its metadata, strategy and schema rules) is one
// request's KindStages, which the Kind* plugins call: the handler that
// serves the resource knows its Go type, the chain does not.
package admission
