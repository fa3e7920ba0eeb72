// Package scaffold tests `loom` end to end: it scaffolds a module against
// this checkout, grows it with `loom create api`, runs the module's own
// make generate, test and verify, serves it and applies objects with
// kubectl, and checks that refused input changes nothing.
package scaffold
