package builtinconf

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/apiloom/apiloom/generated/apiserver"
	"github.com/apiloom/apiloom/server/testserver"
)

// strictEnv set to 0 makes TestAPILoomMatchesKubeAPIServer only report
// the differences. By default (make test) it fails on any difference the
// table does not document, and on a documented difference that no longer
// differs.
const strictEnv = "APILOOM_BUILTINCONF_STRICT"

// tableEnv names a file TestAPILoomMatchesKubeAPIServer writes its
// comparison table to (make builtin-conformance prints it).
const tableEnv = "APILOOM_BUILTINCONF_TABLE"

// TestAPILoomMatchesKubeAPIServer runs the table against an in-process
// apiloom (embedded etcd, its own namespace and garbage-collector
// controllers running) and compares every answer with what kube-apiserver
// answered (testdata/golden.yaml). The peer's kube-controller-manager runs
// no validatingadmissionpolicy-status controller, so neither does apiloom
// here: its status writes would move the policies' resourceVersions under
// the table's updates. Nor the serviceaccount and root-ca-cert-publisher
// loops: the recordings are of a kube-apiserver without
// kube-controller-manager's, so its namespaces hold no default
// ServiceAccount or kube-root-ca.crt ConfigMap for a list to show.
func TestAPILoomMatchesKubeAPIServer(t *testing.T) {
	cases := mustLoadCases(t)
	golden := readGolden(t)

	ts := testserver.Start(t, apiserver.Install, testserver.WithElection(false),
		testserver.WithControllers("*", "-validatingadmissionpolicy-status", "-serviceaccount", "-root-ca-cert-publisher"))
	tg, err := newTarget(ts.Config, rand.String(8))
	if err != nil {
		t.Fatal(err)
	}
	ours, err := runCases(t.Context(), tg, cases)
	if err != nil {
		t.Fatal(err)
	}
	verdicts, err := compare(cases, golden, ours)
	if err != nil {
		t.Fatal(err)
	}
	report := table(verdicts)
	t.Log("apiloom against kube-apiserver:\n" + report)
	if path := os.Getenv(tableEnv); path != "" {
		if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tot := count(verdicts)
	if os.Getenv(strictEnv) != "0" && (tot.different > 0 || tot.staleDocumented > 0) {
		t.Errorf("apiloom differs from kube-apiserver: %s", tot)
	}
}
