package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rbacManifest is a Role, a ClusterRole, and their bindings as users
// write them (subjects without apiGroup, which the server defaults).
const rbacManifest = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: "app:reader", namespace: default}
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "app:lease-writer"}
rules:
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: "app:reader", namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: "app:reader"}
subjects:
- {kind: User, name: alice}
- {kind: ServiceAccount, name: robot, namespace: default}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "app:lease-writer"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "app:lease-writer"}
subjects:
- {kind: Group, name: writers}
`

// TestRBACKubectl: kubectl, as the admin, creates the four RBAC kinds
// with `kubectl create`, applies manifests of them client-side and
// server-side (names with ":" as upstream allows), gets them with the
// columns kube-apiserver prints, and is refused a change of a binding's
// roleRef as upstream refuses it.
func TestRBACKubectl(t *testing.T) {
	requireKubectl(t)
	ts, _ := startServer(t)
	k := kubectlFor(t, ts)

	k.run("create", "role", "pod-reader", "--verb=get,list", "--resource=configmaps", "-n", "default")
	k.run("create", "clusterrole", "lease-reader", "--verb=get", "--resource=leases.coordination.k8s.io")
	k.run("create", "rolebinding", "pod-reader", "--role=pod-reader", "--user=bob", "--group=devs", "-n", "default")
	k.run("create", "clusterrolebinding", "lease-reader", "--clusterrole=lease-reader", "--serviceaccount=default:robot")

	expectTable(t, k.run("get", "rolebinding", "pod-reader", "-n", "default"), []string{"NAME", "ROLE", "AGE"}, []string{"pod-reader", "Role/pod-reader"})
	wideRB := strings.Split(k.run("get", "rolebinding", "pod-reader", "-n", "default", "-o", "wide"), "\n")
	if f := strings.Fields(wideRB[1]); !slices2(strings.Fields(wideRB[0]), "NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS") ||
		len(f) != 5 || f[3] != "bob" || f[4] != "devs" {
		t.Fatalf("kubectl get rolebinding -o wide:\n%s", strings.Join(wideRB, "\n"))
	}
	wide := strings.Fields(strings.Split(k.run("get", "clusterrolebinding", "lease-reader", "-o", "wide"), "\n")[1])
	if len(wide) != 4 || wide[1] != "ClusterRole/lease-reader" || wide[3] != "default/robot" {
		t.Fatalf("kubectl get clusterrolebinding -o wide: %q", wide)
	}
	roles := k.run("get", "clusterrole", "lease-reader")
	if lines := strings.Split(strings.TrimSpace(roles), "\n"); len(lines) != 2 ||
		!slices2(strings.Fields(lines[0]), "NAME", "CREATED", "AT") || !strings.HasPrefix(lines[1], "lease-reader ") {
		t.Fatalf("kubectl get clusterrole:\n%s", roles)
	}

	manifest := filepath.Join(t.TempDir(), "rbac.yaml")
	if err := os.WriteFile(manifest, []byte(rbacManifest), 0o600); err != nil {
		t.Fatal(err)
	}
	k.run("apply", "-f", manifest)
	k.run("apply", "-f", manifest) // unchanged
	// Server-side apply after client-side apply conflicts over the
	// subjects (an atomic list the server defaulted), as against
	// kube-apiserver; the same manifest applies server-side on its own.
	out, err := k.cmd(t.Context(), "apply", "--server-side", "-f", manifest).CombinedOutput()
	if err == nil || !strings.Contains(string(out), `conflict with "kubectl-client-side-apply" using rbac.authorization.k8s.io/v1: .subjects`) {
		t.Fatalf("server-side apply over client-side apply: %v\n%s", err, out)
	}
	ssa := filepath.Join(t.TempDir(), "ssa.yaml")
	if err := os.WriteFile(ssa, []byte(strings.ReplaceAll(rbacManifest, "app:", "ssa:")), 0o600); err != nil {
		t.Fatal(err)
	}
	k.run("apply", "--server-side", "-f", ssa)
	k.run("apply", "--server-side", "-f", ssa)
	got := k.run("get", "rolebinding", "app:reader", "-n", "default", "-o", "jsonpath={.subjects[0].apiGroup} {.subjects[1].apiGroup}|{.roleRef.name}")
	if got != "rbac.authorization.k8s.io |app:reader" {
		t.Fatalf("applied rolebinding: %q", got)
	}

	// roleRef is immutable: a changed one is 422, as upstream answers.
	changed := strings.ReplaceAll(rbacManifest, `name: "app:reader"}
subjects`, `name: "other"}
subjects`)
	if err := os.WriteFile(manifest, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = k.cmd(t.Context(), "apply", "--server-side", "--force-conflicts", "-f", manifest).CombinedOutput()
	if err == nil || !strings.Contains(string(out), `The RoleBinding "app:reader" is invalid: roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"Role","Name":"other"}: field is immutable`) {
		t.Fatalf("apply of a changed roleRef: %v\n%s", err, out)
	}
	// Invalid objects get kube-apiserver's 422s, causes in its order
	// (testdata/rbac-invalid.peer.txt is its answer, from kubectl
	// create --dry-run=server).
	want, err := os.ReadFile("testdata/rbac-invalid.peer.txt")
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	c := k.cmd(t.Context(), "create", "--dry-run=server", "-f", "testdata/rbac-invalid.yaml")
	c.Stderr = &stderr
	if err := c.Run(); err == nil || stderr.String() != string(want) {
		t.Fatalf("invalid RBAC objects: %v\n%s\nwant\n%s", err, stderr.String(), want)
	}
	out, err = k.cmd(t.Context(), "create", "clusterrolebinding", "bad", "--clusterrole=x", "--serviceaccount=robot").CombinedOutput()
	if err == nil {
		t.Fatalf("clusterrolebinding of a service account without namespace: created\n%s", out)
	}
}

// slices2 reports whether got is want.
func slices2(got []string, want ...string) bool {
	return strings.Join(got, " ") == strings.Join(want, " ")
}
