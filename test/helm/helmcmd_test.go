package helm

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// commandTimeout bounds one helm command; the commands that wait pass
// Helm a shorter --timeout, so Helm's own message is what a slow server
// produces.
const commandTimeout = 3 * time.Minute

// helmCLI runs one Helm binary against one namespace of one server, with
// Helm's default storage driver (Secrets) and a home of its own.
type helmCLI struct {
	bin        string
	major      int // 3 or 4
	kubeconfig string
	namespace  string
	env        []string
}

func newHelmCLI(t *testing.T, bin string, major int, kubeconfig, namespace string) *helmCLI {
	home := t.TempDir()
	// Nothing of the caller's Helm or cluster leaks in: no HELM_DRIVER
	// (the Secret driver is the default under test), no KUBECONFIG, no
	// HELM_NAMESPACE; Helm's config, cache and data live in home.
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "HELM_") || strings.HasPrefix(kv, "KUBECONFIG=") || strings.HasPrefix(kv, "HOME=") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home,
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"))
	return &helmCLI{bin: bin, major: major, kubeconfig: kubeconfig, namespace: namespace, env: env}
}

// run runs helm with args (plus --kubeconfig and --namespace) and ends t
// if it fails; it returns the standard output.
func (h *helmCLI) run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := h.try(t, args...)
	if err != nil {
		t.Fatalf("helm %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// try runs helm as run does and returns its error (which carries its
// standard error) instead of ending t.
func (h *helmCLI) try(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), commandTimeout)
	defer cancel()
	full := append(append([]string{}, args...), "--kubeconfig", h.kubeconfig, "--namespace", h.namespace)
	cmd := exec.CommandContext(ctx, h.bin, full...)
	cmd.Env = h.env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("helm v%d %s (%s)\n%s%s", h.major, strings.Join(args, " "), time.Since(start).Round(time.Millisecond), stdout.String(), stderr.String())
	if err != nil {
		return stdout.String(), &helmError{err: err, stderr: stderr.String()}
	}
	return stdout.String(), nil
}

// helmError is a helm command that failed, with what it printed on
// standard error.
type helmError struct {
	err    error
	stderr string
}

func (e *helmError) Error() string { return e.err.Error() + ": " + strings.TrimSpace(e.stderr) }
func (e *helmError) Unwrap() error { return e.err }

// atomicFlag is the flag that makes an upgrade roll back when it fails:
// v4 renamed --atomic (still accepted, deprecated) to --rollback-on-failure.
func (h *helmCLI) atomicFlag() string {
	if h.major >= 4 {
		return "--rollback-on-failure"
	}
	return "--atomic"
}

// historyEntry is one line of `helm history -o json`.
type historyEntry struct {
	Revision    int    `json:"revision"`
	Status      string `json:"status"`
	Description string `json:"description"`
}

func (h *helmCLI) history(t *testing.T, release string) []historyEntry {
	t.Helper()
	var entries []historyEntry
	decodeJSON(t, h.run(t, "history", release, "-o", "json"), &entries)
	return entries
}

// listEntry is one line of `helm list -o json` (the revision is a string
// there).
type listEntry struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Revision  string `json:"revision"`
	Status    string `json:"status"`
}

func (h *helmCLI) list(t *testing.T, args ...string) []listEntry {
	t.Helper()
	var entries []listEntry
	decodeJSON(t, h.run(t, append([]string{"list", "-o", "json"}, args...)...), &entries)
	return entries
}

func decodeJSON(t *testing.T, out string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("helm's JSON output %q: %v", out, err)
	}
}
