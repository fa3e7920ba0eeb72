package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// ErrNoLeader is returned by Leader when no running member names a leader
// that is one of the running members.
var ErrNoLeader = errors.New("cluster: no etcd leader")

// EtcdMember is one member of the cluster: a process on fixed loopback
// ports and its own data directory, so a restart rejoins as the same member.
type EtcdMember struct {
	*Process
	ClientURL string
	PeerURL   string // where it listens for peers
	Dir       string
	// PeerProxy, when the cluster has peer proxies, is the proxy every
	// peer connection to this member goes through (its advertised peer
	// URL): delaying it delays the member's raft traffic.
	PeerProxy *Proxy

	index             int    // position in Etcd.Members
	advertisedPeerURL string // PeerURL, or PeerProxy's
}

// Index is the member's position in Etcd.Members (its namespace in a
// Network).
func (m *EtcdMember) Index() int { return m.index }

// Etcd is a cluster of etcd members, each a process of its own (the
// suite's cmd/etcd binary).
type Etcd struct {
	Members []*EtcdMember
}

// StartEtcd starts size members under dir, member i on client port
// basePort+2i and peer port basePort+2i+1, and waits until they have
// elected a leader and serve a linearizable read.
func StartEtcd(ctx context.Context, bin, dir string, size, basePort int) (*Etcd, error) {
	return startEtcd(ctx, bin, dir, etcdLayout{size: size, base: basePort})
}

// etcdLayout is where the members of a cluster listen: on loopback, or
// each in its namespace of net; and whether peers reach member i through
// a proxy on peerProxyPort+i (to delay its peer traffic).
type etcdLayout struct {
	size, base    int
	net           *Network
	peerProxyPort int // 0: no peer proxies
	// etcdArgs are added to every member's command line.
	etcdArgs []string
	// prepareDir, when set, is called with each member's index and
	// directory (created, empty) before the member first starts.
	prepareDir func(i int, dir string) error
}

func (l etcdLayout) host(i int) string {
	if l.net != nil {
		return l.net.IP(i)
	}
	return "127.0.0.1"
}

func startEtcd(ctx context.Context, bin, dir string, l etcdLayout) (*Etcd, error) {
	e := &Etcd{}
	var initial []string
	for i := range l.size {
		m := &EtcdMember{
			ClientURL: fmt.Sprintf("http://%s:%d", l.host(i), l.base+2*i),
			PeerURL:   fmt.Sprintf("http://%s:%d", l.host(i), l.base+2*i+1),
			Dir:       filepath.Join(dir, fmt.Sprintf("etcd%d", i)),
		}
		advertised := m.PeerURL
		if l.peerProxyPort != 0 {
			p, err := startProxy(ctx, l.peerProxyPort+i, m.PeerURL)
			if err != nil {
				e.Close(ctx)
				return nil, err
			}
			m.PeerProxy, advertised = p, p.URL
		}
		name := fmt.Sprintf("etcd%d", i)
		initial = append(initial, name+"="+advertised)
		m.Process = newProcess(name, bin, filepath.Join(dir, name+".log"))
		m.index = i
		m.advertisedPeerURL = advertised
		e.Members = append(e.Members, m)
	}
	for i, m := range e.Members {
		if err := os.MkdirAll(m.Dir, 0o700); err != nil {
			e.Close(ctx)
			return nil, err
		}
		if l.prepareDir != nil {
			if err := l.prepareDir(i, m.Dir); err != nil {
				e.Close(ctx)
				return nil, err
			}
		}
		m.args = []string{"--name", m.Name, "--data-dir", filepath.Join(m.Dir, "data"),
			"--listen-client-url", m.ClientURL, "--listen-peer-url", m.PeerURL, "--advertise-peer-url", m.advertisedPeerURL,
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", "new"}
		m.args = append(m.args, l.etcdArgs...)
		if l.net != nil {
			m.bin, m.args = l.net.Command(m.index, bin, m.args...)
		}
		if err := m.Start(); err != nil {
			e.Close(ctx)
			return nil, err
		}
	}
	if err := e.WaitHealthy(ctx); err != nil {
		e.Close(ctx)
		return nil, err
	}
	return e, nil
}

// Endpoints are the client URLs of every member, running or not.
func (e *Etcd) Endpoints() []string {
	var eps []string
	for _, m := range e.Members {
		eps = append(eps, m.ClientURL)
	}
	return eps
}

// Client is a client of the whole cluster (every endpoint); the caller
// closes it.
func (e *Etcd) Client() (*clientv3.Client, error) {
	return newEtcdClient(e.Endpoints()...)
}

func newEtcdClient(endpoints ...string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
}

// status asks member m alone for its raft status.
func (m *EtcdMember) status(ctx context.Context) (*clientv3.StatusResponse, error) {
	c, err := newEtcdClient(m.ClientURL)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return c.Status(ctx, m.ClientURL)
}

// Leader asks every running member for its status and returns the member
// they name as leader; every answering member must name the same one.
func (e *Etcd) Leader(ctx context.Context) (*EtcdMember, error) {
	ids := map[uint64]*EtcdMember{}
	leaders := map[uint64]bool{}
	for _, m := range e.Members {
		if !m.Running() {
			continue
		}
		s, err := m.status(ctx)
		if err != nil {
			continue // paused or still starting: it has no say
		}
		ids[s.Header.MemberId] = m
		if s.Leader != 0 {
			leaders[s.Leader] = true
		}
	}
	if len(leaders) != 1 {
		return nil, fmt.Errorf("%w: members name %d leaders", ErrNoLeader, len(leaders))
	}
	for id := range leaders {
		if m := ids[id]; m != nil {
			return m, nil
		}
	}
	return nil, fmt.Errorf("%w: the named leader did not answer", ErrNoLeader)
}

// Follower returns a running member that is not the leader.
func (e *Etcd) Follower(ctx context.Context) (*EtcdMember, error) {
	l, err := e.Leader(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range e.Members {
		if m != l && m.Running() {
			return m, nil
		}
	}
	return nil, errors.New("cluster: no running follower")
}

// WaitHealthy waits until every running member answers, all agree on one
// leader, and a linearizable read through each running member succeeds.
func (e *Etcd) WaitHealthy(ctx context.Context) error {
	return Until(ctx, "a healthy etcd cluster", func(ctx context.Context) (bool, error) {
		if _, err := e.Leader(ctx); err != nil {
			return false, err
		}
		for _, m := range e.Members {
			if !m.Running() {
				continue
			}
			c, err := newEtcdClient(m.ClientURL)
			if err != nil {
				return false, err
			}
			rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_, err = c.Get(rctx, "health")
			cancel()
			c.Close()
			if err != nil {
				return false, fmt.Errorf("%s: %w", m.Name, err)
			}
		}
		return true, nil
	})
}

// Close terminates every member (SIGTERM, then SIGKILL after ctx), then
// closes the peer proxies.
func (e *Etcd) Close(ctx context.Context) {
	for _, m := range e.Members {
		if m.Process != nil {
			tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			m.Terminate(tctx)
			cancel()
		}
		if m.PeerProxy != nil {
			m.PeerProxy.Close()
		}
	}
}
