package aggregation_test

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
)

// testHostPolicies: a ValidatingAdmissionPolicy made at the host, with a
// ConfigMap parameter of the host's, refuses writes of apiloom's
// Databases through the aggregator, as it would a CRD's: apiloom runs
// the host's policies and webhooks, as extension servers do.
func testHostPolicies(t *testing.T, kube kubernetes.Interface, cs versioned.Interface) {
	ctx := t.Context()
	if _, err := kube.CoreV1().ConfigMaps("team-b").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "limits"},
		Data: map[string]string{"maxReplicas": "3"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rules := &admissionregistrationv1.MatchResources{
		ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{examplev1.GroupName}, APIVersions: []string{"v1"}, Resources: []string{"databases"}},
		}}},
	}
	if _, err := kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "db-replicas"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			ParamKind:        &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			MatchConstraints: rules,
			Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= int(params.data.maxReplicas)",
				MessageExpression: "'at most ' + params.data.maxReplicas + ' replicas'"}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "db-replicas"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "db-replicas",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			ParamRef:          &admissionregistrationv1.ParamRef{Name: "limits", ParameterNotFoundAction: ptr.To(admissionregistrationv1.AllowAction)},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	db := func(name string, replicas int32) *examplev1.Database {
		return &examplev1.Database{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: examplev1.DatabaseSpec{Engine: "postgres", Replicas: replicas}}
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, last = cs.ExampleV1().Databases("team-b").Create(ctx, db("big", 5), metav1.CreateOptions{})
		return apierrors.IsInvalid(last) && strings.Contains(last.Error(), "at most 3 replicas"), nil
	})
	if err != nil {
		t.Fatalf("the host's policy did not refuse 5 replicas in team-b: %v", last)
	}
	if _, err := cs.ExampleV1().Databases("team-b").Create(ctx, db("small", 2), metav1.CreateOptions{}); err != nil {
		t.Fatalf("2 replicas in team-b: %v", err)
	}
	// The parameter is per namespace: team-c has none, and the binding
	// allows then.
	if _, err := cs.ExampleV1().Databases("team-c").Create(ctx, db("big", 5), metav1.CreateOptions{}); err != nil {
		t.Fatalf("5 replicas in team-c, which has no limits: %v", err)
	}
	for _, del := range []func() error{
		func() error {
			return kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, "db-replicas", metav1.DeleteOptions{})
		},
		func() error {
			return kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(ctx, "db-replicas", metav1.DeleteOptions{})
		},
	} {
		if err := del(); err != nil {
			t.Fatal(err)
		}
	}
}
