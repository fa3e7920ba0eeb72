package dynamic

import (
	"slices"
	"sync"
	"testing"

	"github.com/apiloom/apiloom/server/admission"
)

// TestNew: only the plugins enabled are built, and none is nil safely.
func TestNew(t *testing.T) {
	none, err := New(func(string) bool { return false })
	if err != nil || none != nil {
		t.Fatalf("none enabled: %v, %v", none, err)
	}
	if d := none.Chain(); d != (admission.Dynamic{}) {
		t.Fatalf("chain of none: %+v", d)
	}
	start, err := none.Initialize(t.Context(), Env{})
	if err != nil || start == nil {
		t.Fatalf("initialize none: %v", err)
	}
	var wg sync.WaitGroup
	start(&wg)
	wg.Wait()
	p, err := New(func(name string) bool { return name == admission.ValidatingAdmissionPolicy })
	if err != nil {
		t.Fatal(err)
	}
	chain := admission.New(admission.ServerPlugins{Dynamic: p.Chain()})
	names := chain.Names()
	if names[len(names)-1] != admission.ValidatingAdmissionPolicy || len(p.plugins()) != 1 {
		t.Fatalf("chain %v, plugins %d", names, len(p.plugins()))
	}
}

// TestResourceQuotaLast: ResourceQuota, when enabled, is the chain's last
// plugin, as in kube-apiserver; disabled, it is not in the chain.
func TestResourceQuotaLast(t *testing.T) {
	all, err := New(func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	names := admission.New(admission.ServerPlugins{Dynamic: all.Chain()}).Names()
	if names[len(names)-1] != admission.ResourceQuota {
		t.Fatalf("chain %v", names)
	}
	some, err := New(func(name string) bool { return name != admission.ResourceQuota })
	if err != nil {
		t.Fatal(err)
	}
	if names := admission.New(admission.ServerPlugins{Dynamic: some.Chain()}).Names(); slices.Contains(names, admission.ResourceQuota) {
		t.Fatalf("disabled, chain %v", names)
	}
}
