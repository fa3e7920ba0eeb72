package e2e

import (
	"strings"
	"testing"
)

// TestGCKubectlCascade: kubectl delete --cascade=foreground|orphan|background
// (kubectl waits until the object is gone).
func TestGCKubectlCascade(t *testing.T) {
	requireKubectl(t)
	e := newGCEnv(t)
	k := &kubectlEnv{t: t, kubeconfig: e.ts.Kubeconfig, home: t.TempDir()}
	ctx := t.Context()
	const ns = "gc-kubectl"
	e.namespace(ns)

	// foreground: the owner goes last, so once kubectl returns its
	// blocking dependent is gone too.
	fg := e.database(ns, "fg")
	e.configMap(ns, "fg-dep", dbRef(fg, true))
	out := k.run("delete", "-n", ns, "database", "fg", "--cascade=foreground")
	if !strings.Contains(out, `database.example.apiloom.dev "fg" deleted`) {
		t.Fatalf("kubectl said %q", out)
	}
	if cm, err := e.getCM(ctx, ns, "fg-dep"); cm != nil || err != nil {
		t.Fatalf("fg-dep outlived its owner: %v", err)
	}

	// orphan: the owner goes once its dependent no longer refers to it.
	or := e.database(ns, "or")
	e.configMap(ns, "or-dep", dbRef(or, true))
	k.run("delete", "-n", ns, "database", "or", "--cascade=orphan")
	if db, err := e.getDB(ctx, ns, "or"); db != nil || err != nil {
		t.Fatalf("or still there: %v", err)
	}
	if dep := e.mustCM(ns, "or-dep"); len(dep.OwnerReferences) != 0 {
		t.Fatalf("or-dep still refers to %+v", dep.OwnerReferences)
	}

	// background: the owner goes at once, its dependents after it.
	bg := e.database(ns, "bg")
	e.configMap(ns, "bg-dep", dbRef(bg, true))
	k.run("delete", "-n", ns, "database", "bg", "--cascade=background")
	e.waitCMGone(ns, "bg-dep")
}
