package storage

import (
	"errors"
	"fmt"
)

// Sentinels name what went wrong; handlers map them to metav1.Status.
var (
	// ErrNotFound: no object at the key.
	ErrNotFound = errors.New("storage: key not found")
	// ErrExists: Create found the key taken.
	ErrExists = errors.New("storage: key already exists")
	// ErrConflict: the object changed since the resourceVersion the caller
	// presented.
	ErrConflict = errors.New("storage: resource version conflict")
	// ErrPrecondition: a uid or resourceVersion precondition did not hold.
	ErrPrecondition = errors.New("storage: precondition failed")
	// ErrExpired: the requested revision or continue token was compacted.
	ErrExpired = errors.New("storage: resource version too old")
	// ErrTooLargeResourceVersion: the requested revision is ahead of the
	// store and did not arrive in time.
	ErrTooLargeResourceVersion = errors.New("storage: resource version too large")
	// ErrInvalidContinue: a continue token that does not parse or does not
	// belong to this resource.
	ErrInvalidContinue = errors.New("storage: invalid continue token")
	// ErrInvalidResourceVersion: a resourceVersion that is not a revision.
	ErrInvalidResourceVersion = errors.New("storage: invalid resource version")
	// ErrCorrupt: stored bytes that do not decode into the resource's type.
	// The Error carries the key, the value's revision (ResourceVersion) and
	// the decode error (Detail).
	ErrCorrupt = errors.New("storage: stored object does not decode")
	// ErrTooLarge: an object whose stored form is more than etcd accepts in
	// one request (WithMaxRequestBytes, or etcd's own refusal).
	ErrTooLarge = errors.New("storage: object too large")
	// ErrNotCorrupt: DeleteCorrupt found a value that decodes. An object
	// that can be read is deleted the ordinary way, with its preconditions
	// and finalizers.
	ErrNotCorrupt = errors.New("storage: stored object decodes")
	// ErrInvalidKey: a key that is not "namespace/name" (namespaced) or
	// "name" (cluster-scoped), or has an empty, "." or ".." segment.
	ErrInvalidKey = errors.New("storage: invalid key")
	// ErrInsufficientStorage: etcd cannot take the write for lack of space,
	// because its database reached its space quota (etcd's NOSPACE alarm)
	// or because the disk under the embedded etcd is nearly full. Nothing
	// was written; reads still work. An error from etcd's client that Is
	// this sentinel (the server's space guard returns such errors) keeps
	// its text as the Error's Detail.
	ErrInsufficientStorage = errors.New("storage: insufficient storage")
	// ErrTransform: the value could not be transformed for storage
	// (encryption at rest failed, e.g. a KMS plugin that does not
	// answer). Nothing was written.
	ErrTransform = errors.New("storage: value could not be transformed for storage")
	// ErrBadResponse: etcd (or an etcd-API backend) answered a request
	// with a response etcd's API never gives, e.g. a failed transaction
	// without its Else branch's result. Nothing is inferred from it; the
	// Detail names the operation.
	ErrBadResponse = errors.New("storage: response outside etcd's API contract")
)

// noSpaceDetail explains etcd's own NOSPACE error when nothing in front
// of etcd explained it already.
const noSpaceDetail = "etcd's database reached its space quota (etcdserver: mvcc: database space exceeded); " +
	"delete objects, then compact and defragment etcd and disarm its NOSPACE alarm, or raise etcd's quota"

// Error is the one error type storage returns: a sentinel plus the key and
// revisions involved, for the handler to build a precise Status from.
type Error struct {
	Err             error  // one of the sentinels above
	Key             string // the key involved, relative to the resource prefix
	ResourceVersion int64  // the revision asked for, where there was one
	// CurrentRevision is the store's revision when the error was found,
	// used in "too old resource version: X (Y)" messages.
	CurrentRevision int64
	// Continue is a fresh token to resume from, set with ErrExpired for an
	// expired continue token.
	Continue string
	// Detail is an optional human explanation.
	Detail string
	// StoredKey is the full etcd key (the resource prefix and Key), set
	// where a message names it as kube-apiserver's does (ErrNotCorrupt).
	StoredKey string
	// Untransformable marks an ErrCorrupt value that could not be
	// decrypted (transform.go), rather than one that does not decode.
	Untransformable bool
}

func (e *Error) Error() string {
	msg := e.Err.Error()
	if e.Key != "" {
		msg += fmt.Sprintf(" (key %q)", e.Key)
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// AsError returns err's *Error, if it has one.
func AsError(err error) (*Error, bool) {
	var se *Error
	ok := errors.As(err, &se)
	return se, ok
}
