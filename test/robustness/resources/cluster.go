package resources

import (
	"context"
	"errors"
	"net/http"
	"time"

	"k8s.io/client-go/rest"

	"github.com/apiloom/apiloom/test/robustness/cluster"
)

// ForCluster returns the probes of c: each replica's process and its
// /metrics (read as the replica's admin, with the client certificate of
// the kubeconfig it writes), and the /metrics of every running etcd
// member (served on its client URL).
func ForCluster(c *cluster.Cluster) (Probes, error) {
	var p Probes
	for _, r := range c.Replicas {
		cfg, err := r.Config()
		if err != nil {
			return p, err
		}
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return p, err
		}
		url := cfg.Host + "/metrics"
		p.Replicas = append(p.Replicas, Replica{
			Name: r.Name,
			Pid:  r.Pid,
			Goroutines: func(ctx context.Context) (int, error) {
				v, err := Gauge(ctx, hc, url, GoroutineMetric)
				return int(v), err
			},
		})
	}
	etcdHTTP := &http.Client{Timeout: time.Second}
	p.EtcdWatchers = func(ctx context.Context) (int, error) {
		sum, answered := 0, 0
		for _, m := range c.Etcd.Members {
			if !m.Running() {
				continue
			}
			v, err := Gauge(ctx, etcdHTTP, m.ClientURL+"/metrics", EtcdWatcherMetric)
			if err != nil {
				continue // paused, or dying: it holds no watcher anyone uses
			}
			sum += int(v)
			answered++
		}
		if answered == 0 {
			return 0, errors.New("resources: no etcd member answered")
		}
		return sum, nil
	}
	return p, nil
}
