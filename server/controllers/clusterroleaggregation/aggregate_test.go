package clusterroleaggregation

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func role(name string, labels map[string]string, verbs ...string) *rbacv1.ClusterRole {
	r := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	for _, v := range verbs {
		r.Rules = append(r.Rules, rbacv1.PolicyRule{Verbs: []string{v}, APIGroups: []string{""}, Resources: []string{"configmaps"}})
	}
	return r
}

// TestAggregate: the rules of the matching roles, selector by selector
// and name by name, each once, never the aggregating role's own.
func TestAggregate(t *testing.T) {
	view := map[string]string{"view": "true"}
	edit := map[string]string{"edit": "true"}
	agg := role("agg", view, "own")
	agg.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
		{MatchLabels: edit}, {MatchLabels: view},
	}}
	all := []*rbacv1.ClusterRole{agg, role("z", view, "list"), role("a", view, "get", "list"), role("e", edit, "update", "get"), role("n", nil, "delete")}
	got, err := Aggregate(agg, all)
	if err != nil {
		t.Fatal(err)
	}
	want := []rbacv1.PolicyRule{role("", nil, "update", "get", "list").Rules[0], role("", nil, "update", "get", "list").Rules[1], role("", nil, "update", "get", "list").Rules[2]}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Fatalf("aggregated %+v\nwant %+v", got, want)
	}
	none := role("none", nil)
	none.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"x": "y"}}}}
	if got, err := Aggregate(none, all); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("no match: %v %v", got, err)
	}
	bad := role("bad", nil)
	bad.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Nope"}}}}}
	if _, err := Aggregate(bad, all); err == nil {
		t.Fatal("an invalid selector aggregated")
	}
}
