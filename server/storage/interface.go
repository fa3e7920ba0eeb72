package storage

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/wire"
)

// Interface is the contract every storage implementation meets: the etcd
// store in this package and the watch cache in server/cache. The handlers
// consume it and cannot tell the two apart; storagetest checks both.
//
// Keys are relative to the implementation's resource prefix: "namespace/name"
// for namespaced resources and "name" for cluster-scoped ones (see Key).
// Resource versions are etcd revisions. Errors are *Error values wrapping
// one of this package's sentinels (ErrNotFound, ErrExists, ...).
//
// Objects returned by Get, GetList and Watch may be shared with other
// callers (the watch cache hands every reader the same object) and must be
// treated as read-only: copy one (DeepCopyObject) before changing it. The
// object GuaranteedUpdate passes to tryUpdate is the caller's to change.
//
// # Corrupt values
//
// A value under the prefix that does not decode into the resource's type
// (written around the API, or by a broken release) never blocks the
// resource. Reads of its key fail with ErrCorrupt: Get, GuaranteedUpdate
// and Delete (the key is taken, so Create is ErrExists). Everything that
// reads many keys leaves it out: GetList and a watch's initial events skip
// it, and for watchers an unreadable value is the object's absence:
//
//   - a PUT of an unreadable value is a DELETED of the previous state if
//     that decodes (filtered by the predicate, as a leaving object), and
//     otherwise, when the previous value is unreadable, unknown or absent,
//     a DELETED built from the key (an object carrying only namespace,
//     name and the revision, matched on metadata.name and
//     metadata.namespace alone). The event's Corrupt is set;
//   - a DELETE of an unreadable value is a DELETED built from the key;
//   - a PUT of a readable value over an unreadable one is an ADDED, where
//     the implementation knows the previous value was unreadable: always
//     for the cache, and for the store when the watcher read it (its
//     initial events or an earlier event, or a selector made it decode the
//     previous value). Otherwise it is a MODIFIED of an object the client
//     does not hold, which clients (client-go, the cache) treat as an add.
//
// A DELETED built from the key may reach a client that never had the
// object (a key created unreadable): a reflector's store ignores it, and
// an informer may pass it to its OnDelete handlers, where reconciling the
// key finds nothing to do. DeleteCorrupt removes an unreadable value (the
// unsafe delete).
type Interface[O resource.Object] interface {
	// Get returns the object at key. With opts.ResourceVersion "" it is a
	// consistent read; "0" allows any state; "N" requires state at least N
	// (ErrTooLargeResourceVersion if the store cannot reach N).
	// A missing key is ErrNotFound, an unreadable one ErrCorrupt.
	Get(ctx context.Context, key string, opts GetOptions) (O, error)

	// GetList returns the objects matching opts, with the revision they were
	// read at. The resourceVersion rules (docs/architecture.md): "" consistent,
	// "0" any, N+NotOlderThan at least N (never ErrExpired), N+Exact exactly N
	// (ErrExpired if compacted), N > current → ErrTooLargeResourceVersion.
	// With Limit > 0 the list is paginated; Continue resumes at the token's
	// revision and key (ErrExpired, with a fresh token, if compacted).
	// Unreadable values are skipped, as objects the predicate rejects are.
	GetList(ctx context.Context, opts ListOptions) (*List[O], error)

	// Watch streams changes matching opts.Predicate. ResourceVersion N
	// delivers every change after N in revision order, without gaps or
	// duplicates (ErrExpired if N is compacted away); "" and "0" first
	// deliver a synthetic ADDED per current object. With SendInitialEvents
	// set (watch-list) the initial ADDEDs are followed by a BOOKMARK annotated
	// k8s.io/initial-events-end when AllowBookmarks is set. A MODIFIED object
	// that stops (starts) matching the predicate is delivered as DELETED (ADDED).
	// DELETED carries the deletion revision as its resourceVersion.
	// Unreadable values never end a watch (see Corrupt values above).
	Watch(ctx context.Context, opts ListOptions) (Watcher[O], error)

	// Create stores obj at key if the key is free (ErrExists otherwise) and
	// returns it with its new resourceVersion. obj must not carry one.
	Create(ctx context.Context, key string, obj O) (O, error)

	// GuaranteedUpdate reads the object at key, calls tryUpdate with a copy
	// of it and writes the result if the key did not change in between,
	// retrying with the fresh object otherwise. If the object returned by
	// tryUpdate carries a resourceVersion different from the stored one, the
	// update fails with ErrConflict instead of retrying. A missing key is
	// ErrNotFound. Errors from tryUpdate are returned as they are.
	GuaranteedUpdate(ctx context.Context, key string, pre *Preconditions, tryUpdate func(current O) (O, error)) (O, error)

	// Delete removes the object at key after checking preconditions
	// (ErrPrecondition) and returns the last stored state, with the deletion
	// revision as its resourceVersion. A missing key is ErrNotFound.
	Delete(ctx context.Context, key string, pre *Preconditions) (O, error)

	// DeleteCorrupt removes the value at key only while it does not decode:
	// the unsafe delete of an object nobody can read, so no preconditions,
	// finalizers or other checks of its content apply. A missing key is
	// ErrNotFound; a value that decodes is ErrNotCorrupt and stays. Watchers
	// see a DELETED built from the key. With dryRun it deletes nothing and
	// returns what the delete would: nil for a value that does not decode.
	DeleteCorrupt(ctx context.Context, key string, dryRun bool) error
}

