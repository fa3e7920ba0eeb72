package admissionconf

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/apiloom/apiloom/generated/apiserver"
	"github.com/apiloom/apiloom/internal/hostcluster"
	"github.com/apiloom/apiloom/server/testserver"
)

// scenarios run on both servers, in this order.
var scenarios = []scenario{
	{"vap-params", vapParams},
	{"vap-warn", vapWarn},
	{"vap-audit", vapAudit},
	{"vap-param-missing-deny", vapParamMissingDeny},
	{"vap-param-missing-allow", vapParamMissingAllow},
	{"vap-match-conditions", vapMatchConditions},
	{"vap-namespace-status", vapNamespaceStatus},
	{"vap-failure-policy", vapFailurePolicy},
	{"vap-paramkind-missing", vapParamKindMissing},
	{"vap-authorizer", vapAuthorizer},
	{"vap-type-checking", vapTypeChecking},
	{"vap-invalid", vapInvalid},
	{"map-apply", mapApply},
	{"map-jsonpatch", mapJSONPatch},
	{"map-params-then-vap", mapParamsThenVAP},
	{"webhook-validating", webhookValidating},
	{"webhook-namespaces", webhookNamespaces},
	{"webhook-mutating", webhookMutating},
	{"webhook-down-fail", webhookDownFail},
	{"webhook-down-ignore", webhookDownIgnore},
	{"webhook-timeout", webhookTimeout},
}

// exception documents one way in which apiloom is known to answer
// otherwise than kube-apiserver. A difference it matches is reported as
// documented; every other difference fails the test, and so does an
// exception that matched nothing, so that the list stays true.
type exception struct {
	name string
	// why says why; a bug's starts "KNOWN BUG, not deliberate:".
	why string
	// matches tells whether d, a difference in the observation label of
	// the scenario scn, is this one.
	matches func(scn, label string, d fieldDiff) bool
}

var exceptions = []exception{{
	name: "namespace-delete-preconditions",
	why: "KNOWN BUG, not deliberate (minor): kube-apiserver's Namespace storage writes the uid " +
		"precondition it deletes under into the request's DeleteOptions, which its admission then " +
		"carries to webhooks (pkg/registry/core/namespace/storage); apiloom holds the same precondition " +
		"without writing it into the options",
	matches: func(_, label string, d fieldDiff) bool {
		return isReview(label) && strings.Contains(label, "(DELETE of admconf-") && d.path == ".options.preconditions" && d.loom == "null"
	},
}, {
	name: "deletecollection-name",
	why: "KNOWN BUG, not deliberate: kube-apiserver admits each item of a deletecollection with the " +
		"collection's attributes, whose name is empty (k8s.io/apiserver registry/rest " +
		"AdmissionToValidateObjectDeleteFunc), apiloom with the item's name (server/endpoints/delete.go): " +
		"a webhook's request.name, and a webhook's warnings that name it, differ",
	matches: func(_, label string, d fieldDiff) bool {
		return (isReview(label) && strings.Contains(label, "(DELETE of ") && d.path == ".name" && d.kas == "null") ||
			(label == "delete a collection" && d.path == ".warnings")
	},
}}

// isReview tells whether an observation's label is a webhook's request.
func isReview(label string) bool { return strings.HasPrefix(label, "the webhook's requests ") }

// testUser is who the test writes as, on both servers.
const testUser = "admin"

// dumpEnv names a file the test writes every observation of both servers
// to, for reading what was compared.
const dumpEnv = "APILOOM_ADMCONF_DUMP"

