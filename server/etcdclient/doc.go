// Package etcdclient owns the etcd client every store, the watch caches
// and the compactor use, and the embedded etcd it may talk to: Connect
// starts a single-member etcd on a private unix socket (or dials an
// external cluster) and returns a client whose writes meet the disk guard,
// whose NOSPACE answers are explained and recovered from, and whose
// requests are retried when a member has no leader.
//
// It is separate from server/apiserver, which assembles the server, so that
// what keeps etcd alive and writable (disk space, quota, leadership) is
// read and tested in one place, apart from flags and HTTP wiring.
package etcdclient
