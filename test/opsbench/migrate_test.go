package opsbench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	svmv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/apiserver"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/server/testserver"
)

// BenchmarkMigrate times a storage version migration of b.N Databases,
// each stored under its former storage version's apiVersion (so each is
// written once), from the migration's create to its Succeeded: one op is
// one object migrated, in pages of the default 500.
func BenchmarkMigrate(b *testing.B) {
	ts := testserver.Start(b, apiserver.Install)
	ts.CreateNamespaces(b, namespace)
	ctx := b.Context()
	dbs := versioned.NewForConfigOrDie(ts.Config).ExampleV1().Databases(namespace)
	for i := range b.N {
		db := &examplev1.Database{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("db-%07d", i)},
			Spec: examplev1.DatabaseSpec{Engine: "postgres", Replicas: 3, Region: "eu-central"}}
		if _, err := dbs.Create(ctx, db, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{ts.Server.EtcdEndpoint()}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = etcd.Close() }()
	resp, err := etcd.Get(ctx, "/registry/example.apiloom.dev/databases/"+namespace+"/", clientv3.WithPrefix())
	if err != nil {
		b.Fatal(err)
	}
	for _, kv := range resp.Kvs {
		old := strings.Replace(string(kv.Value), `"apiVersion":"example.apiloom.dev/v1"`, `"apiVersion":"example.apiloom.dev/v2alpha1"`, 1)
		if _, err := etcd.Put(ctx, string(kv.Key), old); err != nil {
			b.Fatal(err)
		}
	}
	svms := kubernetes.NewForConfigOrDie(ts.Config).StoragemigrationV1().StorageVersionMigrations()
	cpu := processCPU(b)
	b.ResetTimer()
	_, err = svms.Create(ctx, &svmv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: "example.apiloom.dev", Resource: "databases"}}}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		s, err := svms.Get(ctx, "bench", metav1.GetOptions{})
		return err == nil && meta.IsStatusConditionTrue(s.Status.Conditions, string(svmv1.MigrationSucceeded)), nil
	})
	b.StopTimer()
	if err != nil {
		b.Fatal("the migration did not succeed:", err)
	}
	b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "objects/s")
}
