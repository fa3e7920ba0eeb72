package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// ErrNoNetwork is returned by NetworkAvailable (and skips the network
// scenarios) when network namespaces cannot be made: not root, no ip(8),
// or a kernel without them.
var ErrNoNetwork = errors.New("cluster: network namespaces unavailable")

// Network puts each etcd member in a network namespace of its own, joined
// to the host by a veth pair on one bridge, so that a fault can cut a
// member off with blackhole routes (this kernel has no netem, so there is
// no tc-based loss; a blackhole route drops every packet to one address).
//
// Member i has the address 10.A.B.(10+i)/24, the host (apiloom replicas,
// the suite's clients) 10.A.B.1 on the bridge, A.B derived from the base
// port, and every name (namespaces, links) carries the base port, so that
// two runs on different base ports coexist. Member-to-member traffic is
// bridged (never routed by the host), so a cut between members is a
// blackhole route inside each namespace; a cut from the clients is one in
// the host namespace and one in the member's.
type Network struct {
	// Immutable after NewNetwork.
	prefix  string   // "apl<base>", every name starts with it
	bridge  string   // the bridge's name in the host namespace
	hostIP  string   // the host's address on the bridge
	ns, ips []string // member i's namespace and address

	// mu guards blackholes: the routes the faults have added and Heal
	// removes, in the order they were added.
	mu         sync.Mutex
	blackholes []blackhole
}

// blackhole is one route `ip route add blackhole dst/32` in namespace ns
// ("" is the host's).
type blackhole struct{ ns, dst string }

// NetworkAvailable says why network namespaces cannot be used here, or nil.
func NetworkAvailable() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: needs root (network namespaces, veth, routes)", ErrNoNetwork)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("%w: no ip(8) (iproute2): %v", ErrNoNetwork, err)
	}
	return nil
}

// NewNetwork makes the bridge and one namespace per member. Leftovers of
// an earlier run on the same base port (a killed test binary runs no
// cleanup) are removed first. On error, whatever was made is removed.
func NewNetwork(ctx context.Context, base, members int) (*Network, error) {
	if err := NetworkAvailable(); err != nil {
		return nil, err
	}
	// One /24 per block of 50 ports: runs on different base ports (and the
	// cluster package's own test, at base+50) never share a subnet.
	block := base / 50
	subnet := fmt.Sprintf("10.%d.%d", 200+block/256, block%256)
	n := &Network{prefix: fmt.Sprintf("apl%d", base), hostIP: subnet + ".1"}
	n.bridge = n.prefix + "br"
	for i := range members {
		n.ns = append(n.ns, fmt.Sprintf("%s-m%d", n.prefix, i))
		n.ips = append(n.ips, fmt.Sprintf("%s.%d", subnet, 10+i))
	}
	n.remove(ctx)
	if err := n.create(ctx); err != nil {
		n.remove(ctx)
		return nil, err
	}
	return n, nil
}

func (n *Network) create(ctx context.Context) error {
	steps := [][]string{
		{"link", "add", n.bridge, "type", "bridge"},
		{"addr", "add", n.hostIP + "/24", "dev", n.bridge},
		{"link", "set", n.bridge, "up"},
	}
	for i, ns := range n.ns {
		host, inner := fmt.Sprintf("%sv%d", n.prefix, i), fmt.Sprintf("%si%d", n.prefix, i)
		steps = append(steps,
			[]string{"netns", "add", ns},
			[]string{"link", "add", host, "type", "veth", "peer", "name", inner},
			[]string{"link", "set", inner, "netns", ns},
			[]string{"link", "set", host, "master", n.bridge},
			[]string{"link", "set", host, "up"},
			[]string{"-n", ns, "addr", "add", n.ips[i] + "/24", "dev", inner},
			[]string{"-n", ns, "link", "set", inner, "up"},
			[]string{"-n", ns, "link", "set", "lo", "up"},
		)
	}
	for _, s := range steps {
		if err := ip(ctx, s...); err != nil {
			return err
		}
	}
	return nil
}

// remove deletes the namespaces (and with them the veth pairs and any
// route inside) and the bridge; what does not exist is no error.
func (n *Network) remove(ctx context.Context) {
	for i, ns := range n.ns {
		_ = ip(ctx, "netns", "del", ns)
		_ = ip(ctx, "link", "del", fmt.Sprintf("%sv%d", n.prefix, i)) // if the namespace was never made
	}
	_ = ip(ctx, "link", "del", n.bridge)
	// Host routes to member addresses go with the bridge's subnet only if
	// they were via it: blackholes are dropped explicitly.
	for _, a := range n.ips {
		_ = ip(ctx, "route", "del", "blackhole", a+"/32")
	}
}

// Close removes everything NewNetwork and the faults made.
func (n *Network) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n.mu.Lock()
	n.blackholes = nil
	n.mu.Unlock()
	n.remove(ctx)
}

// IP is member i's address.
func (n *Network) IP(i int) string { return n.ips[i] }

// HostIP is the host's address on the bridge: what the members see as
// the source of the replicas' and the suite's connections.
func (n *Network) HostIP() string { return n.hostIP }

// Command is the command line that runs bin with args in member i's
// namespace. ip netns exec execs bin in place: the process is bin's,
// so signals (SIGKILL, SIGSTOP) reach it directly.
func (n *Network) Command(i int, bin string, args ...string) (string, []string) {
	return "ip", append([]string{"netns", "exec", n.ns[i], bin}, args...)
}

// Partition cuts member i off from the other members and from the host
// (the apiloom replicas and the suite), both ways, until Heal.
func (n *Network) Partition(ctx context.Context, i int) error {
	if err := n.PartitionPeers(ctx, i); err != nil {
		return err
	}
	return n.add(ctx, blackhole{"", n.ips[i]}, blackhole{n.ns[i], n.hostIP})
}

// PartitionPeers cuts member i off from the other members only, both ways:
// clients still reach it, and it answers them as a member without quorum.
func (n *Network) PartitionPeers(ctx context.Context, i int) error {
	var bs []blackhole
	for j := range n.ns {
		if j != i {
			bs = append(bs, blackhole{n.ns[i], n.ips[j]}, blackhole{n.ns[j], n.ips[i]})
		}
	}
	return n.add(ctx, bs...)
}

func (n *Network) add(ctx context.Context, bs ...blackhole) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, b := range bs {
		if err := ip(ctx, nsArgs(b.ns, "route", "add", "blackhole", b.dst+"/32")...); err != nil {
			return err
		}
		n.blackholes = append(n.blackholes, b)
	}
	return nil
}

// Heal removes every blackhole the faults added.
func (n *Network) Heal(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	var errs []error
	for _, b := range n.blackholes {
		if err := ip(ctx, nsArgs(b.ns, "route", "del", "blackhole", b.dst+"/32")...); err != nil {
			errs = append(errs, err)
		}
	}
	n.blackholes = nil
	return errors.Join(errs...)
}

func nsArgs(ns string, args ...string) []string {
	if ns == "" {
		return args
	}
	return append([]string{"-n", ns}, args...)
}

func ip(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("cluster: ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