// An EncodedGetter is a store that holds objects already encoded (the
// watch cache): a handler writes the JSON it returns instead of encoding
// the object again, which was 18% of the server's CPU for a GET answered
// from memory, by profile.
type EncodedGetter[O resource.Object] interface {
	// GetEncoded is Get that also returns the object's JSON as the wire
	// carries it (wire.EncodeObject with the object's kind), or nil when
	// the store has none at hand and the caller must encode the object.
	GetEncoded(ctx context.Context, key string, opts GetOptions) (O, []byte, error)
}

// GetOptions controls Get.
type GetOptions struct {
	ResourceVersion string
	// Encoded asks an EncodedGetter for the object's JSON only: it may
	// return the zero object along with the JSON, instead of decoding it
	// (the watch cache decodes its objects on demand). Get ignores it.
	Encoded bool
}

// ListOptions controls GetList and Watch.
type ListOptions struct {
	// Namespace narrows a namespaced resource to one namespace; "" is all.
	Namespace string
	// ResourceVersion and ResourceVersionMatch are the request's, validated.
	ResourceVersion      string
	ResourceVersionMatch metav1.ResourceVersionMatch
	// Predicate filters objects by label and field selector.
	Predicate Predicate
	// Limit and Continue paginate a list. Ignored by Watch.
	Limit    int64
	Continue string
	// SendInitialEvents and AllowBookmarks apply to Watch only.
	SendInitialEvents *bool
	AllowBookmarks    bool
	// Encoded says the caller writes each list item's JSON from List.Raw,
	// and each event's from Event.Frame, wherever they are set, and reads
	// no decoded object there: a store that keeps objects encoded (the
	// watch cache, which decodes its objects on demand) then leaves
	// List.Items nil when it sets Raw, and Event.Object the zero value
	// when it sets Frame, instead of decoding them. A store that wraps
	// another and reads objects (conversion) must clear it.
	Encoded bool
}

// Predicate selects objects by labels and fields. A zero Predicate (nil
// selectors) matches everything.
type Predicate struct {
	Label labels.Selector
	Field fields.Selector
}

// Empty reports whether the predicate matches every object.
func (p Predicate) Empty() bool {
	return (p.Label == nil || p.Label.Empty()) && (p.Field == nil || p.Field.Empty())
}

// Preconditions must hold on the stored object for a write to proceed.
type Preconditions struct {
	UID             *string
	ResourceVersion *string
}

