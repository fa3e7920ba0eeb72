package cluster

// Option shapes the cluster Start makes.
type Option func(*options)

type options struct {
	network       bool
	clientProxies bool
	peerProxies   bool
	// etcdArgs are added to every member's command line (cmd/etcd flags,
	// e.g. --quota-backend-bytes).
	etcdArgs []string
	// replicaArgs are added to every replica's command line; a flag given
	// twice takes the last value, so they override the suite's defaults.
	replicaArgs []string
	// prepareMemberDir, when set, is called with each member's index and
	// directory (created, empty) before the member first starts: e.g. to
	// mount a small filesystem there. The caller undoes what it did after
	// the cluster is closed.
	prepareMemberDir func(i int, dir string) error
}

// Ports of the proxies, from the base port: replica r reaches member i
// through clientProxyPortOffset+3r+i, peers reach member i through
// peerProxyPortOffset+i.
const (
	clientProxyPortOffset = 30
	peerProxyPortOffset   = 40
)

// WithNetwork puts each etcd member in a network namespace of its own
// (Cluster.Net), so that a scenario can partition it. Start skips the test
// when network namespaces cannot be made here (not root, no ip(8)).
func WithNetwork() Option { return func(o *options) { o.network = true } }

// WithClientProxies puts a Proxy between each replica and each member's
// client URL (Cluster.ClientProxies[r][i]): the replicas' --etcd-servers
// list the proxies.
func WithClientProxies() Option { return func(o *options) { o.clientProxies = true } }

// WithPeerProxies makes every peer connection to member i go through its
// EtcdMember.PeerProxy. Not with WithNetwork: the proxies are in the host
// namespace, where a partition between members would not cut them.
func WithPeerProxies() Option { return func(o *options) { o.peerProxies = true } }

// WithEtcdArgs adds args to every etcd member's command line.
func WithEtcdArgs(args ...string) Option {
	return func(o *options) { o.etcdArgs = append(o.etcdArgs, args...) }
}

// WithReplicaArgs adds args to every apiloom replica's command line.
func WithReplicaArgs(args ...string) Option {
	return func(o *options) { o.replicaArgs = append(o.replicaArgs, args...) }
}

// WithMemberDir has prepare called with each member's index and directory
// before the member first starts (e.g. to mount a small filesystem there).
func WithMemberDir(prepare func(i int, dir string) error) Option {
	return func(o *options) { o.prepareMemberDir = prepare }
}
