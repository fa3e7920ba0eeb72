package authzconfig

import (
	"log/slog"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authorization/authorizer"
	authorizationcel "k8s.io/apiserver/pkg/authorization/cel"
)

// BenchmarkChain: the cost of one decision through the server's chain
// (the reloadable pointer, system:masters' check, the union and the
// decisions metric), for an authorizer that decides at once (the RBAC
// authorizer's own cost is server/authz/rbac's BenchmarkAuthorize), and
// for a webhook whose answer is cached, with and without a match
// condition evaluated first: what a request costs once the webhook has
// answered for it.
func BenchmarkChain(b *testing.B) {
	w := webhookServer(b)
	cond := "    matchConditions:\n    - expression: request.user != 'carol'\n"
	for _, bc := range []struct {
		name, yaml string
		attr       authorizer.AttributesRecord
	}{
		{"rbac-stand-in", header + "- {type: RBAC, name: rbac}\n", attrs("carol")},
		{"webhook-cached", header + webhookYAML("corp", w.Kubeconfig, ""), attrs("alice")},
		{"webhook-cached-matchcondition", header + webhookYAML("corp", w.Kubeconfig, cond), attrs("alice")},
		{"matchcondition-skips-to-rbac", header + webhookYAML("corp", w.Kubeconfig, cond) + "- {type: RBAC, name: rbac}\n", attrs("carol")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c, err := LoadData([]byte(bc.yaml), authorizationcel.NewDefaultCompiler(), nil)
			if err != nil {
				b.Fatal(err)
			}
			r, err := NewReloadable(testBuilder(), c, "", nil, time.Minute, "bench", slog.New(slog.DiscardHandler))
			if err != nil {
				b.Fatal(err)
			}
			if d, _, err := r.Authorize(b.Context(), bc.attr); d != authorizer.DecisionAllow {
				b.Fatalf("decision %v (%v)", d, err)
			}
			calls := w.Calls()
			b.ReportAllocs()
			for b.Loop() {
				if d, _, _ := r.Authorize(b.Context(), bc.attr); d != authorizer.DecisionAllow {
					b.Fatalf("decision %v", d)
				}
			}
			if w.Calls() != calls {
				b.Fatalf("the webhook was called %d times in the loop; its answer was to be cached", w.Calls()-calls)
			}
		})
	}
}
