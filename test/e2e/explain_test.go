package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// TestKubectlExplainConstraints: kubectl explain prints what it prints for
// a CRD of the same schema on kube-apiserver. testdata/explain holds
// kubectl's output against kube-apiserver v1.37.1 serving the CRD whose
// openAPIV3Schema is Database's Info.Schema (controller-gen's); the enum
// lines must match exactly, and replicas, whose bounds and default kubectl
// does not print for a CRD either, must read the same.
func TestKubectlExplainConstraints(t *testing.T) {
	requireKubectl(t)
	k := startBinary(t)
	for _, field := range []string{"databases.spec.engine", "databases.spec.replicas", "databases.spec.users.privilege", "databases.spec.extensions"} {
		want, err := os.ReadFile(filepath.Join("testdata", "explain", field+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		if got := k.run("explain", field); got != string(want) {
			t.Errorf("kubectl explain %s:\n%s\nkube-apiserver with the CRD:\n%s", field, got, want)
		}
	}
}
