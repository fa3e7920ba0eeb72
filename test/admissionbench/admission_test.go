package admissionbench

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/apiserver"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/server/admission/dynamic"
	"github.com/apiloom/apiloom/server/testserver"
)

const namespace = "bench"

// env is one running server and its clients.
type env struct {
	kc kubernetes.Interface
	cs versioned.Interface
	// seq numbers the Databases created, so every create is of a new name.
	seq atomic.Int64
}

func start(b *testing.B, opts ...testserver.Option) *env {
	b.Helper()
	ts := testserver.Start(b, apiserver.Install, opts...)
	ts.CreateNamespaces(b, namespace)
	return &env{kc: kubernetes.NewForConfigOrDie(ts.Config), cs: versioned.NewForConfigOrDie(ts.Config)}
}

func database(name string) *examplev1.Database {
	return &examplev1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": "checkout"}},
		Spec:       examplev1.DatabaseSpec{Engine: "postgres", Version: "16.4", Replicas: 3, StorageGiB: 100, Region: "eu-central"},
	}
}

// BenchmarkCreate times one create of a Database per op, in turn with
// dynamic admission off (all four plugins disabled: "none"), on with
// nothing configured ("empty"), with 1 and 10 ValidatingAdmissionPolicies
// that pass, with one validating webhook on 127.0.0.1 that allows, and
// with one MutatingAdmissionPolicy that adds a label. Each reports its
// ns/op as a ratio to none's ("x-none"). Each configuration is in effect
// before its timer starts: a dry-run create of a probe object shows it
// acting.
func BenchmarkCreate(b *testing.B) {
	off := start(b, testserver.WithDisabledAdmissionPlugins(dynamic.Names...))
	on := start(b)
	var none, noneCPU float64 // ns/op and CPU-ns/op of "none"
	// check, when not nil, is called after the timed creates with how
	// many ran.
	run := func(name string, e *env, check func(b *testing.B, n int)) {
		b.Run(name, func(b *testing.B) {
			ctx := b.Context()
			dbs := e.cs.ExampleV1().Databases(namespace)
			create := func() {
				if _, err := dbs.Create(ctx, database(fmt.Sprintf("db-%07d", e.seq.Add(1))), metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			// Untimed: connections, caches and the chain warm.
			for range warmup {
				create()
			}
			b.ReportAllocs()
			cpu := processCPU(b)
			b.ResetTimer()
			for b.Loop() {
				create()
			}
			b.StopTimer()
			if check != nil {
				check(b, b.N)
			}
			perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			cpuPerOp := float64(processCPU(b)-cpu) / float64(b.N)
			if name == "none" {
				none, noneCPU = perOp, cpuPerOp
			}
			b.ReportMetric(cpuPerOp, "cpu-ns/op")
			if none > 0 {
				b.ReportMetric(perOp/none, "x-none")
				b.ReportMetric(cpuPerOp/noneCPU, "cpu-x-none")
			}
		})
	}
	run("none", off, nil)
	run("empty", on, nil)

	on.addPolicies(b, 0, 1)
	run("policy-1", on, nil)
	on.addPolicies(b, 1, 10)
	run("policies-10", on, nil)
	on.deletePolicies(b, 10)

	hook := startWebhook(b)
	on.addWebhook(b, hook)
	run("webhook-1", on, func(b *testing.B, n int) {
		// Every create (and each warm-up) was reviewed.
		if calls := hook.calls.Swap(0); calls < int64(n) {
			b.Fatalf("the webhook reviewed %d of %d creates", calls, n)
		}
	})
	on.deleteWebhook(b)

	on.addMutatingPolicy(b)
	run("mutating-policy-1", on, nil)
}

// warmup is how many creates precede each timed run.
const warmup = 50

// processCPU is the CPU time this process (client, servers, webhook) has
// used: a create's cost, where its wall time is mostly etcd's fsync.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// probe is the name of the object that policy i denies (and the webhook
// every probe): a dry-run create of it shows the policy in effect, and
// no benchmark object has such a name.
func probe(i int) string { return fmt.Sprintf("probe-%d", i) }

// dryRun creates name without storing it.
func (e *env) dryRun(ctx context.Context, name string) (*examplev1.Database, error) {
	return e.cs.ExampleV1().Databases(namespace).Create(ctx, database(name), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
}

// eventually polls cond until it holds, failing the benchmark after 30s.
func eventually(b *testing.B, what string, cond func(ctx context.Context) bool) {
	b.Helper()
	err := wait.PollUntilContextTimeout(b.Context(), 10*time.Millisecond, 30*time.Second, true,
		func(ctx context.Context) (bool, error) { return cond(ctx), nil })
	if err != nil {
		b.Fatalf("timed out waiting for %s", what)
	}
}

// databaseRules match creates and updates of the example group's
// databases.
func databaseRules() *admissionregistrationv1.MatchResources {
	return &admissionregistrationv1.MatchResources{
		NamespaceSelector: &metav1.LabelSelector{},
		ObjectSelector:    &metav1.LabelSelector{},
		MatchPolicy:       ptr.To(admissionregistrationv1.Equivalent),
		ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{examplev1.GroupName}, APIVersions: []string{"*"},
				Resources: []string{"databases"}, Scope: ptr.To(admissionregistrationv1.AllScopes)},
		}}},
	}
}

