package quota

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/resourcequota"
	quotav1 "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/apiloom/apiloom/server/resource"
)

var databases = schema.GroupResource{Group: "example.apiloom.dev", Resource: "databases"}

func infos() []*resource.Info {
	return []*resource.Info{
		{Group: "example.apiloom.dev", Version: "v1", Kind: "Database", Plural: "databases", Namespaced: true},
		{Group: "example.apiloom.dev", Version: "v2alpha1", Kind: "Database", Plural: "databases", Namespaced: true},
		{Version: "v1", Kind: "ConfigMap", Plural: "configmaps", Namespaced: true},
		{Version: "v1", Kind: "Event", Plural: "events", Namespaced: true},
		{Group: "events.k8s.io", Version: "v1", Kind: "Event", Plural: "events", Namespaced: true},
		{Version: "v1", Kind: "Namespace", Plural: "namespaces"},
	}
}

// TestCounted: each namespaced resource once, events and cluster-scoped
// kinds left out.
func TestCounted(t *testing.T) {
	got := fmt.Sprint(Counted(infos()))
	if want := "[databases.example.apiloom.dev configmaps]"; got != want {
		t.Fatalf("counted %s, want %s", got, want)
	}
}

// TestEvaluatorNames: count/<resource>.<group>, count/<resource> for the
// core group, and the legacy name where upstream has one.
func TestEvaluatorNames(t *testing.T) {
	names := []corev1.ResourceName{"count/databases.example.apiloom.dev", "count/configmaps", "configmaps", "secrets", "databases"}
	var got []string
	for _, e := range Evaluators(Counted(infos()), nil) {
		got = append(got, fmt.Sprintf("%s=%v", e.GroupResource(), e.MatchingResources(names)))
	}
	if want := "databases.example.apiloom.dev=[count/databases.example.apiloom.dev] configmaps=[configmaps count/configmaps]"; strings.Join(got, " ") != want {
		t.Fatalf("got %s\nwant %s", strings.Join(got, " "), want)
	}
}

// TestUsage: the controller's usage of a quota counts the lister's
// objects for each hard resource it names; a pod scope matches no
// object count, as upstream's evaluator has it.
func TestUsage(t *testing.T) {
	list := func(gr schema.GroupResource) generic.ListFuncByNamespace {
		return func(ns string) ([]runtime.Object, error) {
			n := map[string]int{"databases": 3, "configmaps": 2}[gr.Resource]
			out := make([]runtime.Object, n)
			for i := range out {
				out[i] = &unstructured.Unstructured{}
			}
			return out, nil
		}
	}
	registry := generic.NewRegistry(Evaluators(Counted(infos()), list))
	hard := corev1.ResourceList{"count/databases.example.apiloom.dev": k8sresource.MustParse("10"), "configmaps": k8sresource.MustParse("5"), "pods": k8sresource.MustParse("1")}
	used, err := quotav1.CalculateUsage("ns", nil, hard, registry, nil)
	if err != nil {
		t.Fatal(err)
	}
	if db, cm := used["count/databases.example.apiloom.dev"], used["configmaps"]; db.Value() != 3 || cm.Value() != 2 || len(used) != 2 {
		t.Fatalf("used %v", used)
	}
	scoped, err := quotav1.CalculateUsage("ns", []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating}, hard, registry, nil)
	if err != nil {
		t.Fatal(err)
	}
	if q := scoped["count/databases.example.apiloom.dev"]; q.Value() != 0 {
		t.Fatalf("a pod scope counted %s databases", q.String())
	}
}

// plugin is upstream's ResourceQuota plugin as the server initializes
// it, over a fake clientset holding objs.
func plugin(tb testing.TB, objs ...runtime.Object) *resourcequota.QuotaAdmission {
	tb.Helper()
	client := fake.NewClientset(objs...)
	// The fake's tracker keeps resourceVersions as written; the plugin
	// tells its own writes from older cached quotas by them, as etcd's.
	var rv atomic.Int64
	rv.Store(1)
	client.PrependReactor("update", "resourcequotas", func(action k8stesting.Action) (bool, runtime.Object, error) {
		q := action.(k8stesting.UpdateAction).GetObject().(*corev1.ResourceQuota)
		q.ResourceVersion = strconv.FormatInt(rv.Add(1), 10)
		return false, nil, nil
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	p, err := resourcequota.NewResourceQuota(nil, 5)
	if err != nil {
		tb.Fatal(err)
	}
	// Cleanups run last first: the informers are stopped, then waited for.
	tb.Cleanup(factory.Shutdown)
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	p.SetDrainedNotification(ctx.Done())
	p.SetExternalKubeClientSet(client)
	p.SetExternalKubeInformerFactory(factory)
	p.SetQuotaConfiguration(Configuration(Counted(infos()), nil))
	if err := p.ValidateInitialization(); err != nil {
		tb.Fatal(err)
	}
	factory.Start(ctx.Done())
	for _, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			tb.Fatal("informers did not sync")
		}
	}
	return p
}

func dbCreate(ns, name string) admission.Attributes {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("example.apiloom.dev/v1")
	obj.SetKind("Database")
	obj.SetNamespace(ns)
	obj.SetName(name)
	return admission.NewAttributesRecord(obj, nil, schema.GroupVersionKind{Group: "example.apiloom.dev", Version: "v1", Kind: "Database"},
		ns, name, databases.WithVersion("v1"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
}

func dbQuota(ns string, hard, used int64) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "dbs", Namespace: ns, ResourceVersion: "1"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/databases.example.apiloom.dev": *k8sresource.NewQuantity(hard, k8sresource.DecimalSI)}},
		Status: corev1.ResourceQuotaStatus{
			Hard: corev1.ResourceList{"count/databases.example.apiloom.dev": *k8sresource.NewQuantity(hard, k8sresource.DecimalSI)},
			Used: corev1.ResourceList{"count/databases.example.apiloom.dev": *k8sresource.NewQuantity(used, k8sresource.DecimalSI)},
		}}
}

// TestPluginRefuses: with our evaluators, upstream's plugin charges a
// create of a user's kind to the quota and refuses the one beyond it
// with its 403.
func TestPluginRefuses(t *testing.T) {
	p := plugin(t, dbQuota("ns", 1, 0))
	if err := p.Validate(t.Context(), dbCreate("ns", "a"), nil); err != nil {
		t.Fatalf("first create: %v", err)
	}
	err := p.Validate(t.Context(), dbCreate("ns", "b"), nil)
	want := `databases.example.apiloom.dev "b" is forbidden: exceeded quota: dbs, requested: count/databases.example.apiloom.dev=1, used: count/databases.example.apiloom.dev=1, limited: count/databases.example.apiloom.dev=1`
	if err == nil || err.Error() != want {
		t.Fatalf("second create: %v\nwant %s", err, want)
	}
	if err := p.Validate(t.Context(), dbCreate("other", "b"), nil); err != nil {
		t.Fatalf("create in a namespace without quota: %v", err)
	}
}

// BenchmarkAdmitCreate is the plugin's cost of a create: in a namespace
// without quota, and in one with a quota of Databases, which each create
// charges (a status write, here to a fake clientset).
func BenchmarkAdmitCreate(b *testing.B) {
	for _, tc := range []struct {
		name string
		ns   string
	}{{"no-quota", "free"}, {"quota", "limited"}} {
		b.Run(tc.name, func(b *testing.B) {
			p := plugin(b, dbQuota("limited", 1<<40, 0))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if err := p.Validate(context.Background(), dbCreate(tc.ns, fmt.Sprint("db-", i)), nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
