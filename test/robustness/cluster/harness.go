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
func Start(t testing.TB, options ...Option) *Cluster {
	t.Helper()
	var opts Options
	for _, o := range options {
		o(&opts)
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
	if c.Etcd, err = startEtcd(ctx, bins.Etcd, dir, 3, base, opts); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		r, err := StartReplica(ctx, bins.Apiloom, dir, fmt.Sprintf("apiloom%d", i), base+replicaPortOffset+i, c.Etcd.Endpoints(), opts.ReplicaArgs...)
		if err != nil {
			t.Fatal(err)
		}
		c.Replicas = append(c.Replicas, r)
	}
	return c
}

// Close terminates the replicas, then the etcd members.
func (c *Cluster) Close() {
	ctx := context.Background()
	for _, r := range c.Replicas {
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		r.Terminate(tctx)
		cancel()
	}
	if c.Etcd != nil {
		c.Etcd.Close(ctx)
	}
}
