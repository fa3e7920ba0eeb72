package storage_test

import (
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

var _ storage.Interface[*storagetest.Widget] = (*storage.Store[*storagetest.Widget])(nil)

func newWidgetStore(t *testing.T, c *clientv3.Client, opts ...storage.Option) *storage.Store[*storagetest.Widget] {
	return storage.New(c, storagetest.Prefix, storagetest.Definition(), opts...)
}

func TestConformance(t *testing.T) {
	storagetest.Run(t, storagetest.Config{
		NewStore: func(t *testing.T, c *clientv3.Client) storage.Interface[*storagetest.Widget] {
			// A small sync page makes watches' initial events cross pages.
			return newWidgetStore(t, c, storage.WithSyncPageSize(1))
		},
	})
}
