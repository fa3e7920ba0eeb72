// Command apiloom-gcbench measures garbage collection against any server
// a kubeconfig reaches (apiloom, or kube-apiserver with
// kube-controller-manager): it creates one owner ConfigMap and --count
// ConfigMaps owned by it, deletes the owner with propagationPolicy
// Background, and reports how long the dependents took to be collected.
//
//	apiloom-gcbench --kubeconfig .apiloom/kubeconfig --count 10000
//
// The collection time runs from the owner's DELETE until a list of the
// dependents (by label, metadata only, polled every --poll) is empty.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the server to measure")
	namespace := flag.String("namespace", "gcbench", "namespace to work in (created if missing)")
	count := flag.Int("count", 10000, "dependents of the owner")
	workers := flag.Int("workers", 32, "concurrent creates")
	poll := flag.Duration("poll", 100*time.Millisecond, "how often to count the dependents left")
	timeout := flag.Duration("timeout", 30*time.Minute, "give up after")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, *kubeconfig, *namespace, *count, *workers, *poll); err != nil {
		fmt.Fprintln(os.Stderr, "apiloom-gcbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, ns string, count, workers int, poll time.Duration) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = -1, 0 // measure the server, not client-side throttling
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	cms := kc.CoreV1().ConfigMaps(ns)
	owner, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner-" + run}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}
	label := map[string]string{"gcbench-run": run}
	start := time.Now()
	var failed atomic.Value
	workqueue.ParallelizeUntil(ctx, workers, count, func(i int) {
		_, err := cms.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("dep-%s-%d", run, i), Labels: label, OwnerReferences: []metav1.OwnerReference{ref}},
			Data:       map[string]string{"k": "v"},
		}, metav1.CreateOptions{})
		if err != nil {
			failed.CompareAndSwap(nil, err)
		}
	})
	if err, _ := failed.Load().(error); err != nil {
		return fmt.Errorf("creating dependents: %w", err)
	}
	fmt.Printf("created %d dependents in %v\n", count, time.Since(start).Round(time.Millisecond))

	dependents := mc.Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).Namespace(ns)
	selector := metav1.ListOptions{LabelSelector: "gcbench-run=" + run}
	start = time.Now()
	if err := cms.Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		return err
	}
	for {
		list, err := dependents.List(ctx, selector)
		if err != nil {
			return err
		}
		if len(list.Items) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), fmt.Errorf("%d dependents left", len(list.Items)))
		case <-time.After(poll):
		}
	}
	d := time.Since(start)
	fmt.Printf("collected %d dependents in %v (%.0f/s)\n", count, d.Round(time.Millisecond), float64(count)/d.Seconds())
	return nil
}
