package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Replica is one apiloom server process on the external etcd cluster,
// with its own data directory (certificates, kubeconfig) and a fixed port,
// so that a restart serves at the same address with the same CA and its
// clients' kubeconfig stays valid.
type Replica struct {
	*Process
	Port int
	Dir  string
}

// StartReplica starts bin/apiloom serving on 127.0.0.1:port with
// --etcd-servers listing every endpoint, and waits until it is ready.
// Compaction is off so that the checkers can read etcd's whole history.
func StartReplica(ctx context.Context, bin, dir, name string, port int, etcdServers []string, extraArgs ...string) (*Replica, error) {
	rdir := filepath.Join(dir, name)
	if err := os.MkdirAll(rdir, 0o700); err != nil {
		return nil, err
	}
	args := append([]string{"--data-dir", rdir, "--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(port),
		"--etcd-servers", strings.Join(etcdServers, ","), "--etcd-compaction-interval", "0"}, extraArgs...)
	r := &Replica{Process: newProcess(name, bin, filepath.Join(dir, name+".log"), args...), Port: port, Dir: rdir}
	if err := r.Start(); err != nil {
		return nil, err
	}
	if err := r.WaitReady(ctx); err != nil {
		r.Terminate(ctx)
		return nil, err
	}
	return r, nil
}

// Config is a client configuration for the replica's admin user, read
// from the kubeconfig it writes at start.
func (r *Replica) Config() (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", r.KubeconfigPath())
}

// KubeconfigPath is where the replica writes its admin kubeconfig.
func (r *Replica) KubeconfigPath() string { return filepath.Join(r.Dir, "kubeconfig") }

// WaitReady waits until the running replica answers /readyz with 200.
func (r *Replica) WaitReady(ctx context.Context) error {
	return Until(ctx, r.Name+" ready", func(ctx context.Context) (bool, error) {
		if !r.Running() {
			return false, fmt.Errorf("%s exited (log: %s)", r.Name, r.logPath)
		}
		cfg, err := r.Config()
		if err != nil {
			return false, err
		}
		cfg.Timeout = 2 * time.Second
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return false, err
		}
		var code int
		res := dc.RESTClient().Get().AbsPath("/readyz").Do(ctx).StatusCode(&code)
		return code == 200, res.Error()
	})
}
