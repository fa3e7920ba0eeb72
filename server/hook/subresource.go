package hook

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
)

// A kind's own subresources (docs/writing-your-api.md, "Your own verbs")
// are methods of its hooks type, named after the client method the
// kind's +genclient:method marker declares:
//
//	// action: POST .../databases/NAME/backup with a BackupRequest
//	func (Database) Backup(req *hook.Request, db *v1.Database, in *v1.BackupRequest) (*v1.BackupResult, error)
//	// view: GET .../databases/NAME/connection
//	func (Database) GetConnection(req *hook.Request, db *v1.Database) (*v1.DatabaseConnection, error)
//	// stream: GET .../databases/NAME/logs?follow=true
//	func (Database) Logs(req *hook.Request, db *v1.Database, opts *v1.DatabaseLogOptions, w io.Writer) error
//
// db is the parent object as a consistent read finds it when the call
// begins (shared: read only). An error that is an API status
// (k8s.io/apimachinery/pkg/api/errors) is the client's answer; any other,
// a panic or a missed deadline is a logged 500 that fails only its
// request. An action writes objects, its parent included, through
// CreateObject, UpdateObject, UpdateStatus and DeleteObject: the
// server's own write path, so admission, managed fields, the kinds' hooks
// and watch events stay right, and a dry-run call stores nothing.
//
// A stream writes to w for as long as it likes, each Write reaching the
// client before it returns, and stops when req.Context() ends (the client
// went away, the server shuts down). Its answer (200 and the headers)
// starts with its first Write, so an error returned before it is answered
// as a Status; a Write of no bytes starts it with nothing to say yet (a
// follow with no line so far), so that the client is not left waiting
// for the headers.

// Read is the Operation of a view or stream call, which writes nothing.
const Read Operation = "READ"

// Writers finds the writer of a served kind by its Go type (a pointer
// type such as *v1.Database); the server implements it over its write
// path. Only actions' requests have them.
type Writers interface {
	Writer(t reflect.Type) any
}

// Writer writes the objects of one served kind as a client's request
// would, with the user and dryRun of the action that calls it.
type Writer[O Object] interface {
	Create(ctx context.Context, obj O, opts WriteOptions) (O, error)
	// Update writes obj (the main resource, or with opts.Status the
	// status subresource) at obj's resourceVersion: a Conflict error
	// when the stored object has moved on, as a client's PUT.
	Update(ctx context.Context, obj O, opts WriteOptions) (O, error)
	Delete(ctx context.Context, namespace, name string, opts WriteOptions) error
}

// WriteOptions say how a Writer writes.
type WriteOptions struct {
	// Status writes the status subresource (Update only).
	Status bool
}

// ErrNoWriters is returned by the write functions outside an action.
var ErrNoWriters = fmt.Errorf("hook: writes are allowed only in an action")

// writer is the writer of O for req.
func writer[O Object](req *Request) (Writer[O], error) {
	if req.writers == nil {
		return nil, ErrNoWriters
	}
	t := reflect.TypeFor[O]()
	if w, ok := req.writers.Writer(t).(Writer[O]); ok {
		return w, nil
	}
	return nil, fmt.Errorf("%w: %v", ErrNotServed, t)
}

// CreateObject stores obj, a new object of a served kind, through the server's
// write path, and returns it as stored.
func CreateObject[O Object](req *Request, obj O) (O, error) {
	w, err := writer[O](req)
	if err != nil {
		var zero O
		return zero, err
	}
	return w.Create(req.ctx, obj, WriteOptions{})
}

// UpdateObject writes obj over the stored object at obj's resourceVersion.
func UpdateObject[O Object](req *Request, obj O) (O, error) {
	w, err := writer[O](req)
	if err != nil {
		var zero O
		return zero, err
	}
	return w.Update(req.ctx, obj, WriteOptions{})
}

// UpdateStatus writes obj's status over the stored object's at obj's
// resourceVersion, as a PUT of the status subresource.
func UpdateStatus[O Object](req *Request, obj O) (O, error) {
	w, err := writer[O](req)
	if err != nil {
		var zero O
		return zero, err
	}
	return w.Update(req.ctx, obj, WriteOptions{Status: true})
}

// DeleteObject deletes the object namespace/name of kind O.
func DeleteObject[O Object](req *Request, namespace, name string) error {
	w, err := writer[O](req)
	if err != nil {
		return err
	}
	return w.Delete(req.ctx, namespace, name, WriteOptions{})
}

// Watchers finds the watch source of a served kind by its Go type; the
// server implements it over its watch caches (the same object as its
// Readers).
type Watchers interface {
	Watcher(t reflect.Type) any
}

// WatchSource starts watches of one served kind.
type WatchSource[O Object] interface {
	Watch(ctx context.Context, namespace string, opts WatchOptions) (Watcher[O], error)
}

// WatchOptions say what a watch sees.
type WatchOptions struct {
	// Labels and Fields select the objects (nil for all); Fields takes
	// the kind's field-selector keys.
	Labels labels.Selector
	Fields fields.Selector
	// SendInitialEvents starts the watch with an Added event for every
	// object selected now, then one event of type InitialEventsEnd, then
	// the changes after them: a list and a watch with nothing missed
	// between them. Without it the watch sees the changes from now on.
	SendInitialEvents bool
}

// InitialEventsEnd is the type of the event that ends a watch's initial
// events (WatchOptions.SendInitialEvents); its Object is the zero value.
const InitialEventsEnd watch.EventType = "INITIAL_EVENTS_END"

// WatchEvent is one change a Watcher sees: Added, Modified or Deleted
// (the object as last stored), or InitialEventsEnd.
type WatchEvent[O Object] struct {
	Type   watch.EventType
	Object O
}

// Watcher is one watch. Its objects are shared: read only.
type Watcher[O Object] interface {
	// Next blocks until the next event, ctx's end (ctx.Err()), or the
	// watch ending (an error: the server is shutting down, or the watch
	// fell too far behind and must be started again).
	Next(ctx context.Context) (WatchEvent[O], error)
	// Stop ends the watch; Next then returns an error.
	Stop()
}

// Watch watches the objects of kind O in namespace ("" for all) through
// the server's watch cache, until req's context ends or Stop: a stream
// that follows what happens to a kind. The caller must Stop it.
func Watch[O Object](req *Request, namespace string, opts WatchOptions) (Watcher[O], error) {
	t := reflect.TypeFor[O]()
	if ws, ok := req.readers.(Watchers); ok {
		if src, ok := ws.Watcher(t).(WatchSource[O]); ok {
			return src.Watch(req.ctx, namespace, opts)
		}
	}
	return nil, fmt.Errorf("%w: %v", ErrNotServed, t)
}

// WithWriters returns a copy of r whose writes go to w: the server gives
// an action's request its writers.
func (r *Request) WithWriters(w Writers) *Request {
	c := *r
	c.writers = w
	return &c
}
