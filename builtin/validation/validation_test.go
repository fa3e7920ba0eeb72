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
		// Upstream's ValidateNamespace names the list, and a name without
		// a domain that is not a standard finalizer gets a second cause.
		{"namespace bad finalizer", Namespace(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"a b"}}}, nil),
			[]string{`spec.finalizers: Invalid value: "a b": name part must consist of`, `spec.finalizers: Invalid value: "a b": name is neither a standard finalizer name nor is it fully qualified`}},
		{"namespace standard and qualified finalizers", Namespace(&corev1.Namespace{Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"kubernetes", "orphan", "foregroundDeletion", "example.com/f"}}}, nil), nil},
		{"namespace unqualified finalizer", Namespace(&corev1.Namespace{Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"mine"}}}, nil),
			[]string{`spec.finalizers: Invalid value: "mine": name is neither a standard finalizer name nor is it fully qualified`}},
		// The finalize subresource's rule names the entry.
		{"namespace finalize bad finalizer", NamespaceFinalize(&corev1.Namespace{Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"kubernetes", "a b"}}}, nil),
			[]string{`spec.finalizers[1]: Invalid value: "a b": name part must consist of`, `spec.finalizers[1]: Invalid value: "a b": name is neither a standard`}},
		{"namespace status active", NamespaceStatus(&corev1.Namespace{Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}, nil), nil},
		{"namespace status terminating without deletion", NamespaceStatus(&corev1.Namespace{Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}, nil),
			[]string{"status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty"}},
		{"namespace status active while deleted", NamespaceStatus(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{}}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}, nil),
			[]string{"status.Phase: Invalid value: \"Active\": may only be 'Terminating' if `deletionTimestamp` is not empty"}},
		{"namespace status terminating while deleted", NamespaceStatus(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{}}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}, nil), nil},
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

// TestNamespaceName: a Namespace name is a DNS label: an upper-case one
// gets the label's message (not the subdomain's), one with a dot "must not
// contain dots", and a generateName prefix may end in "-".
func TestNamespaceName(t *testing.T) {
	for _, c := range []struct {
		name   string
		prefix bool
		want   string
	}{
		{"team-a", false, ""},
		{"team-", true, ""},
		{"UPPER", false, "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'"},
		{"a.b", false, "must not contain dots"},
	} {
		msgs := NamespaceName(c.name, c.prefix)
		if got := strings.Join(msgs, "; "); c.want == "" && got != "" || c.want != "" && (len(msgs) != 1 || !strings.HasPrefix(got, c.want)) {
			t.Errorf("NamespaceName(%q, %v) = %q, want %q", c.name, c.prefix, got, c.want)
		}
	}
}
