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
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the server's kubeconfig (a loopback server)")
	objects := flag.Int("objects", 10000, "ConfigMaps in the namespace")
	workers := flag.Int("workers", 32, "concurrent creates")
	timeout := flag.Duration("timeout", 30*time.Minute, "give up after this long")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, *kubeconfig, *objects, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "apiloom-nsdelete:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig string, objects, workers int) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	if err := checkLoopback(cfg.Host); err != nil {
		return err
	}
	cfg.QPS, cfg.UserAgent = -1, "apiloom-nsdelete"
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ns := "nsdelete-" + rand.String(6)
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	start := time.Now()
	if err := createConfigMaps(ctx, kc, ns, objects, workers); err != nil {
		return err
	}
	created := time.Since(start)

	// Watch the namespace from now, so its removal is seen as it happens.
	w, err := kc.CoreV1().Namespaces().Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", ns).String()})
	if err != nil {
		return err
	}
	defer w.Stop()
	start = time.Now()
	if err := kc.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		return err
	}
	if err := waitDeleted(ctx, kc, w, ns); err != nil {
		return err
	}
	fmt.Printf("server=%s objects=%d create=%s delete-namespace=%s\n", cfg.Host, objects,
		created.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	return nil
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
