package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// runFail runs kubectl, expects it to fail, and returns its stderr.
func (k *kubectlEnv) runFail(args ...string) string {
	k.t.Helper()
	ctx, cancel := context.WithTimeout(k.t.Context(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	c := k.cmd(ctx, args...)
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err == nil {
		k.t.Fatalf("kubectl %s succeeded, want a failure\nstdout:\n%s", strings.Join(args, " "), stdout.String())
	}
	return stderr.String()
}

// canI runs `kubectl auth can-i ARGS` and returns its answer: yes or no.
func (k *kubectlEnv) canI(args ...string) string {
	k.t.Helper()
	ctx, cancel := context.WithTimeout(k.t.Context(), time.Minute)
	defer cancel()
	out, _ := k.cmd(ctx, append([]string{"auth", "can-i"}, args...)...).Output()
	return strings.TrimSpace(string(out))
}

// asUser is a kubectl acting as a user whose kubeconfig `apiloom
// kubeconfig` wrote, against the same server as k.
func (k *kubectlEnv) asUser(name string, groups ...string) *kubectlEnv {
	k.t.Helper()
	path := filepath.Join(k.t.TempDir(), name+".kubeconfig")
	args := []string{"kubeconfig", "--data-dir", k.dataDir, "--user", name, "--out", path}
	for _, g := range groups {
		args = append(args, "--group", g)
	}
	if out, err := exec.CommandContext(k.t.Context(), k.bin, args...).CombinedOutput(); err != nil {
		k.t.Fatalf("apiloom %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return &kubectlEnv{t: k.t, kubeconfig: path, home: k.t.TempDir(), bin: k.bin, dataDir: k.dataDir}
}

// writeManifest writes yaml to a file of the test's and returns its path.
func writeManifest(t *testing.T, name, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const devRole = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: dev, namespace: team-a}
rules:
- apiGroups: [example.apiloom.dev]
  resources: [databases]
  verbs: [get, list, watch, create]
- apiGroups: [example.apiloom.dev]
  resources: [databases/status]
  verbs: [get, patch]
- apiGroups: [""]
  resources: [configmaps]
  resourceNames: [app-config]
  verbs: [get, update]
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles, rolebindings]
  verbs: [create]
`

// TestRBACKubectl is the walk through: the admin creates a
// namespace, a Role and a RoleBinding for a user `apiloom kubeconfig`
// made; the user can do exactly what the Role allows and gets upstream's
// 403 elsewhere; `kubectl auth can-i` (and --list) and `whoami` agree;
// granting more than one holds is refused; impersonation needs the
// impersonate verb.
func TestRBACUsersKubectl(t *testing.T) {
	requireKubectl(t)
	admin := startBinary(t)
	admin.run("create", "namespace", "team-a")
	admin.run("create", "namespace", "team-b")
	admin.run("apply", "-f", writeManifest(t, "role.yaml", devRole))
	admin.run("-n", "team-a", "create", "rolebinding", "dev", "--role=dev", "--user=alice")
	db := func(ns, name string) string {
		return writeManifest(t, ns+"-"+name+".yaml", "apiVersion: example.apiloom.dev/v1\nkind: Database\nmetadata: {name: "+name+", namespace: "+ns+"}\nspec: {engine: postgres}\n")
	}
	admin.run("create", "-f", db("team-b", "other"))
	admin.run("-n", "team-a", "create", "configmap", "app-config", "--from-literal=a=1")
	admin.run("-n", "team-a", "create", "configmap", "secret-config", "--from-literal=a=1")

	alice := admin.asUser("alice", "dev")
	// The authorizer follows bindings through a watch, as kube-apiserver's
	// informers do: the binding takes effect a moment after it is stored.
	eventually(t, "alice's RoleBinding to take effect", func(context.Context) (bool, error) {
		return alice.canI("create", "databases", "-n", "team-a") == "yes", nil
	})

	// whoami: the certificate's name and groups, and system:authenticated.
	who := alice.run("auth", "whoami", "-o", "yaml")
	for _, want := range []string{"username: alice", "- dev", "- system:authenticated"} {
		if !strings.Contains(who, want) {
			t.Errorf("whoami lacks %q:\n%s", want, who)
		}
	}

	// Per verb: create, get, list allowed in team-a; delete is not.
	alice.run("create", "-f", db("team-a", "orders"))
	if out := alice.run("-n", "team-a", "get", "databases", "-o", "name"); strings.TrimSpace(out) != "database.example.apiloom.dev/orders" {
		t.Errorf("alice lists in team-a: %q", out)
	}
	expectForbidden(t, alice.runFail("-n", "team-a", "delete", "database", "orders"),
		`databases.example.apiloom.dev "orders" is forbidden: User "alice" cannot delete resource "databases" in API group "example.apiloom.dev" in the namespace "team-a"`)
	// Per namespace: nothing in team-b, nothing cluster-wide.
	expectForbidden(t, alice.runFail("-n", "team-b", "get", "databases"),
		`databases.example.apiloom.dev is forbidden: User "alice" cannot list resource "databases" in API group "example.apiloom.dev" in the namespace "team-b"`)
	expectForbidden(t, alice.runFail("get", "databases", "-A"),
		`databases.example.apiloom.dev is forbidden: User "alice" cannot list resource "databases" in API group "example.apiloom.dev" at the cluster scope`)
	// Per subresource: status may be patched, the main resource not.
	alice.run("-n", "team-a", "patch", "database", "orders", "--subresource=status", "--type=merge", "-p", `{"status":{"phase":"Ready"}}`)
	expectForbidden(t, alice.runFail("-n", "team-a", "patch", "database", "orders", "--type=merge", "-p", `{"spec":{"version":"16"}}`),
		`databases.example.apiloom.dev "orders" is forbidden: User "alice" cannot patch resource "databases" in API group "example.apiloom.dev" in the namespace "team-a"`)
	// Per resourceName: app-config only, and no list.
	alice.run("-n", "team-a", "get", "configmap", "app-config")
	expectForbidden(t, alice.runFail("-n", "team-a", "get", "configmap", "secret-config"),
		`configmaps "secret-config" is forbidden: User "alice" cannot get resource "configmaps" in API group "" in the namespace "team-a"`)
	expectForbidden(t, alice.runFail("-n", "team-a", "get", "configmaps"),
		`configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "team-a"`)
	// Non-resource URLs: /metrics needs a grant.
	expectForbidden(t, alice.runFail("get", "--raw", "/metrics"), `forbidden: User "alice" cannot get path "/metrics"`)

	// can-i agrees with what happened.
	for args, want := range map[string]string{
		"create databases -n team-a":                           "yes",
		"delete databases -n team-a":                           "no",
		"list databases -n team-b":                             "no",
		"patch databases --subresource=status -n team-a":       "yes",
		"get configmaps/app-config -n team-a":                  "yes",
		"get configmaps/secret-config -n team-a":               "no",
		"create selfsubjectaccessreviews.authorization.k8s.io": "yes",
	} {
		if got := alice.canI(strings.Fields(args)...); got != want {
			t.Errorf("alice: can-i %s = %q, want %q", args, got, want)
		}
	}
	list := alice.run("auth", "can-i", "--list", "-n", "team-a")
	for _, row := range [][]string{
		{"databases.example.apiloom.dev", "[]", "[]", "[get list watch create]"},
		{"databases.example.apiloom.dev/status", "[]", "[]", "[get patch]"},
		{"configmaps", "[]", "[app-config]", "[get update]"},
		{"selfsubjectaccessreviews.authorization.k8s.io", "[]", "[]", "[create]"},
	} {
		if !slices.ContainsFunc(strings.Split(list, "\n"), func(l string) bool { return strings.Join(strings.Fields(l), " ") == strings.Join(row, " ") }) {
			t.Errorf("can-i --list lacks %v:\n%s", row, list)
		}
	}

	// Escalation: alice may create Roles, but only with what she holds.
	expectForbidden(t, alice.runFail("-n", "team-a", "create", "role", "secrets", "--verb=get", "--resource=secrets"),
		`roles.rbac.authorization.k8s.io "secrets" is forbidden: user "alice" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:`)
	alice.run("-n", "team-a", "create", "role", "db-reader", "--verb=get", "--resource=databases.example.apiloom.dev")
	// kubectl create rolebinding words the same refusal its own way.
	expectMessage(t, alice.runFail("-n", "team-a", "create", "rolebinding", "take-admin", "--clusterrole=admin", "--user=alice"),
		`error: failed to create rolebinding: rolebindings.rbac.authorization.k8s.io "take-admin" is forbidden: user "alice" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:`)

	// Impersonation: the admin may act as alice; alice may not act as bob.
	if got := admin.canI("delete", "databases", "-n", "team-a", "--as", "alice"); got != "no" {
		t.Errorf("admin --as alice: can-i delete = %q", got)
	}
	expectForbidden(t, alice.runFail("-n", "team-a", "get", "databases", "--as", "bob"),
		`users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope`)
}

// expectForbidden fails t unless kubectl's stderr carries msg, the
// message of the 403 Status kube-apiserver would answer.
func expectForbidden(t *testing.T, stderr, msg string) {
	t.Helper()
	if !strings.Contains(stderr, "Error from server (Forbidden): "+msg) {
		t.Errorf("want Forbidden %q, kubectl said:\n%s", msg, stderr)
	}
}

// expectMessage fails t unless kubectl's stderr carries msg.
func expectMessage(t *testing.T, stderr, msg string) {
	t.Helper()
	if !strings.Contains(stderr, msg) {
		t.Errorf("want %q, kubectl said:\n%s", msg, stderr)
	}
}
