// Package storagetest is the conformance suite for storage.Interface. Every
// implementation (the etcd store in server/storage, the watch cache in
// server/cache) runs the same tests against a real embedded etcd, so that
// handlers cannot tell them apart.
//
// The suite brings its own small resource, Widget, because server/ never
// imports apis/ or generated/. An implementation's test calls Run with a
// constructor:
//
//	func TestConformance(t *testing.T) {
//		storagetest.Run(t, storagetest.Config{
//			NewStore: func(t *testing.T, c *clientv3.Client) storage.Interface[*storagetest.Widget] {
//				return storage.New(c, storagetest.Prefix, storagetest.Definition())
//			},
//		})
//	}
package storagetest
