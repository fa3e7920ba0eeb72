package cluster

// Options shape a cluster beyond its defaults, for the scenarios that need
// a different etcd or apiloom setup (a small etcd quota, a member's data
// on a small disk, a replica flag).
type Options struct {
	// EtcdArgs are added to every member's command line (cmd/etcd flags,
	// e.g. --quota-backend-bytes).
	EtcdArgs []string
	// ReplicaArgs are added to every replica's command line; a flag given
	// twice takes the last value, so they override the suite's defaults.
	ReplicaArgs []string
	// PrepareMemberDir, when set, is called with each member's index and
	// directory (created, empty) before the member first starts: e.g. to
	// mount a small filesystem there. The caller undoes what it did after
	// the cluster is closed.
	PrepareMemberDir func(i int, dir string) error
}

// Option sets one of Options.
type Option func(*Options)

// WithEtcdArgs adds args to every etcd member's command line.
func WithEtcdArgs(args ...string) Option {
	return func(o *Options) { o.EtcdArgs = append(o.EtcdArgs, args...) }
}

// WithReplicaArgs adds args to every apiloom replica's command line.
func WithReplicaArgs(args ...string) Option {
	return func(o *Options) { o.ReplicaArgs = append(o.ReplicaArgs, args...) }
}

// WithMemberDir sets Options.PrepareMemberDir.
func WithMemberDir(prepare func(i int, dir string) error) Option {
	return func(o *Options) { o.PrepareMemberDir = prepare }
}
