// Command apiloom-nsdelete measures how long deleting a namespace takes:
// it creates a namespace holding --objects ConfigMaps, then times from the
// namespace's DELETE until the namespace is gone (its content deleted by
// the namespace controller, its "kubernetes" finalizer removed). It
// targets any kubeconfig, so the same run measures apiloom and
// kube-apiserver with kube-controller-manager:
//
//	apiloom-nsdelete --kubeconfig .apiloom/kubeconfig --objects 10000
//
// It prints one line: the server, the objects, the time to create them
// and the time to delete the namespace. Only loopback servers are
// accepted.
//
// Without --kubeconfig it starts apiloom itself, in this process, once for
// each of --delete-collection-workers (the server flag: how many
// goroutines a deletecollection, so the namespace controller's deletion
// of each resource, deletes with), measures each in turn on a fresh data
// directory, and reports each deletion time as a ratio to the first's:
//
//	apiloom-nsdelete --objects 10000 --delete-collection-workers 1,2,4,8
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	generated "github.com/apiloom/apiloom/generated/apiserver"
	"github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/registry"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the server's kubeconfig (a loopback server); empty starts apiloom in this process for each of --delete-collection-workers")
	objects := flag.Int("objects", 10000, "ConfigMaps in the namespace")
	workers := flag.Int("workers", 32, "concurrent creates")
	dcWorkers := flag.String("delete-collection-workers", "1,2,4,8", "without --kubeconfig: the values of apiloom's --delete-collection-workers to measure, comma separated; the first is the ratios' baseline")
	timeout := flag.Duration("timeout", 30*time.Minute, "give up after this long")
	flag.Parse()
	// The in-process servers' informers log through klog; the report is
	// the output.
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	var err error
	if *kubeconfig != "" {
		err = measureKubeconfig(ctx, *kubeconfig, *objects, *workers)
	} else {
		err = compareWorkers(ctx, *dcWorkers, *objects, *workers)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "apiloom-nsdelete:", err)
		os.Exit(1)
	}
}

func measureKubeconfig(ctx context.Context, kubeconfig string, objects, workers int) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	if err := checkLoopback(cfg.Host); err != nil {
		return err
	}
	r, err := run(ctx, cfg, objects, workers)
	if err != nil {
		return err
	}
	fmt.Printf("server=%s objects=%d create=%s delete-namespace=%s\n", cfg.Host, objects,
		r.created.Round(time.Millisecond), r.deleted.Round(time.Millisecond))
	return nil
}

// compareWorkers measures an in-process apiloom for each value of list
// (comma-separated --delete-collection-workers) and prints a line for
// each, with its deletion time as a ratio to the first's.
func compareWorkers(ctx context.Context, list string, objects, workers int) error {
	var values []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("--delete-collection-workers: %q is not a positive number", f)
		}
		values = append(values, n)
	}
	var base time.Duration
	for _, n := range values {
		r, err := measureApiloom(ctx, n, objects, workers)
		if err != nil {
			return fmt.Errorf("--delete-collection-workers=%d: %w", n, err)
		}
		if base == 0 {
			base = r.deleted
		}
		fmt.Printf("server=apiloom delete-collection-workers=%d objects=%d create=%s delete-namespace=%s objects/s=%.0f x-first=%.2f delete-cpu=%s cores-used=%.2f\n",
			n, objects, r.created.Round(time.Millisecond), r.deleted.Round(time.Millisecond),
			float64(objects)/r.deleted.Seconds(), float64(r.deleted)/float64(base),
			r.deleteCPU.Round(time.Millisecond), r.deleteCPU.Seconds()/r.deleted.Seconds())
	}
	return nil
}

// measureApiloom starts apiloom with dcWorkers delete-collection workers
// on a fresh data directory, measures it, and stops it.
func measureApiloom(ctx context.Context, dcWorkers, objects, workers int) (_ result, err error) {
	dir, err := os.MkdirTemp("", "apiloom-nsdelete-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	o := apiserver.DefaultOptions()
	o.DataDir, o.SecurePort, o.DeleteCollectionWorkers = dir, 0, dcWorkers
	reg := &registry.Registry{}
	generated.Install(reg)
	srv, err := apiserver.New(o, reg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return result{}, err
	}
	srvCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Run(srvCtx) }()
	defer func() {
		stop()
		if runErr := <-done; runErr != nil && err == nil {
			err = runErr
		}
	}()
	select {
	case <-srv.Ready():
	case err := <-done:
		done <- err // for the deferred wait
		return result{}, fmt.Errorf("server ended before serving: %w", err)
	case <-ctx.Done():
		return result{}, ctx.Err()
	}
	cfg := &rest.Config{Host: "https://" + srv.Address(), BearerToken: srv.Token(), TLSClientConfig: rest.TLSClientConfig{CAData: srv.CAPEM()}}
	return run(ctx, cfg, objects, workers)
}

// result is one measurement: the time to create the objects and the time
// from the namespace's DELETE until it is gone.
// deleteCPU is this process's CPU time during the deletion: the server's
// too when it runs in this process, which tells whether more workers had
// cores to use (a loaded machine's wall time says less).
type result struct{ created, deleted, deleteCPU time.Duration }

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func run(ctx context.Context, cfg *rest.Config, objects, workers int) (result, error) {
	cfg.QPS, cfg.UserAgent = -1, "apiloom-nsdelete"
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return result{}, err
	}
	ns := "nsdelete-" + rand.String(6)
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return result{}, err
	}
	start := time.Now()
	if err := createConfigMaps(ctx, kc, ns, objects, workers); err != nil {
		return result{}, err
	}
	created := time.Since(start)

	// Watch the namespace from now, so its removal is seen as it happens.
	w, err := kc.CoreV1().Namespaces().Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", ns).String()})
	if err != nil {
		return result{}, err
	}
	defer w.Stop()
	start, cpu := time.Now(), processCPU()
	if err := kc.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		return result{}, err
	}
	if err := waitDeleted(ctx, kc, w, ns); err != nil {
		return result{}, err
	}
	return result{created: created, deleted: time.Since(start), deleteCPU: processCPU() - cpu}, nil
}

// createConfigMaps creates n small ConfigMaps in ns with workers at once.
func createConfigMaps(ctx context.Context, kc kubernetes.Interface, ns string, n, workers int) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%06d", i)}, Data: map[string]string{"k": "v"}}
				if _, err := kc.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// waitDeleted waits for w, a watch of the namespace ns, to see it
// deleted; a watch that ends early is replaced by a read.
func waitDeleted(ctx context.Context, kc kubernetes.Interface, w watch.Interface, ns string) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.ResultChan():
			if ok && ev.Type == watch.Deleted {
				return nil
			}
			if ok {
				continue
			}
		}
		// The watch ended: read, then watch again.
		_, err := kc.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if w, err = kc.CoreV1().Namespaces().Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", ns).String()}); err != nil {
			return err
		}
		defer w.Stop()
	}
}

// checkLoopback accepts only a server on this machine.
func checkLoopback(server string) error {
	u, err := url.Parse(server)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("server %s is not on a loopback address", server)
	}
	return nil
}