// List is one page of a list.
type List[O resource.Object] struct {
	// Items are the objects, nil when Raw holds them and the request was
	// ListOptions.Encoded.
	Items []O
	// ResourceVersion is the revision the list was read at.
	ResourceVersion int64
	// Continue is set only when more items remain.
	Continue string
	// RemainingItemCount is set only when more items remain and the list had
	// no selectors.
	RemainingItemCount *int64
	// Raw, when not nil, holds each item's JSON encoding (kind and
	// apiVersion included) in the order of Items, shared and read-only.
	// The watch cache keeps every object encoded already, so lists it
	// serves are written without encoding anything again.
	Raw [][]byte
	// Encodings, when not nil, gives each item's encoding in the formats
	// other than JSON (At(i) for Items[i]): made on first use by the watch
	// cache and then shared, so that lists in CBOR cost each object's
	// encoding once, not once per list.
	Encodings ListEncodings
	// Corrupt lists the values this page skipped because they do not
	// decode (ErrCorrupt errors with key, revision and decode error), in
	// key order. The etcd store fills it, so that the watch cache learns
	// them when it lists; the cache holds no such values and leaves it nil.
	Corrupt []*Error
}

// Len is the number of items: of Items, or of Raw when Items is nil.
func (l *List[O]) Len() int {
	if l.Items == nil {
		return len(l.Raw)
	}
	return len(l.Items)
}

// Encodings is one object's encoding in a format besides JSON, and the
// watch frame of one event carrying it, made once by a producer that
// keeps them (the watch cache) and shared by every reader. Read-only.
type Encodings interface {
	// Object is the object alone, as a response body carries it.
	Object(f wire.Format) ([]byte, error)
	// Frame is the watch frame that carries the object, in format f.
	Frame(f wire.Format) ([]byte, error)
}

// ListEncodings gives the Encodings of a list's items by index.
type ListEncodings interface {
	At(i int) Encodings
}

// Event is one watch event.
type Event[O resource.Object] struct {
	Type watch.EventType
	// Object is the object (for BOOKMARK: an empty object carrying only the
	// resourceVersion and, at the end of initial events, the annotation).
	Object O
	// Frame, when not nil, is the complete encoded watch frame for this
	// event, `{"type":...,"object":...}` plus newline, shared by every
	// watcher that receives it. Read-only. Producers that do not encode
	// leave it nil and the handler encodes Object.
	Frame []byte
	// Encodings, when not nil, gives the frame in the formats other than
	// JSON, each encoded on first use and shared like Frame. Producers
	// that do not keep encodings leave it nil and the handler encodes
	// Object in those formats itself.
	Encodings Encodings
	// Corrupt is set on the DELETED that a PUT of an unreadable value
	// becomes (see Corrupt values on Interface): the object was not
	// deleted, its key now holds a value that does not decode. It is the
	// ErrCorrupt a Get of the key returns. Consumers that track such keys
	// (the watch cache) read it; clients ignore it.
	Corrupt *Error
}

// Watcher is one watch stream, driven by polling: whoever carries the
// stream calls Poll when it may send and, when Poll finds nothing,
// NotifyOnce with a wake that makes it poll again. A transport with no
// goroutine per watch (the HTTP/2 connection's writer) does exactly that,
// so an idle watch costs no goroutine stack; one with a goroutine per
// watch (HTTP/1.1, WebSocket, the watch cache following its store) blocks
// in a Blocking over the same two calls. Poll and NotifyOnce are called
// by one goroutine at a time.
type Watcher[O resource.Object] interface {
	// Poll appends to buf, in revision order, the events available now
	// (at most an implementation's batch), or returns buf unchanged when
	// there are none; it never blocks. It returns an *Error wrapping
	// ErrExpired when the watcher fell too far behind or its start
	// revision was compacted, io.EOF when the stream ended cleanly (Stop,
	// or the store closing), or ctx.Err() once ctx has ended and nothing
	// is left to send. ctx's deadline (a final bookmark shortly before it)
	// and its end count only when Poll is called: a caller that must
	// notice ctx ending arranges that itself.
	Poll(ctx context.Context, buf []Event[O]) ([]Event[O], error)
	// NotifyOnce arranges for wake to be called, from any goroutine, when
	// Poll may return more than at its last call: events, a bookmark due,
	// the store closing. It calls wake at once if that is already so.
	// wake must not block; it may be called more than once, and after
	// Stop. A watcher may keep the first wake it is given, so callers pass
	// the same one every time.
	NotifyOnce(wake func())
	// Stop ends the watch and releases its resources; it may be called
	// from any goroutine, and twice. A reader waiting after NotifyOnce is
	// woken, and its next Poll returns io.EOF.
	Stop()
}
