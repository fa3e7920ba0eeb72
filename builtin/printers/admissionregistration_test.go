package printers

import (
	"slices"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAdmissionRegistrationTables: the cells kube-apiserver prints for
// webhook configurations (webhook count), policies (count and paramKind)
// and bindings (policy and each form of paramRef).
func TestAdmissionRegistrationTables(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := created.Add(3 * time.Hour)
	meta := metav1.ObjectMeta{Name: "x", CreationTimestamp: metav1.NewTime(created)}
	check := func(what string, got, want []any, columns []metav1.TableColumnDefinition) {
		t.Helper()
		if !slices.Equal(got, want) || len(columns) != len(got) {
			t.Errorf("%s: cells %q (%d columns), want %q", what, got, len(columns), want)
		}
	}
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: meta, Webhooks: make([]admissionregistrationv1.ValidatingWebhook, 2)}
	check("webhooks", ValidatingWebhookConfiguration.Cells(vwc, now), []any{"x", int64(2), "3h"}, ValidatingWebhookConfiguration.Columns)
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "y"}}
	check("webhooks without creation time", MutatingWebhookConfiguration.Cells(mwc, now), []any{"y", int64(0), "<unknown>"}, MutatingWebhookConfiguration.Columns)

	vap := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: meta, Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
		ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}, Validations: make([]admissionregistrationv1.Validation, 3)}}
	check("policy", ValidatingAdmissionPolicy.Cells(vap, now), []any{"x", int64(3), "v1/ConfigMap", "3h"}, ValidatingAdmissionPolicy.Columns)
	map_ := &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: meta, Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{Mutations: make([]admissionregistrationv1.Mutation, 1)}}
	check("mutating policy", MutatingAdmissionPolicy.Cells(map_, now), []any{"x", int64(1), "<unset>", "3h"}, MutatingAdmissionPolicy.Columns)
	if MutatingAdmissionPolicy.Columns[1].Name != "Mutations" || ValidatingAdmissionPolicy.Columns[1].Name != "Validations" {
		t.Errorf("policy count columns %q, %q", MutatingAdmissionPolicy.Columns[1].Name, ValidatingAdmissionPolicy.Columns[1].Name)
	}

	for _, c := range []struct {
		ref  *admissionregistrationv1.ParamRef
		want string
	}{
		{nil, "<unset>"},
		{&admissionregistrationv1.ParamRef{Name: "p", Namespace: "ns"}, "ns/p"},
		{&admissionregistrationv1.ParamRef{Name: "p"}, "*/p"},
		{&admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}},
			"&LabelSelector{MatchLabels:map[string]string{a: b,},MatchExpressions:[]LabelSelectorRequirement{},}"},
		{&admissionregistrationv1.ParamRef{}, "<unset>"},
	} {
		b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: meta, Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ParamRef: c.ref}}
		check("binding "+c.want, ValidatingAdmissionPolicyBinding.Cells(b, now), []any{"x", "p", c.want, "3h"}, ValidatingAdmissionPolicyBinding.Columns)
		mb := &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: meta, Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "p", ParamRef: c.ref}}
		check("mutating binding "+c.want, MutatingAdmissionPolicyBinding.Cells(mb, now), []any{"x", "p", c.want, "3h"}, MutatingAdmissionPolicyBinding.Columns)
	}
}
