// Package history records what the robustness suite's clients did and saw,
// so that the checkers (package check) can compare it with what etcd holds.
//
// A Recorder is shared by every client of a scenario. Each request is an
// Operation: its kind, object key, precondition, value written or read, the
// client and operation ids, its call and return times on one monotonic
// clock, and its Outcome. An outcome is Acknowledged (the server answered
// success), Failed (a Status that says nothing happened: 409, 404, 422, ...)
// or Unknown (timeout, 5xx, connection lost: the write may or may not have
// happened). The checkers rely on that distinction: an Unknown write may
// appear in etcd, a Failed one must not, and an Acknowledged one must.
//
// Each watch stream is a Stream: its selector, the resourceVersion it
// started from, every event it received in order (bookmarks included) and
// how it ended (410 Gone, another error, or closed).
//
// Values are opaque strings: a scenario writes each write's operation id
// into the object (a label or a field) and records that string as the
// value, both here and when it reads etcd's history, so that every value
// in etcd names the write that produced it.
package history
