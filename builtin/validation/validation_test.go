package validation

import (
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// causes renders errs as "path: message" lines, as a 422's causes read.
func causes(errs field.ErrorList) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString(e.Error() + "\n")
	}
	return b.String()
}

func TestRules(t *testing.T) {
	frozen := &corev1.ConfigMap{Immutable: ptr.To(true), Data: map[string]string{"k": "v"}}
	for _, tc := range []struct {
		name string
		errs field.ErrorList
		want []string // substrings, one per expected cause; none: valid
	}{
		{"configmap ok", ConfigMap(&corev1.ConfigMap{Data: map[string]string{"a.b_c-d": "x"}}, nil), nil},
		{"configmap bad binary key", ConfigMap(&corev1.ConfigMap{BinaryData: map[string][]byte{"..": nil}}, nil), []string{"binaryData[..]: Invalid value"}},
		{"immutable configmap changed", ConfigMap(&corev1.ConfigMap{Data: map[string]string{"k": "w"}}, frozen),
			[]string{"immutable: Forbidden: field is immutable when `immutable` is set", "data: Forbidden: field is immutable when `immutable` is set"}},
		{"immutable configmap unchanged", ConfigMap(frozen.DeepCopy(), frozen), nil},
		{"secret over 1 MiB", Secret(&corev1.Secret{Data: map[string][]byte{"k": make([]byte, corev1.MaxSecretSize+1)}}, nil), []string{"data: Too long"}},
		{"secret type changed", Secret(&corev1.Secret{Type: corev1.SecretTypeOpaque}, &corev1.Secret{Type: "x.io/y"}), []string{"type: Invalid value"}},
		{"tls secret without keys", Secret(&corev1.Secret{Type: corev1.SecretTypeTLS}, nil), []string{"data[tls.crt]: Required value", "data[tls.key]: Required value"}},
		{"token secret without account", Secret(&corev1.Secret{Type: corev1.SecretTypeServiceAccountToken}, nil), []string{"metadata.annotations[kubernetes.io/service-account.name]: Required value"}},
		{"lease ok", Lease(&coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To[int32](15)}}, nil), nil},
		{"lease unknown strategy", Lease(&coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{Strategy: ptr.To[coordinationv1.CoordinatedLeaseStrategy]("Newest")}}, nil),
			[]string{`spec.strategy.strategy: Unsupported value: "Newest": supported values: "OldestEmulationVersion"`}},
		{"lease holder without strategy", Lease(&coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{PreferredHolder: ptr.To("a")}}, nil),
			[]string{"spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined"}},
		{"namespace ok", Namespace(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, nil), nil},
		{"namespace bad finalizer", Namespace(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"a b"}}}, nil),
			[]string{"spec.finalizers[0]: Invalid value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := causes(tc.errs)
			if len(tc.errs) != len(tc.want) {
				t.Fatalf("%d causes, want %d:\n%s", len(tc.errs), len(tc.want), got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("causes:\n%s\nwant one with %q", got, w)
				}
			}
		})
	}
}
