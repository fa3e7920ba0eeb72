// Package cache is the watch cache: an in-memory copy of one resource, kept
// current by a single watch on the etcd store, that serves the same
// storage.Interface as the store so handlers cannot tell the two apart.
//
//	          writes (Create, GuaranteedUpdate, Delete) ──► Source (etcd store)
//	                                                            │ one Watch from the list revision
//	                                                            ▼
//	Get/GetList ◄── state: btree of items by key ◄── ingest (one goroutine: encode once, apply)
//	                                                            │
//	Watch ──► watcher = cursor ──reads──► history: ring of events addressed by sequence/revision
//
// Every event is encoded once, by the ingest goroutine, into its watch-frame
// bytes (storage.Event.Frame). Those bytes, and the decoded object, are
// shared by every watcher that receives the event. The frame is the one
// copy of each object the cache keeps for good: the decoded object is held
// while an event in the history window carries it, and otherwise made
// again from the frame when a reader needs it (item.go). Readers that
// write the JSON (a JSON list, watch or GET: storage.ListOptions.Encoded,
// storage.GetOptions.Encoded) get no decoded object and cause no decoding. The variants a selector
// needs when an object enters it (ADDED) or leaves it (DELETED) are built at
// most once per event, on first use, and shared too.
//
// A watcher is a cursor into the history plus a few flags; it has no
// goroutine and no queue. Whoever carries the watch calls Poll, which
// copies the events available to the cursor into the caller's buffer
// without blocking, and, when it found nothing, NotifyOnce: the watcher
// then waits as one entry in a list beside the wake-up channel of its
// namespace (poll.go, notify.go). The HTTP/2 connection's writer does so
// directly; HTTP/1.1 and WebSocket handlers block in a storage.Blocking
// over the same calls. The ingest goroutine never waits for a watcher:
// when the ring overwrites events a watcher has not read, that watcher's
// next read returns
// ErrExpired and the client relists. Nothing is ever skipped silently.
// A watch that starts with the current state does not copy it either: it
// keeps a key cursor and rebuilds each batch of initial events from the
// live state and the history (initial.go), so a client that stops reading
// pins nothing.
//
// Reads follow the resourceVersion rules (docs/architecture.md): RV "0"
// is answered from memory; RV "" (a consistent read) first learns etcd's current revision and waits for the
// cache to reach it, asking etcd for a progress notification so that an
// idle resource catches up at once; RV N waits for N. Exact reads and
// continue tokens inside the window are answered from a snapshot
// reconstructed by undoing newer events; older ones go to the store.
//
// If the store's watch breaks, the cache watches again from its own
// revision, so no event is lost. If that revision has been compacted, it
// relists; watchers that had not reached the new list revision end with
// ErrExpired.
package cache
