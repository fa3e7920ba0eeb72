package printers

import (
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/apiloom/apiloom/server/resource"
)

// The Tables kube-apiserver answers for admissionregistration.k8s.io
// (pkg/printers/internalversion): a configuration's number of webhooks, a
// policy's number of validations or mutations and its paramKind, a
// binding's policy and paramRef, each with the name and the age.

// webhookColumns are a webhook configuration's columns (kubectl's NAME,
// WEBHOOKS, AGE).
var webhookColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metaDocs["name"]},
	{Name: "Webhooks", Type: "integer", Description: "Webhooks indicates the number of webhooks registered in this configuration"},
	{Name: "Age", Type: "string", Description: metaDocs["creationTimestamp"]},
}

// policyColumns are a policy's columns, counted names the number column
// ("Validations", "Mutations") and countDoc describes it.
func policyColumns(counted, countDoc string) []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: metaDocs["name"]},
		{Name: counted, Type: "integer", Description: countDoc},
		{Name: "ParamKind", Type: "string", Description: "ParamKind specifies the kind of resources used to parameterize this policy"},
		{Name: "Age", Type: "string", Description: metaDocs["creationTimestamp"]},
	}
}

// bindingPolicyColumns are a policy binding's columns.
var bindingPolicyColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metaDocs["name"]},
	{Name: "PolicyName", Type: "string", Description: "PolicyName indicates the policy definition which the policy binding binded to"},
	{Name: "ParamRef", Type: "string", Description: "ParamRef indicates the param resource which sets the configuration param"},
	{Name: "Age", Type: "string", Description: metaDocs["creationTimestamp"]},
}

// age is the time since m was created as kubectl shows it, "<unknown>"
// without a creation time.
func age(m metav1.Object, now time.Time) string {
	t := m.GetCreationTimestamp()
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// paramKindCell is a policy's paramKind as apiVersion/kind, or <unset>.
func paramKindCell(pk *admissionregistrationv1.ParamKind) string {
	if pk == nil {
		return "<unset>"
	}
	return pk.APIVersion + "/" + pk.Kind
}

// paramRefCell is a binding's paramRef: namespace/name (*/name without a
// namespace, which may be a cluster-scoped kind's), else the selector in
// its Go String form, as upstream prints it, else <unset>.
func paramRefCell(pr *admissionregistrationv1.ParamRef) string {
	switch {
	case pr == nil:
		return "<unset>"
	case pr.Name != "" && pr.Namespace != "":
		return pr.Namespace + "/" + pr.Name
	case pr.Name != "":
		return "*/" + pr.Name
	case pr.Selector != nil:
		return pr.Selector.String()
	}
	return "<unset>"
}

// ValidatingWebhookConfiguration is the Table of ValidatingWebhookConfigurations.
var ValidatingWebhookConfiguration = &resource.Printer[*admissionregistrationv1.ValidatingWebhookConfiguration]{
	Columns: webhookColumns,
	Cells: func(c *admissionregistrationv1.ValidatingWebhookConfiguration, now time.Time) []any {
		return []any{c.Name, int64(len(c.Webhooks)), age(c, now)}
	},
}

// MutatingWebhookConfiguration is the Table of MutatingWebhookConfigurations.
var MutatingWebhookConfiguration = &resource.Printer[*admissionregistrationv1.MutatingWebhookConfiguration]{
	Columns: webhookColumns,
	Cells: func(c *admissionregistrationv1.MutatingWebhookConfiguration, now time.Time) []any {
		return []any{c.Name, int64(len(c.Webhooks)), age(c, now)}
	},
}

// ValidatingAdmissionPolicy is the Table of ValidatingAdmissionPolicies.
var ValidatingAdmissionPolicy = &resource.Printer[*admissionregistrationv1.ValidatingAdmissionPolicy]{
	Columns: policyColumns("Validations", "Validations indicates the number of validation rules defined in this configuration"),
	Cells: func(p *admissionregistrationv1.ValidatingAdmissionPolicy, now time.Time) []any {
		return []any{p.Name, int64(len(p.Spec.Validations)), paramKindCell(p.Spec.ParamKind), age(p, now)}
	},
}

// MutatingAdmissionPolicy is the Table of MutatingAdmissionPolicies.
var MutatingAdmissionPolicy = &resource.Printer[*admissionregistrationv1.MutatingAdmissionPolicy]{
	Columns: policyColumns("Mutations", "Mutation indicates the number of mutations rules defined in this configuration"),
	Cells: func(p *admissionregistrationv1.MutatingAdmissionPolicy, now time.Time) []any {
		return []any{p.Name, int64(len(p.Spec.Mutations)), paramKindCell(p.Spec.ParamKind), age(p, now)}
	},
}

// ValidatingAdmissionPolicyBinding is the Table of ValidatingAdmissionPolicyBindings.
var ValidatingAdmissionPolicyBinding = &resource.Printer[*admissionregistrationv1.ValidatingAdmissionPolicyBinding]{
	Columns: bindingPolicyColumns,
	Cells: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, now time.Time) []any {
		return []any{b.Name, b.Spec.PolicyName, paramRefCell(b.Spec.ParamRef), age(b, now)}
	},
}

// MutatingAdmissionPolicyBinding is the Table of MutatingAdmissionPolicyBindings.
var MutatingAdmissionPolicyBinding = &resource.Printer[*admissionregistrationv1.MutatingAdmissionPolicyBinding]{
	Columns: bindingPolicyColumns,
	Cells: func(b *admissionregistrationv1.MutatingAdmissionPolicyBinding, now time.Time) []any {
		return []any{b.Name, b.Spec.PolicyName, paramRefCell(b.Spec.ParamRef), age(b, now)}
	},
}
