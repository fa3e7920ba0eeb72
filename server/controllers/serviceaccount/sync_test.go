package serviceaccount

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
)

// indexerOf is an informer's store holding objs.
func indexerOf(t *testing.T, objs ...any) cache.Indexer {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, o := range objs {
		if err := idx.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return idx
}

func TestSyncRootCA(t *testing.T) {
	ctx := context.Background()
	data := map[string]string{RootCAKey: "PEM"}

	client := fake.NewClientset()
	if err := syncRootCA(ctx, client, indexerOf(t), "ns", data); err != nil {
		t.Fatal(err)
	}
	cm, err := client.CoreV1().ConfigMaps("ns").Get(ctx, RootCAConfigMap, metav1.GetOptions{})
	if err != nil || cm.Data[RootCAKey] != "PEM" || cm.Annotations[DescriptionAnnotation] != Description {
		t.Fatalf("created %+v: %v", cm, err)
	}

	// Changed data is put back; a label its owner added stays.
	changed := cm.DeepCopy()
	changed.Data[RootCAKey] = "other"
	changed.Labels = map[string]string{"team": "a"}
	if _, err := client.CoreV1().ConfigMaps("ns").Update(ctx, changed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := syncRootCA(ctx, client, indexerOf(t, changed), "ns", data); err != nil {
		t.Fatal(err)
	}
	cm, _ = client.CoreV1().ConfigMaps("ns").Get(ctx, RootCAConfigMap, metav1.GetOptions{})
	if cm.Data[RootCAKey] != "PEM" || cm.Labels["team"] != "a" {
		t.Fatalf("after repair %+v", cm)
	}

	// Right already: no write.
	before := len(client.Actions())
	if err := syncRootCA(ctx, client, indexerOf(t, cm), "ns", data); err != nil || len(client.Actions()) != before {
		t.Fatalf("wrote an unchanged ConfigMap: %v, %d actions", err, len(client.Actions())-before)
	}
}

func TestSyncServiceAccount(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset()
	if err := syncServiceAccount(ctx, client, indexerOf(t), "ns"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().ServiceAccounts("ns").Get(ctx, DefaultServiceAccount, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	// Not yet in the informer's store: the create's AlreadyExists is fine.
	if err := syncServiceAccount(ctx, client, indexerOf(t), "ns"); err != nil {
		t.Fatal(err)
	}
	before := len(client.Actions())
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: DefaultServiceAccount}}
	if err := syncServiceAccount(ctx, client, indexerOf(t, sa), "ns"); err != nil || len(client.Actions()) != before {
		t.Fatalf("wrote although it exists: %v", err)
	}
}