// TestAdmissionMatchesKubeAPIServer runs every scenario on a real
// kube-apiserver and on apiloom, each calling a webhook server of its own,
// and requires the same observations of both.
func TestAdmissionMatchesKubeAPIServer(t *testing.T) {
	// kube-controller-manager type-checks policies into their status.
	host := hostcluster.Start(t, hostcluster.Options{KCM: true, KCMControllers: []string{"validatingadmissionpolicy-status-controller"}})
	ts := testserver.Start(t, apiserver.Install, testserver.WithElection(false))

	// Both as the user admin in system:masters, by a client certificate,
	// so that the webhooks see the same userInfo.
	cert, key := host.ClientCert(t, testUser, "system:masters")
	kasCfg := &rest.Config{Host: host.Host, TLSClientConfig: rest.TLSClientConfig{CAData: host.ServerCAPEM, CertData: cert, KeyData: key}}
	targets := []*target{
		newTarget(t, "kube-apiserver", kasCfg),
		newTarget(t, "apiloom", ts.UserConfig(testUser, "system:masters")),
	}

	results := make([]map[string][]observation, len(targets))
	var wg sync.WaitGroup
	for i, tg := range targets {
		wg.Go(func() { results[i] = runScenarios(t.Context(), tg, scenarios) })
	}
	wg.Wait()

	if path := os.Getenv(dumpEnv); path != "" {
		dump(t, path, targets, results)
	}
	rows, used := compare(results[0], results[1])
	t.Log("apiloom against kube-apiserver:\n" + table(rows))
	for _, row := range rows {
		if row.undocumented > 0 {
			t.Errorf("%s: apiloom differs from kube-apiserver:\n%s", row.name, row.diff)
		}
	}
	for _, e := range exceptions {
		if !used[e.name] {
			t.Errorf("exception %s matched no difference: apiloom now answers as kube-apiserver does; remove it", e.name)
		}
	}
}

func newTarget(t *testing.T, name string, cfg *rest.Config) *target {
	c, err := newClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &target{name: name, c: c, hooks: startHookServer(t), down: closedURL(t)}
}

// row is one scenario's verdict.
type row struct {
	name                     string
	compared                 int    // observations compared
	documented, undocumented int    // differences
	diff                     string // each differing observation, both answers
}

// compare compares each scenario's observations on kube-apiserver (kas)
// and apiloom, one by one, and says which exceptions explained some
// difference.
func compare(kas, loom map[string][]observation) ([]row, map[string]bool) {
	used := map[string]bool{}
	var rows []row
	for _, s := range scenarios {
		a, b := kas[s.name], loom[s.name]
		r := row{name: s.name, compared: max(len(a), len(b))}
		var diff strings.Builder
		for i := range r.compared {
			var oa, ob observation
			if i < len(a) {
				oa = a[i]
			}
			if i < len(b) {
				ob = b[i]
			}
			if oa == ob {
				continue
			}
			if oa.Label != ob.Label {
				r.undocumented++
				fmt.Fprintf(&diff, "  [%d] kube-apiserver %s: %s\n      apiloom        %s: %s\n", i, oa.Label, oa.Value, ob.Label, ob.Value)
				continue
			}
			fmt.Fprintf(&diff, "  [%d] %s:\n", i, oa.Label)
			for _, d := range jsonDiff(oa.Value, ob.Value) {
				for _, e := range exceptions {
					if e.matches(s.name, oa.Label, d) {
						d.documented, used[e.name] = e.name, true
						break
					}
				}
				if d.documented != "" {
					r.documented++
					fmt.Fprintf(&diff, "      %s (documented: %s)\n", d, d.documented)
				} else {
					r.undocumented++
					fmt.Fprintf(&diff, "      %s\n", d)
				}
			}
		}
		r.diff = diff.String()
		rows = append(rows, r)
	}
	return rows, used
}

// table prints one line a scenario, the totals and the exceptions.
func table(rows []row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-26s %-22s %s\n", "SCENARIO", "VERDICT", "OBSERVATIONS")
	same, documented, different := 0, 0, 0
	for _, r := range rows {
		verdict := "same"
		switch {
		case r.undocumented > 0:
			verdict, different = "DIFFERENT", different+1
		case r.documented > 0:
			verdict, documented = "different (documented)", documented+1
		default:
			same++
		}
		fmt.Fprintf(&b, "%-26s %-22s %d\n", r.name, verdict, r.compared)
	}
	fmt.Fprintf(&b, "%d same, %d different (documented), %d different\n", same, documented, different)
	for _, e := range exceptions {
		fmt.Fprintf(&b, "documented %s: %s\n", e.name, e.why)
	}
	for _, r := range rows {
		if r.documented > 0 && r.undocumented == 0 {
			fmt.Fprintf(&b, "%s, documented differences:\n%s", r.name, r.diff)
		}
	}
	return b.String()
}

// dump writes every scenario's observations on each target to path.
func dump(t *testing.T, path string, targets []*target, results []map[string][]observation) {
	var b strings.Builder
	for _, s := range scenarios {
		fmt.Fprintf(&b, "== %s\n", s.name)
		for i, tg := range targets {
			for _, o := range results[i][s.name] {
				fmt.Fprintf(&b, "%s | %s | %s\n", tg.name, o.Label, o.Value)
			}
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Error(err)
	}
}
