package printers

import (
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/resource"
)

// PLACEHOLDER: filled with kube-apiserver's columns in this session.

var placeholderColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metaDocs["name"]},
}

var ValidatingAdmissionPolicy = &resource.Printer[*admissionregistrationv1.ValidatingAdmissionPolicy]{Columns: placeholderColumns, Cells: func(r *admissionregistrationv1.ValidatingAdmissionPolicy, _ time.Time) []any { return []any{r.Name} }}
var ValidatingAdmissionPolicyBinding = &resource.Printer[*admissionregistrationv1.ValidatingAdmissionPolicyBinding]{Columns: placeholderColumns, Cells: func(r *admissionregistrationv1.ValidatingAdmissionPolicyBinding, _ time.Time) []any { return []any{r.Name} }}
var MutatingAdmissionPolicy = &resource.Printer[*admissionregistrationv1.MutatingAdmissionPolicy]{Columns: placeholderColumns, Cells: func(r *admissionregistrationv1.MutatingAdmissionPolicy, _ time.Time) []any { return []any{r.Name} }}
var MutatingAdmissionPolicyBinding = &resource.Printer[*admissionregistrationv1.MutatingAdmissionPolicyBinding]{Columns: placeholderColumns, Cells: func(r *admissionregistrationv1.MutatingAdmissionPolicyBinding, _ time.Time) []any { return []any{r.Name} }}
var ValidatingWebhookConfiguration = &resource.Printer[*admissionregistrationv1.ValidatingWebhookConfiguration]{Columns: placeholderColumns, Cells: func(r *admissionregistrationv1.ValidatingWebhookConfiguration, _ time.Time) []any { return []any{r.Name} }}
var MutatingWebhookConfiguration = &resource.Printer[*admissionregistrationv1.MutatingWebhookConfiguration]{Columns: placeholderColumns, Cells: func(r *admissionregistrationv1.MutatingWebhookConfiguration, _ time.Time) []any { return []any{r.Name} }}
