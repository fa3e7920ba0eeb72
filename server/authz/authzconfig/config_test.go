package authzconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"
	api "k8s.io/apiserver/pkg/apis/apiserver"
	authorizationcel "k8s.io/apiserver/pkg/authorization/cel"
)

// webhookYAML is a valid webhook authorizer entry of a configuration;
// kubeconfig must be an existing file.
func webhookYAML(name, kubeconfig, extra string) string {
	return `- type: Webhook
  name: ` + name + `
  webhook:
    timeout: 3s
    authorizedTTL: 5m
    unauthorizedTTL: 30s
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: Deny
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: ` + kubeconfig + `}
` + extra
}

const header = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n"

func TestLoadDataErrors(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, yaml string
		require    []api.AuthorizerType
		want       string // upstream's message, or "" for valid
	}{
		{"valid", header + "- {type: RBAC, name: rbac}\n" + webhookYAML("a", kc, "") + webhookYAML("b", kc, ""), nil, ""},
		{"none", "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\n", nil,
			"authorizers: Required value: at least one authorization mode must be defined"},
		{"Node is not served", header + "- {type: Node, name: node}\n", nil,
			`authorizers[0].type: Unsupported value: "Node": supported values: "AlwaysAllow", "AlwaysDeny", "RBAC", "Webhook"`},
		{"RBAC twice", header + "- {type: RBAC, name: rbac}\n- {type: RBAC, name: rbac2}\n", nil,
			`authorizers[1].type: Duplicate value: "RBAC"`},
		{"RBAC's name", header + "- {type: RBAC, name: roles}\n", nil, "expected name rbac for authorizer RBAC instead of roles"},
		{"webhook names twice", header + webhookYAML("a", kc, "") + webhookYAML("a", kc, ""), nil, `authorizers[1].name: Duplicate value: "a"`},
		{"timeout", header + strings.Replace(webhookYAML("a", kc, ""), "3s", "31s", 1), nil,
			`authorizers[0].timeout: Invalid value: "31s": must be > 0s and <= 30s`},
		{"failure policy", header + strings.Replace(webhookYAML("a", kc, ""), "Deny", "Allow", 1), nil,
			`authorizers[0].failurePolicy: Unsupported value: "Allow": supported values: "NoOpinion", "Deny"`},
		{"relative kubeconfig", header + webhookYAML("a", "webhook.kubeconfig", ""), nil,
			`authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "webhook.kubeconfig": must be an absolute path`},
		{"bad CEL", header + webhookYAML("a", kc, "    matchConditions:\n    - expression: request.user ==\n"), nil,
			"authorizers[0].matchConditions[0].expression: Invalid value"},
		{"CEL not a bool", header + webhookYAML("a", kc, "    matchConditions:\n    - expression: request.user\n"), nil,
			"must evaluate to bool"},
		{"required type dropped", header + webhookYAML("a", kc, ""), []api.AuthorizerType{"RBAC"}, "missing required types: [RBAC]"},
		{"not YAML of the kind", "apiVersion: v1\nkind: ConfigMap\n", nil, "failed to load AuthorizationConfiguration from file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadData([]byte(tc.yaml), authorizationcel.NewDefaultCompiler(), sets.New(tc.require...))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want == "" && len(c.Authorizers) == 0:
				t.Fatal("no authorizers loaded")
			case tc.want != "" && err == nil:
				t.Fatalf("loaded; want error %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %q; want it to contain %q", err, tc.want)
			}
		})
	}
}

// The flags build kube-apiserver's configuration: lower-case names, the
// webhook "default" with NoOpinion and a 30s timeout, a zero TTL no cache.
func TestFromModes(t *testing.T) {
	c := FromModes([]string{TypeRBAC, TypeWebhook}, WebhookFlags{ConfigFile: "/k", Version: "v1beta1", AuthorizedTTL: 0, UnauthorizedTTL: 30e9})
	if len(c.Authorizers) != 2 || c.Authorizers[0].Name != "rbac" || c.Authorizers[1].Name != "default" {
		t.Fatalf("authorizers %+v", c.Authorizers)
	}
	w := c.Authorizers[1].Webhook
	if w.FailurePolicy != api.FailurePolicyNoOpinion || w.Timeout.Duration != 30e9 || w.CacheAuthorizedRequests || !w.CacheUnauthorizedRequests ||
		w.SubjectAccessReviewVersion != "v1beta1" || *w.ConnectionInfo.KubeConfigFile != "/k" {
		t.Fatalf("webhook %+v", w)
	}
}
