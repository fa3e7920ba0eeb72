package e2e

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/internal/testenv"
)

const subresourceDB = `apiVersion: example.apiloom.dev/v1
kind: Database
metadata: {name: orders, namespace: default}
spec: {engine: postgres, users: [{name: alice}]}
`

// TestCustomSubresourcesKubectl drives the example's verbs with kubectl
// (get --raw, create --raw) and curl over HTTP/1.1 and HTTP/2, as the
// admin and as users bound to the default view and edit roles: a viewer
// reads the view and the stream and may not call the action; an editor
// may.
func TestCustomSubresourcesKubectl(t *testing.T) {
	requireKubectl(t)
	admin := startBinary(t)
	admin.run("create", "-f", writeManifest(t, "db.yaml", subresourceDB))
	body := writeManifest(t, "backup.json", `{"apiVersion":"example.apiloom.dev/v1","kind":"BackupRequest","destination":"s3://b/orders","name":"by-kubectl"}`)

	var res examplev1.BackupResult
	if err := json.Unmarshal([]byte(admin.run("create", "--raw", dbPath+"orders/backup", "-f", body)), &res); err != nil || res.Backup.Name != "by-kubectl" {
		t.Fatalf("kubectl create --raw backup: %v %+v", err, res)
	}
	var conn examplev1.DatabaseConnection
	if err := json.Unmarshal([]byte(admin.run("get", "--raw", dbPath+"orders/connection")), &conn); err != nil || conn.Kind != "DatabaseConnection" {
		t.Fatalf("kubectl get --raw connection: %v %+v", err, conn)
	}
	if out := admin.run("get", "--raw", dbPath+"orders/logs?tailLines=1"); !strings.Contains(out, "BackupRequested: backup by-kubectl to s3://b/orders") {
		t.Fatalf("kubectl get --raw logs: %q", out)
	}

	admin.run("create", "clusterrolebinding", "viewers", "--clusterrole=view", "--group=viewers")
	admin.run("create", "clusterrolebinding", "editors", "--clusterrole=edit", "--group=editors")
	viewer, editor := admin.asUser("vera", "viewers"), admin.asUser("eddie", "editors")
	eventually(t, "the bindings to take effect", func(context.Context) (bool, error) {
		return viewer.canI("get", "databases", "--subresource=connection", "-n", "default") == "yes" &&
			editor.canI("create", "databases", "--subresource=backup", "-n", "default") == "yes", nil
	})
	for _, c := range []struct {
		who  *kubectlEnv
		args []string
		want string
	}{
		{viewer, []string{"get", "databases", "--subresource=logs"}, "yes"},
		{viewer, []string{"create", "databases", "--subresource=backup"}, "no"},
		{editor, []string{"get", "databases", "--subresource=logs"}, "yes"},
	} {
		if got := c.who.canI(append(c.args, "-n", "default")...); got != c.want {
			t.Errorf("can-i %v = %q, want %q", c.args, got, c.want)
		}
	}
	viewer.run("get", "--raw", dbPath+"orders/connection")
	viewer.run("get", "--raw", dbPath+"orders/logs")
	expectForbidden(t, viewer.runFail("create", "--raw", dbPath+"orders/backup", "-f", body),
		`databases.example.apiloom.dev "orders" is forbidden: User "vera" cannot create resource "databases/backup" in API group "example.apiloom.dev" in the namespace "default"`)
	editorBody := writeManifest(t, "backup2.json", `{"destination":"s3://b/orders","name":"by-editor"}`)
	editor.run("create", "--raw", dbPath+"orders/backup", "-f", editorBody)

	curlSubresources(t, admin)
}

// curlSubresources calls the action, the view and a following stream with
// curl over HTTP/1.1 and HTTP/2, as the admin (its kubeconfig's client
// certificate).
func curlSubresources(t *testing.T, admin *kubectlEnv) {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		testenv.Unavailable(t, "curl not on PATH: %v", err)
	}
	dir := t.TempDir()
	files := map[string]string{}
	for name, path := range map[string]string{
		"ca":   "{.clusters[0].cluster.certificate-authority-data}",
		"cert": "{.users[0].user.client-certificate-data}",
		"key":  "{.users[0].user.client-key-data}",
	} {
		pem, err := base64.StdEncoding.DecodeString(admin.run("config", "view", "--raw", "-o", "jsonpath="+path))
		if err != nil || len(pem) == 0 {
			t.Fatalf("kubeconfig's %s: %v", name, err)
		}
		files[name] = filepath.Join(dir, name+".pem")
		if err := os.WriteFile(files[name], pem, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	server := strings.TrimSpace(admin.run("config", "view", "-o", "jsonpath={.clusters[0].cluster.server}"))
	curl := func(ctx context.Context, proto string, args ...string) *exec.Cmd {
		return exec.CommandContext(ctx, "curl", append([]string{"--silent", "--show-error", "--fail", "--no-buffer", proto,
			"--cacert", files["ca"], "--cert", files["cert"], "--key", files["key"], "--write-out", "%{stderr}%{http_version}"}, args...)...)
	}
	for i, proto := range []string{"--http1.1", "--http2"} {
		want := map[string]string{"--http1.1": "1.1", "--http2": "2"}[proto]
		name := []string{"curl-h1", "curl-h2"}[i]
		out, err := curl(t.Context(), proto, "-X", "POST", "-H", "Content-Type: application/json",
			"-d", `{"destination":"s3://b","name":"`+name+`"}`, server+dbPath+"orders/backup").Output()
		if err != nil || !strings.Contains(string(out), `"kind":"BackupResult"`) {
			t.Fatalf("curl %s backup: %v %s %s", proto, err, out, stderrOf(err))
		}
		cmd := curl(t.Context(), proto, server+dbPath+"orders/connection")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), `"kind":"DatabaseConnection"`) || stderr.String() != want {
			t.Fatalf("curl %s connection: %v %s, HTTP version %q", proto, err, out, stderr.String())
		}

		// follow: the tail's last line at once, then a new backup's line.
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		follow := curl(ctx, proto, server+dbPath+"orders/logs?follow=true&tailLines=1")
		stdout, err := follow.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := follow.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewReader(stdout)
		if line, err := readLine(lines); err != nil || !strings.Contains(line, "backup "+name+" ") {
			t.Fatalf("curl %s follow, the tail: %q %v", proto, line, err)
		}
		admin.run("create", "--raw", dbPath+"orders/backup", "-f", writeManifest(t, name+".json", `{"destination":"s3://b","name":"`+name+`-next"}`))
		if line, err := readLine(lines); err != nil || !strings.Contains(line, "backup "+name+"-next ") {
			t.Fatalf("curl %s follow, the next line: %q %v", proto, line, err)
		}
		cancel()
		_ = follow.Wait()
	}
}

// stderrOf is what a command run by Output wrote on stderr, if it failed.
func stderrOf(err error) string {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(exit.Stderr)
	}
	return ""
}
