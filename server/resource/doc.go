// Package resource holds the facts the generic server needs about one API
// resource: its names, scope and subresources, and the few per-type functions
// (construction, selectable fields, status copy, spec equality) that generated
// code states as plain Go so that nothing in the server reflects over types.
//
// Generated code in generated/apiserver fills a Definition per type; the
// server's storage, handlers and discovery read it and nothing else.
package resource
