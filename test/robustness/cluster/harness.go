package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Binaries are the executables the suite runs: apiloom (cmd/apiloom) and
// one etcd member (test/robustness/cmd/etcd).
type Binaries struct {
	Apiloom, Etcd string
}

// FindBinaries takes $APILOOM_BIN and $ROBUSTNESS_ETCD_BIN (hack/robustness.sh
// builds them once), and builds what is missing into dir.
func FindBinaries(ctx context.Context, dir string) (Binaries, error) {
	b := Binaries{Apiloom: os.Getenv("APILOOM_BIN"), Etcd: os.Getenv("ROBUSTNESS_ETCD_BIN")}
	root, err := repoRoot()
	if err != nil {
		return b, err
	}
	for _, x := range []struct {
		path *string
		pkg  string // relative to the repository's root
		name string
	}{
		{&b.Apiloom, "./cmd/apiloom", "apiloom"},
		{&b.Etcd, "./test/robustness/cmd/etcd", "etcd"},
	} {
		if *x.path != "" {
			continue
		}
		out := filepath.Join(dir, x.name)
		// Each in the module it belongs to: go build -C enters its directory.
		modDir, pkg := root, x.pkg
		if strings.HasPrefix(pkg, "./test/robustness/") {
			modDir, pkg = filepath.Join(root, "test/robustness"), "./"+strings.TrimPrefix(pkg, "./test/robustness/")
		}
		if msg, err := exec.CommandContext(ctx, "go", "build", "-C", modDir, "-o", out, pkg).CombinedOutput(); err != nil {
			return b, fmt.Errorf("cluster: go build %s: %v\n%s", x.pkg, err, msg)
		}
		*x.path = out
	}
	return b, nil
}

// repoRoot walks up from the working directory (a package of this module,
// as go test runs it) to apiloom's go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(b), "module github.com/apiloom/apiloom\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("cluster: no apiloom go.mod above the working directory")
		}
		dir = parent
	}
}

// Cluster is the suite's system under test: a 3-member etcd cluster and
// two apiloom replicas on it.
type Cluster struct {
	Etcd     *Etcd
	Replicas []*Replica
	Dir      string
	// Net holds the members' network namespaces (WithNetwork), else nil.
	Net *Network
	// ClientProxies[r][i] is replica r's link to member i
	// (WithClientProxies), else nil.
	ClientProxies [][]*Proxy
}

// Ports the suite uses by default: etcd members from defaultBasePort (two
// each), apiloom replicas from defaultBasePort+replicaPortOffset.
// $ROBUSTNESS_BASE_PORT moves the whole range (100 ports), so that two runs
// can share a machine.
const (
	defaultBasePort   = 18400
	replicaPortOffset = 20
)

// basePort is $ROBUSTNESS_BASE_PORT, or defaultBasePort.
func basePort() (int, error) {
	v := os.Getenv("ROBUSTNESS_BASE_PORT")
	if v == "" {
		return defaultBasePort, nil
	}
	p, err := strconv.Atoi(v)
	if err != nil || p < 1024 || p > 65535-100 {
		return 0, fmt.Errorf("cluster: ROBUSTNESS_BASE_PORT=%q: want a port in [1024, 65435]", v)
	}
	return p, nil
}

// Start starts the cluster in a temporary directory and stops every
// process when t ends. Logs are kept when t fails (their paths are logged).
// Everything the options make (namespaces, proxies) is removed then too.
func Start(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.network {
		if err := NetworkAvailable(); err != nil {
			t.Skipf("network faults: %v", err)
		}
		if o.peerProxies {
			t.Fatal("cluster: WithPeerProxies and WithNetwork do not go together")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "apiloom-robustness-")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Dir: dir}
	t.Cleanup(func() {
		c.Close()
		if t.Failed() {
			t.Logf("logs kept in %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	base, err := basePort()
	if err != nil {
		t.Fatal(err)
	}
	bins, err := FindBinaries(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	layout := etcdLayout{size: 3, base: base, etcdArgs: o.etcdArgs, prepareDir: o.prepareMemberDir}
	if o.network {
		if c.Net, err = NewNetwork(ctx, base, layout.size); err != nil {
			t.Fatal(err)
		}
		layout.net = c.Net
	}
	if o.peerProxies {
		layout.peerProxyPort = base + peerProxyPortOffset
	}
	if c.Etcd, err = startEtcd(ctx, bins.Etcd, dir, layout); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		endpoints := c.Etcd.Endpoints()
		if o.clientProxies {
			c.ClientProxies = append(c.ClientProxies, nil)
			for m, ep := range endpoints {
				p, err := startProxy(ctx, base+clientProxyPortOffset+3*i+m, ep)
				if err != nil {
					t.Fatal(err)
				}
				c.ClientProxies[i] = append(c.ClientProxies[i], p)
				endpoints[m] = p.URL
			}
		}
		r, err := StartReplica(ctx, bins.Apiloom, dir, fmt.Sprintf("apiloom%d", i), base+replicaPortOffset+i, endpoints, o.replicaArgs...)
		if err != nil {
			t.Fatal(err)
		}
		c.Replicas = append(c.Replicas, r)
	}
	return c
}

// Close terminates the replicas, then the etcd members, and removes the
// proxies and the network.
func (c *Cluster) Close() {
	ctx := context.Background()
	for _, r := range c.Replicas {
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		r.Terminate(tctx)
		cancel()
	}
	for _, ps := range c.ClientProxies {
		for _, p := range ps {
			p.Close()
		}
	}
	if c.Etcd != nil {
		c.Etcd.Close(ctx)
	}
	if c.Net != nil {
		c.Net.Close()
	}
}
