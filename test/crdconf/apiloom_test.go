package crdconf

import (
	"context"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/apiloom/apiloom/generated/apiserver"
	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/testserver"
)

// strictEnv set to 0 makes TestAPILoomMatchesCRD only report the
// differences. By default (make test) it fails on any difference the
// table does not document, and on a documented difference that no longer
// differs.
const strictEnv = "APILOOM_CRDCONF_STRICT"

// tableEnv names a file TestAPILoomMatchesCRD writes its comparison table
// to (make crd-conformance prints it).
const tableEnv = "APILOOM_CRDCONF_TABLE"

// TestAPILoomMatchesCRD runs the table against an in-process apiloom on
// its own etcd (the ratcheting cases write objects straight into it, as
// the kube-apiserver half does) and compares every answer with what
// kube-apiserver answered for the CRD controller-gen makes of the same
// types (testdata/golden.yaml).
func TestAPILoomMatchesCRD(t *testing.T) {
	matchCRD(t, false)
}

// TestHookedKindMatchesCRD runs the table against Gadgets, Widgets whose
// mutating hooks change nothing: their answers must be the CRD's as well,
// as hooks that set no field leave what the request wrote (and left out)
// as validation sees it.
func TestHookedKindMatchesCRD(t *testing.T) {
	matchCRD(t, true)
}

func matchCRD(t *testing.T, hooked bool) {
	cases := mustLoadCases(t)
	golden := readGolden(t)

	etcd := etcdtest.Start(t)
	ts := testserver.Start(t, apiserver.Install, testserver.WithEtcd(etcd.Endpoints()...))
	ns := "crdconf-" + rand.String(6)
	ts.CreateNamespaces(t, ns)
	tg, err := newTarget(ts.Config, ns, func(ctx context.Context, key, value string) error {
		_, err := etcd.Put(ctx, key, value)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	what := "apiloom"
	if hooked {
		tg, what = tg.withHookedKind(), "apiloom's hooked kind"
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
	t.Log(what + " against the CRD:\n" + report)
	if path := os.Getenv(tableEnv); path != "" && !hooked {
		if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tot := count(verdicts)
	if os.Getenv(strictEnv) != "0" && (tot.different > 0 || tot.staleDocumented > 0) {
		t.Errorf("%s differs from the CRD: %s", what, tot)
	}
}
