package cluster

// Option shapes the cluster Start makes.
type Option func(*options)

type options struct {
	network       bool
	clientProxies bool
	peerProxies   bool
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
