package cache

import (
	"context"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// Source is what the cache is built on: the etcd store of the same
// resource (*storage.Store satisfies it). The cache reads it to fill
// itself, follows one Watch on it, and passes every write, and every read
// it cannot answer from memory, straight through.
type Source[O resource.Object] interface {
	storage.Interface[O]

	// CurrentRevision returns etcd's current revision, read with a quorum:
	// every write acknowledged before the call is at or below it.
	CurrentRevision(ctx context.Context) (int64, error)

	// RequestProgress asks etcd to report its revision on the source's
	// watches; a watch opened with AllowBookmarks turns the report into a
	// BOOKMARK. It lets an idle resource's cache learn that it is current.
	RequestProgress(ctx context.Context) error
}
