package endpoints

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	k8sadmission "k8s.io/apiserver/pkg/admission"

	"github.com/apiloom/apiloom/server/admission"
)

// TestLogAuditAnnotations: what admission plugins annotate a write with
// (a policy's audit annotations, its Audit action) is logged, sorted by
// key; a write without any logs nothing.
func TestLogAuditAnnotations(t *testing.T) {
	rec := k8sadmission.NewAttributesRecord(nil, nil, schema.GroupVersionKind{}, "shop", "orders",
		schema.GroupVersionResource{Group: "example.apiloom.dev", Version: "v1", Resource: "databases"}, "", k8sadmission.Create, nil, false, nil)
	a := &admission.Attributes{Attributes: rec}
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	logAuditAnnotations(t.Context(), log, a)
	if buf.Len() != 0 {
		t.Fatalf("logged without annotations: %s", buf.String())
	}
	if err := a.AddAnnotation("validation.policy.admission.k8s.io/validation_failure", `[{"message":"no"}]`); err != nil {
		t.Fatal(err)
	}
	if err := a.AddAnnotation("engine/engine", "mysql"); err != nil {
		t.Fatal(err)
	}
	logAuditAnnotations(t.Context(), log, a)
	got := buf.String()
	for _, want := range []string{`msg="admission audit annotations"`, "resource=databases.example.apiloom.dev", "name=orders",
		"engine/engine=mysql validation.policy.admission.k8s.io/validation_failure="} {
		if !strings.Contains(got, want) {
			t.Errorf("log %q lacks %q", got, want)
		}
	}
}
