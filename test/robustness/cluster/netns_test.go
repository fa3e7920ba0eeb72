package cluster

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestNetworkPartition drives the network plumbing on a bare cluster in
// namespaces: a partitioned member is unreachable from the host and its
// peers elect (or keep) a leader without it; a member cut from its peers
// only still answers clients but has no leader; after Heal every member
// is reachable and agrees on a leader; Close leaves no namespace, link or
// route behind.
func TestNetworkPartition(t *testing.T) {
	skipUnlessRobustness(t)
	if err := NetworkAvailable(); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bins, err := FindBinaries(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	base, err := basePort()
	if err != nil {
		t.Fatal(err)
	}
	base += 50 // clear of the scenarios' ports and names
	n, err := NewNetwork(ctx, base, 3)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			n.Close()
		}
	}()
	e, err := startEtcd(ctx, bins.Etcd, dir, etcdLayout{size: 3, base: base, net: n})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())

	m := e.Members[0]
	if err := n.Partition(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if reachable(m.ClientURL) {
		t.Errorf("partitioned %s still accepts connections at %s", m.Name, m.ClientURL)
	}
	// The other two keep (or elect) a leader among themselves.
	err = Until(ctx, "a leader among the others", func(ctx context.Context) (bool, error) {
		l, err := e.Leader(ctx)
		return err == nil && l != m, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}

	// Cut from its peers only: clients reach it, it loses its leader.
	if err := n.PartitionPeers(ctx, 0); err != nil {
		t.Fatal(err)
	}
	err = Until(ctx, m.Name+" without a leader", func(ctx context.Context) (bool, error) {
		s, err := m.status(ctx)
		if err != nil {
			return false, err // it must keep answering
		}
		if s.Leader != 0 {
			return false, fmt.Errorf("%s still follows %x", m.Name, s.Leader)
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	e.Close(ctx)

	n.Close()
	closed = true
	out, err := exec.Command("ip", "-o", "link").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	ns, err := exec.Command("ip", "netns", "list").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	routes, err := exec.Command("ip", "route").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	for what, o := range map[string][]byte{"link": out, "netns": ns, "route": routes} {
		if strings.Contains(string(o), n.prefix) || strings.Contains(string(o), n.ips[0]) {
			t.Errorf("Close left a %s behind:\n%s", what, o)
		}
	}
}

// reachable reports whether a TCP connection to url's host opens within
// a second.
func reachable(url string) bool {
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(url, "http://"), time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
