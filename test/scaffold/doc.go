// Package scaffold tests `loom` end to end: it scaffolds a module against
// this checkout, grows it with `loom create api`, runs the module's own
// make generate and test, makes the user's first edit of the specs (a
// field replaced, a required one added, a Default hook) and runs make
// generate, test and verify again, serves it, applies objects with
// kubectl, checks that a create without a required field is refused, and
// checks that refused input changes nothing.
package scaffold
