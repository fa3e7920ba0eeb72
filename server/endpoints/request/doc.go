// Package request reads what a request asks of a resource besides its
// body: the query parameters of every verb (list and watch, write, delete
// and table options), parsed by hand and refused with the exact Status
// kube-apiserver returns, and the Limits that bound what one request may
// make a handler do. It also words the 400s of a body that does not
// decode. It knows nothing of handlers, so that the options a verb takes
// and their validation can be read, tested and fuzzed in one place.
package request
