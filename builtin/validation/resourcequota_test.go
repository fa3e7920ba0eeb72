package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func quotaOf(hard map[string]string, scopes ...corev1.ResourceQuotaScope) *corev1.ResourceQuota {
	q := &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{}, Scopes: scopes}}
	for k, v := range hard {
		q.Spec.Hard[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	return q
}

// TestResourceQuotaRules: the causes kube-apiserver v1.37's
// ValidateResourceQuota and ValidateResourceQuotaUpdate give.
func TestResourceQuotaRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    *corev1.ResourceQuota
		old  *corev1.ResourceQuota
		want string
	}{
		{"count of a group's kind", quotaOf(map[string]string{"count/databases.example.apiloom.dev": "10"}), nil, ""},
		{"legacy names", quotaOf(map[string]string{"configmaps": "2", "secrets": "3", "pods": "1", "cpu": "500m"}), nil, ""},
		{"negative", quotaOf(map[string]string{"count/databases.example.apiloom.dev": "-1"}), nil,
			`spec.hard[count/databases.example.apiloom.dev]: Invalid value: "-1": must be greater than or equal to 0`},
		{"fraction of a counted resource", quotaOf(map[string]string{"configmaps": "1500m"}), nil,
			`spec.hard[configmaps]: Invalid value: "1500m": must be an integer`},
		{"fraction of an object count", quotaOf(map[string]string{"count/databases.example.apiloom.dev": "1500m"}), nil,
			`must be an integer`},
		{"unknown bare name", quotaOf(map[string]string{"databases": "1"}), nil,
			`spec.hard[databases]: Invalid value: "databases": must be a standard resource type or fully qualified`},
		{"storage is no quota resource", quotaOf(map[string]string{"storage": "1Gi"}), nil,
			`spec.hard[storage]: Invalid value: "storage": must be a standard resource for quota`},
		{"pod scope on an object count", quotaOf(map[string]string{"count/databases.example.apiloom.dev": "1"}, corev1.ResourceQuotaScopeTerminating), nil, ""},
		{"pod scope on configmaps", quotaOf(map[string]string{"configmaps": "1"}, corev1.ResourceQuotaScopeBestEffort), nil,
			`spec.scopes: Invalid value: ["BestEffort"]: unsupported scope applied to resource`},
		{"unknown scope", quotaOf(map[string]string{"pods": "1"}, "Sometimes"), nil,
			`spec.scopes: Invalid value: ["Sometimes"]: unsupported scope`},
		{"conflicting scopes", quotaOf(map[string]string{"pods": "1"}, corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating), nil,
			`conflicting scopes`},
		{"scopes are immutable", quotaOf(map[string]string{"pods": "1"}, corev1.ResourceQuotaScopeTerminating), quotaOf(map[string]string{"pods": "1"}),
			`spec.scopes: Invalid value: ["Terminating"]: field is immutable`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := ResourceQuota(tc.q, tc.old)
			got := errs.ToAggregate()
			switch {
			case tc.want == "" && got != nil:
				t.Fatalf("errors %v", got)
			case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
				t.Fatalf("errors %v\nwant %s", got, tc.want)
			}
		})
	}
}

// TestResourceQuotaScopeSelector: the selector's operators and values.
func TestResourceQuotaScopeSelector(t *testing.T) {
	q := quotaOf(map[string]string{"pods": "1"})
	q.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
		{ScopeName: corev1.ResourceQuotaScopeBestEffort, Operator: corev1.ScopeSelectorOpIn},
		{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpExists, Values: []string{"x"}},
	}}
	got := ResourceQuota(q, nil).ToAggregate()
	for _, want := range []string{
		`spec.scopeSelector.matchExpressions.operator: Invalid value: "In": must be 'Exists' when scope is any of`,
		`spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when`,
		`spec.scopeSelector.matchExpressions.values: Invalid value: ["x"]: must be no value when`,
	} {
		if got == nil || !strings.Contains(got.Error(), want) {
			t.Errorf("errors %v\nwant %s", got, want)
		}
	}
}

// TestResourceQuotaStatusRules: status writes hold quota resources with
// non-negative quantities.
func TestResourceQuotaStatusRules(t *testing.T) {
	q := quotaOf(nil)
	q.Status.Used = corev1.ResourceList{"count/databases.example.apiloom.dev": resource.MustParse("-2")}
	if got := ResourceQuotaStatus(q, q).ToAggregate(); got == nil || !strings.Contains(got.Error(), `status.used[count/databases.example.apiloom.dev]: Invalid value: "-2"`) {
		t.Fatalf("errors %v", got)
	}
	q.Status.Used = corev1.ResourceList{"count/databases.example.apiloom.dev": resource.MustParse("2")}
	if got := ResourceQuotaStatus(q, q); len(got) != 0 {
		t.Fatalf("errors %v", got)
	}
}
