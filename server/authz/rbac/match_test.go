package rbac

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// TestRuleAllows: each part of a rule against requests it must and must
// not match, as kube-apiserver's evaluation does.
func TestRuleAllows(t *testing.T) {
	u := person("alice")
	get := func(group, res, sub, name string) authorizer.AttributesRecord {
		return request(u, "get", "ns", group, res, sub, name)
	}
	cases := []struct {
		name string
		rule rbacv1.PolicyRule
		req  authorizer.AttributesRecord
		want bool
	}{
		{"exact", resourceRule(l("get"), l(""), l("pods")), get("", "pods", "", "p"), true},
		{"other verb", resourceRule(l("list"), l(""), l("pods")), get("", "pods", "", "p"), false},
		{"verb *", resourceRule(l("*"), l(""), l("pods")), get("", "pods", "", "p"), true},
		{"other group", resourceRule(l("get"), l("apps"), l("pods")), get("", "pods", "", "p"), false},
		{"group *", resourceRule(l("get"), l("*"), l("pods")), get("apps", "pods", "", "p"), true},
		{"resource *", resourceRule(l("get"), l(""), l("*")), get("", "secrets", "log", "p"), true},
		{"resource covers no subresource", resourceRule(l("get"), l(""), l("pods")), get("", "pods", "log", "p"), false},
		{"res/sub", resourceRule(l("get"), l(""), l("pods/log")), get("", "pods", "log", "p"), true},
		{"res/sub, other sub", resourceRule(l("get"), l(""), l("pods/log")), get("", "pods", "exec", "p"), false},
		{"res/sub covers not res", resourceRule(l("get"), l(""), l("pods/log")), get("", "pods", "", "p"), false},
		{"*/sub", resourceRule(l("get"), l(""), l("*/status")), get("", "nodes", "status", "p"), true},
		{"*/sub, other sub", resourceRule(l("get"), l(""), l("*/status")), get("", "nodes", "scale", "p"), false},
		{"*/sub covers no resource", resourceRule(l("get"), l(""), l("*/status")), get("", "nodes", "", "p"), false},
		{"*/sub is not a suffix match", resourceRule(l("get"), l(""), l("*/tatus")), get("", "nodes", "status", "p"), false},
		{"prefix of res/sub", resourceRule(l("get"), l(""), l("pod/log")), get("", "pods", "log", "p"), false},
		{"resourceNames", resourceRule(l("get"), l(""), l("pods"), "a", "p"), get("", "pods", "", "p"), true},
		{"resourceNames, other", resourceRule(l("get"), l(""), l("pods"), "a"), get("", "pods", "", "p"), false},
		{"resourceNames, no name", resourceRule(l("list"), l(""), l("pods"), "a"), request(u, "list", "ns", "", "pods", "", ""), false},
		{"no resourceNames, no name", resourceRule(l("list"), l(""), l("pods")), request(u, "list", "ns", "", "pods", "", ""), true},
		{"url exact", urlRule(l("get"), l("/healthz")), urlRequest(u, "get", "/healthz"), true},
		{"url not a prefix", urlRule(l("get"), l("/healthz")), urlRequest(u, "get", "/healthz/etcd"), false},
		{"url prefix*", urlRule(l("get"), l("/healthz/*")), urlRequest(u, "get", "/healthz/etcd"), true},
		{"url prefix* without the slash", urlRule(l("get"), l("/healthz/*")), urlRequest(u, "get", "/healthz"), false},
		{"url prefix** trims every *", urlRule(l("get"), l("/api**")), urlRequest(u, "get", "/apis"), true},
		{"url *", urlRule(l("get"), l("*")), urlRequest(u, "get", "/anything"), true},
		{"url verb", urlRule(l("get"), l("*")), urlRequest(u, "post", "/anything"), false},
		{"resource rule, url request", resourceRule(l("*"), l("*"), l("*")), urlRequest(u, "get", "/api"), false},
		{"url rule, resource request", urlRule(l("*"), l("*")), get("", "pods", "", "p"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ruleAllows(c.req, &c.rule); got != c.want {
				t.Fatalf("ruleAllows(%+v, %s) = %v, want %v", c.req, c.rule.String(), got, c.want)
			}
		})
	}
}
