// Command firstclient is the program of docs/first-client.md: it writes a
// Region and a Database with the generated typed clientset, reads the
// Database from an informer's lister, and lists Databases with a
// controller-runtime client. Start the server (make run), then:
//
//	go run ./examples/firstclient --kubeconfig .apiloom/kubeconfig
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/generated/informers/externalversions"
)

func main() {
	kubeconfig := flag.String("kubeconfig", ".apiloom/kubeconfig", "the kubeconfig the server wrote")
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run does the three things of the page against the server cfg reaches.
// It can run again and again: what exists already is read, not created.
func run(ctx context.Context, cfg *rest.Config, out io.Writer) error {
	// 1. The typed clientset (generated/clientset/versioned).
	clientset, err := versioned.NewForConfig(cfg)
	if err != nil {
		return err
	}
	region := &examplev1.Region{
		ObjectMeta: metav1.ObjectMeta{Name: "eu-west"},
		Spec:       examplev1.RegionSpec{DisplayName: "Dublin", Provider: "aws", Zones: []string{"eu-west-1a", "eu-west-1b"}},
	}
	_, err = clientset.ExampleV1().Regions().Create(ctx, region, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	db := &examplev1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: "billing", Namespace: "default"},
		Spec:       examplev1.DatabaseSpec{Engine: "postgres", Version: "16.4", Region: "eu-west"},
	}
	created, err := clientset.ExampleV1().Databases("default").Create(ctx, db, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = clientset.ExampleV1().Databases("default").Get(ctx, "billing", metav1.GetOptions{})
	}
	if err != nil {
		return err
	}
	// The server defaulted what the request left out (+kubebuilder:default).
	fmt.Fprintf(out, "clientset: database default/billing, %d replica(s), %d GiB, resourceVersion %s\n",
		created.Spec.Replicas, created.Spec.StorageGiB, created.ResourceVersion)

	// 2. An informer factory (generated/informers/externalversions) and
	// the lister of its Database informer (generated/listers), which
	// reads the informer's local cache: no request to the server.
	factory := externalversions.NewSharedInformerFactory(clientset, 10*time.Minute)
	databases := factory.Example().V1().Databases()
	// A cache is filled by a list and a watch, so it can lag a write that
	// has just returned: wait until it has seen this one.
	seen := make(chan struct{})
	markSeen := sync.OnceFunc(func() { close(seen) })
	_, err = databases.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if d := obj.(*examplev1.Database); d.Namespace == "default" && d.Name == "billing" {
				markSeen()
			}
		},
	})
	if err != nil {
		return err
	}
	informersCtx, stopInformers := context.WithCancel(ctx)
	defer factory.Shutdown() // second: waits for the informers' goroutines
	defer stopInformers()    // first
	factory.Start(informersCtx.Done())
	select {
	case <-seen:
	case <-ctx.Done():
		return ctx.Err()
	}
	cached, err := databases.Lister().Databases("default").Get("billing")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "lister: database default/billing in region %s, engine %s %s\n",
		cached.Spec.Region, cached.Spec.Engine, cached.Spec.Version)

	// 3. A controller-runtime client, with a scheme that knows the kinds
	// (the AddToScheme of each apis/<group>/<version>). spec.region is a
	// field selector because of +kubebuilder:selectablefield.
	scheme := runtime.NewScheme()
	if err := examplev1.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	var inRegion examplev1.DatabaseList
	if err := c.List(ctx, &inRegion, client.InNamespace("default"), client.MatchingFields{"spec.region": "eu-west"}); err != nil {
		return err
	}
	for _, d := range inRegion.Items {
		fmt.Fprintf(out, "controller-runtime: database %s/%s in region eu-west\n", d.Namespace, d.Name)
	}
	if len(inRegion.Items) == 0 {
		return errors.New("controller-runtime: no database in region eu-west")
	}
	return nil
}
