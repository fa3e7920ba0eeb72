package discovery_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// kubectl runs the kubectl on PATH against ts, with a private cache and no
// kubeconfig, and returns its combined output. Tests using it are skipped
// where kubectl is not installed.
func kubectl(t *testing.T, ts *testServer, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not on PATH")
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{
		"--kubeconfig", kubeconfig, "--server", ts.URL, "--cache-dir", filepath.Join(dir, "cache"),
	}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestKubectlExplain(t *testing.T) {
	ts := newTestServer(t, testInfos(), testDefinitions)

	out := kubectl(t, ts, "explain", "widgets.spec")
	for _, want := range []string{"GROUP:      test.apiloom.dev", "KIND:       Widget", "VERSION:    v1",
		"FIELD: spec <WidgetSpec>", "color\t<string> -required-", `Color is the widget's color, for example "red".`} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl explain widgets.spec lacks %q:\n%s", want, out)
		}
	}
	out = kubectl(t, ts, "explain", "wd.status.conditions.lastTransitionTime")
	if !strings.Contains(out, "lastTransitionTime is the last time the condition changed.") {
		t.Errorf("explain through allOf refs:\n%s", out)
	}
	out = kubectl(t, ts, "explain", "gadgets", "--recursive")
	if !strings.Contains(out, "label\t<string>") || !strings.Contains(out, "creationTimestamp\t<string>") {
		t.Errorf("kubectl explain gadgets --recursive:\n%s", out)
	}
	if got := ts.requested(); slices.Contains(got, "/openapi/v2") {
		t.Errorf("kubectl fell back to OpenAPI v2: %v", got)
	}
}

// TestKubectlStrictValidation: with --validate=strict (the default), kubectl
// create looks for fieldValidation in OpenAPI v3 and, finding it, leaves
// validation to the server instead of downloading OpenAPI v2.
func TestKubectlStrictValidation(t *testing.T) {
	ts := newTestServer(t, testInfos(), testDefinitions)
	manifest := filepath.Join(t.TempDir(), "widget.yaml")
	if err := os.WriteFile(manifest, []byte(`apiVersion: test.apiloom.dev/v1
kind: Widget
metadata: {name: w1, namespace: default}
spec: {color: red, unknownField: 1}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := kubectl(t, ts, "create", "--dry-run=client", "--validate=strict", "-o", "name", "-f", manifest)
	if strings.TrimSpace(out) != "widget.test.apiloom.dev/w1" {
		t.Errorf("kubectl create --dry-run=client: %q", out)
	}
	got := ts.requested()
	if slices.Contains(got, "/openapi/v2") || !slices.Contains(got, "/openapi/v3/apis/test.apiloom.dev/v1") {
		t.Errorf("kubectl requested %v; want OpenAPI v3 and no v2", got)
	}
}

func TestKubectlAPIResources(t *testing.T) {
	ts := newTestServer(t, testInfos(), testDefinitions)
	out := kubectl(t, ts, "api-resources", "--api-group", group, "-o", "wide")
	for _, want := range []string{"widgets", "wd", "test.apiloom.dev/v1", "true", "Widget", "all", "gadgets", "gd", "false", "Gadget"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl api-resources lacks %q:\n%s", want, out)
		}
	}
	if out := kubectl(t, ts, "version", "-o", "json"); !strings.Contains(out, `"gitVersion": "v1.37.0-apiloom"`) {
		t.Errorf("kubectl version:\n%s", out)
	}
}
