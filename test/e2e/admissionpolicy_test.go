package e2e

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
)

// databaseRules match writes of the example group's databases (and its
// subresources, when resources names them).
func databaseRules(resources ...string) *admissionregistrationv1.MatchResources {
	if len(resources) == 0 {
		resources = []string{"databases"}
	}
	return &admissionregistrationv1.MatchResources{
		NamespaceSelector: &metav1.LabelSelector{},
		ObjectSelector:    &metav1.LabelSelector{},
		MatchPolicy:       ptr.To(admissionregistrationv1.Equivalent),
		ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{examplev1.GroupName}, APIVersions: []string{"*"},
				Resources: resources, Scope: ptr.To(admissionregistrationv1.AllScopes)},
		}}},
	}
}

// policyEnv is a server with clients that record the warnings they get.
type policyEnv struct {
	t        *testing.T
	cfg      *rest.Config
	kc       kubernetes.Interface
	cs       versioned.Interface
	warnings *warningRecorder
}

func startPolicyServer(t *testing.T) (*policyEnv, *kubectlEnv) {
	ts, _ := startServer(t)
	warnings := &warningRecorder{}
	cfg := rest.CopyConfig(ts.Config)
	cfg.WarningHandlerWithContext = warnings
	ts.CreateNamespaces(t, "shop")
	return &policyEnv{t: t, cfg: ts.Config, kc: kubernetes.NewForConfigOrDie(cfg), cs: versioned.NewForConfigOrDie(cfg), warnings: warnings}, kubectlFor(t, ts)
}

// createPolicy creates a ValidatingAdmissionPolicy and its binding.
func (e *policyEnv) createPolicy(p *admissionregistrationv1.ValidatingAdmissionPolicy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	e.t.Helper()
	ctx := e.t.Context()
	if _, err := e.kc.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, p, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create policy %s: %v", p.Name, err)
	}
	if _, err := e.kc.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create binding %s: %v", b.Name, err)
	}
}

// createDatabase creates db in shop (dry run) until refused says its
// answer is what the policy gives: the policies take effect once the
// server's informers see them, as in kube-apiserver.
func (e *policyEnv) waitFor(what string, db func() *examplev1.Database, ok func(error) bool) {
	e.t.Helper()
	eventually(e.t, what, func(ctx context.Context) (bool, error) {
		_, err := e.cs.ExampleV1().Databases("shop").Create(ctx, db(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return ok(err), err
	})
	e.warnings.take()
}

func dbWithReplicas(name string, replicas int32) *examplev1.Database {
	db := newDatabase(name)
	db.Spec.Replicas = replicas
	return db
}

// TestValidatingAdmissionPolicy: a policy with a binding and a ConfigMap
// parameter refuses a Database write with its message (client-go and
// kubectl) and allows the rest; Warn gives the client a warning and
// changes nothing else; a parameter that is missing denies, as the
// binding's parameterNotFoundAction says.
func TestValidatingAdmissionPolicy(t *testing.T) {
	e, k := startPolicyServer(t)
	ctx := t.Context()
	if _, err := e.kc.CoreV1().ConfigMaps("shop").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "limits"},
		Data: map[string]string{"maxReplicas": "5"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.createPolicy(&admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "replica-limit"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
			ParamKind:        &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			MatchConstraints: databaseRules(),
			Validations: []admissionregistrationv1.Validation{{
				Expression:        "object.spec.replicas <= int(params.data.maxReplicas)",
				MessageExpression: "'replicas must be at most ' + params.data.maxReplicas + ', not ' + string(object.spec.replicas)",
				Reason:            ptr.To(metav1.StatusReasonInvalid),
			}},
		},
	}, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "replica-limit"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        "replica-limit",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			ParamRef: &admissionregistrationv1.ParamRef{Name: "limits", Namespace: "shop",
				ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction)},
			MatchResources: databaseRules(),
		},
	})
	e.waitFor("the policy to deny 9 replicas", func() *examplev1.Database { return dbWithReplicas("probe", 9) }, apierrors.IsInvalid)

	_, err := e.cs.ExampleV1().Databases("shop").Create(ctx, dbWithReplicas("big", 9), metav1.CreateOptions{})
	want := `databases.example.apiloom.dev "big" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: replicas must be at most 5, not 9`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Fatalf("create 9 replicas: %v\nwant %s", err, want)
	}
	if _, err := e.cs.ExampleV1().Databases("shop").Create(ctx, dbWithReplicas("small", 3), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create 3 replicas: %v", err)
	}
	// An update is matched too; kubectl shows the policy's message.
	out := k.runFail("-n", "shop", "patch", "database", "small", "--type=merge", "-p", `{"spec":{"replicas":6}}`)
	if !strings.Contains(out, "replicas must be at most 5, not 6") {
		t.Fatalf("kubectl patch: %s", out)
	}
	// Other kinds are not matched.
	if _, err := e.kc.CoreV1().ConfigMaps("shop").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "free"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The policy's expressions are type-checked against the Database
	// schema, and what is wrong is written into its status.
	e.createPolicy(&admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "mistyped"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			// Type checking needs the versions named, not "*".
			MatchConstraints: func() *admissionregistrationv1.MatchResources {
				r := databaseRules()
				r.ResourceRules[0].APIVersions = []string{"v1"}
				return r
			}(),
			Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas == 'three'"}},
		},
	}, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "mistyped"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "mistyped",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit}},
	})
	eventually(t, "the type checking in the policy's status", func(ctx context.Context) (bool, error) {
		p, err := e.kc.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, "mistyped", metav1.GetOptions{})
		if err != nil || p.Status.ObservedGeneration != 1 || p.Status.TypeChecking == nil {
			return false, err
		}
		w := p.Status.TypeChecking.ExpressionWarnings
		return len(w) == 1 && w[0].FieldRef == "spec.validations[0].expression" &&
			strings.Contains(w[0].Warning, "example.apiloom.dev/v1, Kind=Database") && strings.Contains(w[0].Warning, "no matching overload for '_==_'"), nil
	})

	// The parameter gone: parameterNotFoundAction Deny refuses.
	if err := e.kc.CoreV1().ConfigMaps("shop").Delete(ctx, "limits", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the missing parameter to deny", func() *examplev1.Database { return dbWithReplicas("probe", 1) }, func(err error) bool {
		return err != nil && strings.Contains(err.Error(), "no params found for policy binding with `Deny` parameterNotFoundAction")
	})
}