// addPolicies creates policies from..to-1, each a ValidatingAdmissionPolicy
// of one expression, which every benchmark object passes, and a Deny
// binding, and waits until each denies its probe.
func (e *env) addPolicies(b *testing.B, from, to int) {
	b.Helper()
	ctx := b.Context()
	api := e.kc.AdmissionregistrationV1()
	for i := from; i < to; i++ {
		name := fmt.Sprintf("bench-%d", i)
		if _, err := api.ValidatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
				MatchConstraints: databaseRules(),
				Validations:      []admissionregistrationv1.Validation{{Expression: fmt.Sprintf("object.metadata.name != '%s'", probe(i))}},
			},
		}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		if _, err := api.ValidatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}},
		}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range to {
		eventually(b, "policy "+probe(i), func(ctx context.Context) bool {
			_, err := e.dryRun(ctx, probe(i))
			return err != nil && strings.Contains(err.Error(), "ValidatingAdmissionPolicy 'bench-")
		})
	}
}

// deletePolicies deletes policies 0..n-1 and their bindings and waits
// until none denies its probe.
func (e *env) deletePolicies(b *testing.B, n int) {
	b.Helper()
	ctx := b.Context()
	api := e.kc.AdmissionregistrationV1()
	for i := range n {
		name := fmt.Sprintf("bench-%d", i)
		if err := api.ValidatingAdmissionPolicyBindings().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			b.Fatal(err)
		}
		if err := api.ValidatingAdmissionPolicies().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range n {
		eventually(b, "policy "+probe(i)+" gone", func(ctx context.Context) bool {
			_, err := e.dryRun(ctx, probe(i))
			return err == nil
		})
	}
}

// webhook is a validating webhook on 127.0.0.1 over TLS that allows all
// but probes, and counts its calls.
type webhook struct {
	srv   *httptest.Server
	caPEM []byte
	calls atomic.Int64
}

func startWebhook(b *testing.B) *webhook {
	w := &webhook{}
	w.srv = httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(rw, "bad review", http.StatusBadRequest)
			return
		}
		w.calls.Add(1)
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: !strings.HasPrefix(review.Request.Name, "probe-")}
		if !resp.Allowed {
			resp.Result = &metav1.Status{Message: "probes are denied"}
		}
		review.Request, review.Response = nil, resp
		_ = json.NewEncoder(rw).Encode(&review)
	}))
	b.Cleanup(w.srv.Close)
	w.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: w.srv.Certificate().Raw})
	return w
}

const webhookName = "bench.example.apiloom.dev"

// addWebhook registers w for creates of databases and waits until it
// denies a probe.
func (e *env) addWebhook(b *testing.B, w *webhook) {
	b.Helper()
	_, err := e.kc.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(b.Context(), &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: webhookName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         webhookName,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(w.srv.URL + "/validate"), CABundle: w.caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{examplev1.GroupName}, APIVersions: []string{"v1"},
					Resources: []string{"databases"}, Scope: ptr.To(admissionregistrationv1.NamespacedScope)},
			}},
			FailurePolicy: ptr.To(admissionregistrationv1.Fail), MatchPolicy: ptr.To(admissionregistrationv1.Equivalent),
			NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), TimeoutSeconds: ptr.To[int32](10),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	eventually(b, "the webhook", func(ctx context.Context) bool {
		_, err := e.dryRun(ctx, probe(0))
		return err != nil && strings.Contains(err.Error(), "probes are denied")
	})
	w.calls.Store(0)
}

func (e *env) deleteWebhook(b *testing.B) {
	b.Helper()
	if err := e.kc.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(b.Context(), webhookName, metav1.DeleteOptions{}); err != nil {
		b.Fatal(err)
	}
	eventually(b, "the webhook gone", func(ctx context.Context) bool {
		_, err := e.dryRun(ctx, probe(0))
		return err == nil
	})
}

// addMutatingPolicy adds a MutatingAdmissionPolicy that labels every
// Database and waits until a dry-run create comes back labelled.
func (e *env) addMutatingPolicy(b *testing.B) {
	b.Helper()
	ctx := b.Context()
	api := e.kc.AdmissionregistrationV1()
	const name = "bench-label"
	if _, err := api.MutatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail), MatchConstraints: databaseRules(),
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
			Mutations: []admissionregistrationv1.Mutation{{
				PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{
					Expression: `Object{metadata: Object.metadata{labels: {"admitted": "yes"}}}`,
				},
			}},
		},
	}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := api.MutatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.MutatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: name},
	}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	eventually(b, "the mutating policy", func(ctx context.Context) bool {
		db, err := e.dryRun(ctx, probe(0))
		return err == nil && db.Labels["admitted"] == "yes"
	})
}
