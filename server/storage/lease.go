package storage

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Lease reuse, as kube-apiserver's storage does it: a write that needs a
// lease takes the one granted last when that one expires late enough and
// not much later than the write asks, so a burst of objects with one TTL
// (10,000 events) costs a few leases, not one each.
const (
	// DefaultLeaseReuse is kube-apiserver's --lease-reuse-duration-seconds
	// default: a lease is reused for at most this long.
	DefaultLeaseReuse = 60 * time.Second
	// leaseReusePercent caps the reuse window at this share of the TTL,
	// so a short TTL is not stretched by much.
	leaseReusePercent = 0.05
	// leaseMaxObjects is how many writes one lease serves at most, as
	// upstream's: revoking or expiring a lease deletes all its keys in
	// one etcd transaction.
	leaseMaxObjects = 1000
)

// leaseManager grants the etcd leases that expire a store's objects. Safe
// for concurrent use.
type leaseManager struct {
	// Immutable after newLeaseManager.
	lessor clientv3.Lease
	// ttl is the objects' time to live, in seconds (etcd's unit); reuse
	// how much longer than it a reused lease may live.
	ttl, reuse int64
	now        func() time.Time

	// mu guards the fields below: the lease granted last.
	mu       sync.Mutex
	id       clientv3.LeaseID
	expires  time.Time
	attached int64
}

// newLeaseManager returns the lease manager of objects living ttl (at
// least a second), reusing a lease for at most reuse (capped at 5% of
// ttl).
func newLeaseManager(lessor clientv3.Lease, ttl, reuse time.Duration, now func() time.Time) *leaseManager {
	secs := max(int64((ttl+time.Second-1)/time.Second), 1)
	return &leaseManager{
		lessor: lessor,
		ttl:    secs,
		reuse:  min(int64(reuse/time.Second), int64(leaseReusePercent*float64(secs))),
		now:    now,
	}
}

// lease returns the lease a write now attaches to its key: the last one
// when it expires no sooner than ttl from now and no later than ttl+reuse
// and has served fewer than leaseMaxObjects writes, else a new one of
// ttl+reuse seconds.
func (m *leaseManager) lease(ctx context.Context) (clientv3.LeaseID, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.attached++
	ttl := time.Duration(m.ttl) * time.Second
	if now.Add(ttl).Before(m.expires) && !now.Add(ttl+time.Duration(m.reuse)*time.Second).Before(m.expires) && m.attached <= leaseMaxObjects {
		return m.id, nil
	}
	resp, err := m.lessor.Grant(ctx, m.ttl+m.reuse)
	if err != nil {
		return 0, err
	}
	m.id, m.expires, m.attached = resp.ID, now.Add(time.Duration(m.ttl+m.reuse)*time.Second), 1
	return m.id, nil
}

// forget drops id, which etcd no longer has (revoked, or expired early),
// so the next write is granted a new lease.
func (m *leaseManager) forget(id clientv3.LeaseID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.id == id {
		m.id, m.expires = 0, time.Time{}
	}
}

// putOptions are the options of a put of an object: its lease, when the
// store's objects expire.
func (s *Store[O]) putOptions(ctx context.Context, key string) ([]clientv3.OpOption, clientv3.LeaseID, error) {
	if s.leases == nil {
		return nil, 0, nil
	}
	id, err := s.leases.lease(ctx)
	if err != nil {
		return nil, 0, etcdError("grant lease", key, err)
	}
	return []clientv3.OpOption{clientv3.WithLease(id)}, id, nil
}

// leaseGone makes the lease manager forget lease when err is etcd's
// "requested lease not found": the lease was revoked or expired while it
// was kept for reuse, and the write failed; the client's retry gets a new
// one.
func (s *Store[O]) leaseGone(err error, lease clientv3.LeaseID) {
	if err != nil && lease != 0 && errors.Is(err, rpctypes.ErrLeaseNotFound) {
		s.leases.forget(lease)
	}
}