// logCapture records the server's log records (handlers log through
// slog's default logger), for the duration of a test.
type logCapture struct {
	mu   sync.Mutex // guards buf
	buf  bytes.Buffer
	text slog.Handler
}

func captureLog(t *testing.T) *logCapture {
	c := &logCapture{}
	c.text = slog.NewTextHandler(lockedWriter{c}, nil)
	prev := slog.Default()
	slog.SetDefault(slog.New(c.text))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return c
}

// lockedWriter writes into the capture under its lock.
type lockedWriter struct{ c *logCapture }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	return w.c.buf.Write(p)
}

func (c *logCapture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// TestValidatingAdmissionPolicyWarnAndAudit: a binding with Warn and Audit
// lets the write through with the policy's message as a warning, and its
// audit annotations (the Audit action's and the policy's own) are logged,
// as the server has no audit log (with one, they are its event's:
// TestAuditAdmissionAnnotations).
func TestValidatingAdmissionPolicyWarnAndAudit(t *testing.T) {
	logs := captureLog(t)
	e, _ := startPolicyServer(t)
	ctx := t.Context()
	e.createPolicy(&admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "engine"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: databaseRules(),
			Validations:      []admissionregistrationv1.Validation{{Expression: "object.spec.engine == 'postgres'", Message: "only postgres is supported"}},
			AuditAnnotations: []admissionregistrationv1.AuditAnnotation{{Key: "engine", ValueExpression: "string(object.spec.engine)"}},
		},
	}, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "engine"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        "engine",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn, admissionregistrationv1.Audit},
			MatchResources:    databaseRules(),
		},
	})
	mysql := func() *examplev1.Database { db := newDatabase("probe"); db.Spec.Engine = "mysql"; return db }
	eventually(t, "the policy's warning", func(ctx context.Context) (bool, error) {
		_, err := e.cs.ExampleV1().Databases("shop").Create(ctx, mysql(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil && slices.ContainsFunc(e.warnings.take(), func(w string) bool { return strings.Contains(w, "only postgres") }), err
	})
	db := mysql()
	db.Name = "legacy"
	if _, err := e.cs.ExampleV1().Databases("shop").Create(ctx, db, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a Warn policy refused: %v", err)
	}
	want := "Validation failed for ValidatingAdmissionPolicy 'engine' with binding 'engine': only postgres is supported"
	if got := e.warnings.take(); !slices.Contains(got, want) {
		t.Fatalf("warnings %q, want %q", got, want)
	}
	var logged string
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "admission audit annotations") && strings.Contains(line, "name=legacy") {
			logged = line
		}
	}
	if !strings.Contains(logged, "engine/engine=mysql") || !strings.Contains(logged, `validation.policy.admission.k8s.io/validation_failure=`) ||
		!strings.Contains(logged, `only postgres is supported`) {
		t.Fatalf("the audit annotations of the write: %q", logged)
	}
	if _, err := e.cs.ExampleV1().Databases("shop").Create(ctx, newDatabase("pg"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := e.warnings.take(); len(got) != 0 {
		t.Fatalf("a passing write was warned: %q", got)
	}
}

// TestValidatingAdmissionPolicyStatusSubresource: a policy on
// databases/status applies to status writes only.
func TestValidatingAdmissionPolicyStatusSubresource(t *testing.T) {
	e, _ := startPolicyServer(t)
	ctx := t.Context()
	e.createPolicy(&admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "phase"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: databaseRules("databases/status"),
			Validations:      []admissionregistrationv1.Validation{{Expression: "object.status.phase != 'Failed'", Message: "no failed phase"}},
		},
	}, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "phase"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "phase",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}},
	})
	dbs := e.cs.ExampleV1().Databases("shop")
	db, err := dbs.Create(ctx, newDatabase("orders"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the status policy to deny", func(ctx context.Context) (bool, error) {
		cur, err := dbs.Get(ctx, "orders", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		cur.Status.Phase = "Failed"
		_, err = dbs.UpdateStatus(ctx, cur, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		return apierrors.IsInvalid(err) && strings.Contains(err.Error(), "no failed phase"), err
	})
	// A main write is not a status write: a spec change passes, and the
	// status it would carry is not the policy's business.
	db.Spec.Replicas = 4
	if _, err := dbs.Update(ctx, db, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update of the main resource: %v", err)
	}
	cur, err := dbs.Get(ctx, "orders", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Status.Phase = "Ready"
	if _, err := dbs.UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("a passing status write: %v", err)
	}
}

// TestMutatingAdmissionPolicy: a MutatingAdmissionPolicy sets a label on
// create, by apply configuration and by JSON patch, and not on update.
func TestMutatingAdmissionPolicy(t *testing.T) {
	e, k := startPolicyServer(t)
	ctx := t.Context()
	create := func(name string, mutation admissionregistrationv1.Mutation) {
		rules := databaseRules()
		rules.ResourceRules[0].Operations = []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
		if _, err := e.kc.AdmissionregistrationV1().MutatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.MutatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
				FailurePolicy: ptr.To(admissionregistrationv1.Fail), MatchConstraints: rules,
				ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
				Mutations:          []admissionregistrationv1.Mutation{mutation},
			},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.kc.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.MutatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: name},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("tier", admissionregistrationv1.Mutation{
		PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
		ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{
			Expression: `Object{metadata: Object.metadata{labels: {"tier": object.spec.replicas > 3 ? "large" : "small"}}}`,
		},
	})
	create("owner", admissionregistrationv1.Mutation{
		PatchType: admissionregistrationv1.PatchTypeJSONPatch,
		JSONPatch: &admissionregistrationv1.JSONPatch{
			Expression: `[JSONPatch{op: "add", path: "/metadata/labels/replicas", value: "r" + string(object.spec.replicas)}]`,
		},
	})
	eventually(t, "both policies to mutate", func(ctx context.Context) (bool, error) {
		db, err := e.cs.ExampleV1().Databases("shop").Create(ctx, dbWithReplicas("probe", 5), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil && db.Labels["tier"] == "large" && db.Labels["replicas"] == "r5", err
	})
	db, err := e.cs.ExampleV1().Databases("shop").Create(ctx, dbWithReplicas("orders", 2), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if db.Labels["tier"] != "small" || db.Labels["replicas"] != "r2" || db.Labels["team"] != "checkout" {
		t.Fatalf("labels after create: %v", db.Labels)
	}
	// kubectl's create is mutated alike. (It carries labels: the policies
	// run in no set order, and the JSON patch's "add" needs the map.)
	k.runStdin(`{"apiVersion":"example.apiloom.dev/v1","kind":"Database","metadata":{"name":"by-kubectl","namespace":"shop","labels":{"team":"ops"}},"spec":{"engine":"postgres","replicas":4}}`, "create", "-f", "-")
	if out := k.run("-n", "shop", "get", "database", "by-kubectl", "-o", "jsonpath={.metadata.labels.tier}"); out != "large" {
		t.Fatalf("kubectl create's tier label: %q", out)
	}
	// Not on update: the label stays as created.
	db.Spec.Replicas = 9
	updated, err := e.cs.ExampleV1().Databases("shop").Update(ctx, db, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Labels["tier"] != "small" {
		t.Fatalf("tier after an update: %q", updated.Labels["tier"])
	}
	// As in kube-apiserver, the field manager records the request before
	// mutating admission: what a policy sets is owned by no manager.
	for _, mf := range db.ManagedFields {
		if strings.Contains(string(mf.FieldsV1.Raw), "tier") {
			t.Fatalf("the policy's label is owned by %s: %s", mf.Manager, mf.FieldsV1.Raw)
		}
	}
}
