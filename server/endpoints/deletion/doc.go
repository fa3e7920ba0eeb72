// Package deletion holds what a DELETE means apart from serving it: the
// propagation policy as garbage-collection finalizers, the mark an object
// with finalizers gets instead of being removed, preconditions from
// DeleteOptions, and the unsafe delete of an object that does not decode
// (who may do it, and the errors kube-apiserver words for it).
//
// It is separate from server/endpoints so that these rules, which follow
// kube-apiserver's generic store rather than any handler, read and test
// on their own; the handlers in server/endpoints apply them to storage.
package deletion
