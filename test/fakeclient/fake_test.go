// Package fakeclient shows that the generated fake clientset and informer
// factory work for the example types, for users' unit tests that need no
// server at all.
package fakeclient

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned/fake"
	"github.com/apiloom/apiloom/generated/informers/externalversions"
)

func TestFakeClientsetAndInformer(t *testing.T) {
	ctx := t.Context()
	cs := fake.NewClientset(&examplev1.Region{ObjectMeta: metav1.ObjectMeta{Name: "eu-central"}})

	factory := externalversions.NewSharedInformerFactory(cs, 0)
	dbInformer := factory.Example().V1().Databases()
	seen := make(chan string, 10)
	if _, err := dbInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { seen <- obj.(*examplev1.Database).Name },
	}); err != nil {
		t.Fatal(err)
	}
	regionLister := factory.Example().V1().Regions().Lister()
	informerCtx, stop := context.WithCancel(ctx)
	defer func() { stop(); factory.Shutdown() }()
	factory.Start(informerCtx.Done())
	factory.WaitForCacheSync(ctx.Done())

	if _, err := regionLister.Get("eu-central"); err != nil {
		t.Fatalf("region lister: %v", err)
	}

	db := &examplev1.Database{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "shop"}, Spec: examplev1.DatabaseSpec{Engine: "postgres"}}
	if _, err := cs.ExampleV1().Databases("shop").Create(ctx, db, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := cs.ExampleV1().Databases("shop").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Spec.Engine != "postgres" {
		t.Fatalf("list: %v %+v", err, list)
	}
	select {
	case name := <-seen:
		if name != "orders" {
			t.Fatalf("informer saw %q", name)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("informer did not see the created database within 30s")
	}
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, err := dbInformer.Lister().Databases("shop").Get("orders")
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("lister never had the database: %v", err)
	}
}
