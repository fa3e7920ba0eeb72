// Package controllers runs, inside the server, the control loops that
// kube-controller-manager would run beside kube-apiserver (namespace
// deletion, garbage collection). Each loop is a package under
// server/controllers/<name> implementing Controller; the assembly
// (server/apiserver) starts them once the server serves and stops them at
// shutdown. With several replicas on one etcd, exactly one runs them at a
// time: the one holding the controllers' Lease (client-go's leader
// election over this server's own coordination.k8s.io/v1 Leases).
//
// Controllers reach the server through a loopback client (Env.Config), so
// every change they make passes the same admission, finalizer and
// propagation rules as any client's, and every read is a list or watch
// served from the watch caches, never a poll of etcd.
package controllers

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"

	"github.com/apiloom/apiloom/server/resource"
)

// Controller is one control loop.
type Controller interface {
	// Name identifies the loop in logs ("garbage-collector").
	Name() string
	// Run works until ctx ends, then returns once every goroutine it
	// started has stopped. An error ends only this loop; the runner logs
	// it and restarts the loop after a pause.
	Run(ctx context.Context, env *Env) error
}

// Env is what a controller is given.
type Env struct {
	// Config reaches this server (loopback) with the admin's rights and no
	// client-side rate limit.
	Config *rest.Config
	// Resources are every resource the server serves, each version of a
	// kind its own entry.
	Resources []*resource.Info
	// RESTMapper maps the served kinds to their resources.
	RESTMapper meta.RESTMapper
	Log        *slog.Logger
}

// Election configures who runs the controllers among replicas. The
// defaults are kube-controller-manager's.
type Election struct {
	// Enabled runs the controllers only while this replica holds the
	// Lease; off, every replica runs them (one replica only).
	Enabled bool
	// Namespace and Name are the Lease's ("kube-system",
	// "apiloom-controllers").
	Namespace, Name string
	// LeaseDuration, RenewDeadline and RetryPeriod are client-go's leader
	// election durations (15s, 10s, 2s).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// DefaultElection is kube-controller-manager's leader election, on a Lease
// of apiloom's own.
func DefaultElection() Election {
	return Election{Enabled: true, Namespace: "kube-system", Name: "apiloom-controllers",
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}
}

// restartPause is how long a controller that failed waits before it runs
// again.
const restartPause = time.Second

// Run runs list in env until ctx ends: while this replica leads under e,
// or all the time when e is not enabled. It returns once every controller
// has stopped and, under e, the Lease has been released: a server calls it
// with a context that ends before its listener closes, so the release
// (through the server itself) is answered.
func Run(ctx context.Context, env *Env, e Election, list ...Controller) error {
	if len(list) == 0 {
		return nil
	}
	if !e.Enabled {
		runAll(ctx, env, list)
		return nil
	}
	return runElected(ctx, env, e, list)
}

// runAll runs every controller until ctx ends, restarting one that fails.
func runAll(ctx context.Context, env *Env, list []Controller) {
	var wg sync.WaitGroup
	for _, c := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				err := c.Run(ctx, env)
				if ctx.Err() != nil {
					return
				}
				if err == nil {
					err = errors.New("returned before the server stopped")
				}
				env.Log.Error("controller failed; restarting", "controller", c.Name(), "err", err)
				select {
				case <-ctx.Done():
					return
				case <-time.After(restartPause):
				}
			}
		}()
	}
	wg.Wait()
}
