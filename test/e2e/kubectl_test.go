package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apiloom/apiloom/internal/testenv"
)

// apiloomBinary builds cmd/apiloom once per test binary run.
func apiloomBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "apiloom")
	out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "github.com/apiloom/apiloom/cmd/apiloom").CombinedOutput()
	if err != nil {
		t.Fatalf("go build cmd/apiloom: %v\n%s", err, out)
	}
	return bin
}

// kubectlEnv is a kubectl with its own HOME (discovery cache) and kubeconfig.
type kubectlEnv struct {
	t          *testing.T
	kubeconfig string
	home       string
	// bin and dataDir are the server's binary and data directory when
	// startBinary started it.
	bin, dataDir string
}

func (k *kubectlEnv) cmd(ctx context.Context, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", k.kubeconfig}, args...)...)
	c.Env = append(os.Environ(), "HOME="+k.home, "KUBECONFIG=")
	return c
}

// run runs kubectl and returns its stdout, failing the test on a non-zero exit.
func (k *kubectlEnv) run(args ...string) string {
	k.t.Helper()
	ctx, cancel := context.WithTimeout(k.t.Context(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	c := k.cmd(ctx, args...)
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		k.t.Fatalf("kubectl %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// startBinary starts bin/apiloom with only a data dir (a free port, the
// suite's --http2-server, and the backend of etcdServersEnv) and waits for
// it to write its kubeconfig and answer /readyz.
func startBinary(t *testing.T) *kubectlEnv {
	t.Helper()
	bin := apiloomBinary(t)
	dataDir := t.TempDir()
	// t.Context ends just before cleanups run; the server then gets SIGINT
	// and the cleanup below waits for its graceful exit.
	args := []string{"--data-dir", dataDir, "--secure-port", "0", "--http2-server", http2Server(t)}
	if servers := externalEtcd(); servers != nil {
		args = append(args, "--etcd-servers", strings.Join(servers, ","), "--etcd-prefix", etcdPrefix(t))
	}
	srv := exec.CommandContext(t.Context(), bin, args...)
	var logs bytes.Buffer
	srv.Stdout, srv.Stderr = &logs, &logs
	srv.Cancel = func() error { return srv.Process.Signal(os.Interrupt) } // graceful shutdown
	srv.WaitDelay = 30 * time.Second
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	t.Cleanup(func() {
		<-exited
		// Wait reports the cancelled context even after a clean exit; the
		// exit code says whether the graceful shutdown worked.
		if code := srv.ProcessState.ExitCode(); code != 0 {
			t.Errorf("apiloom exited with code %d; logs:\n%s", code, logs.String())
		}
	})
	k := &kubectlEnv{t: t, kubeconfig: filepath.Join(dataDir, "kubeconfig"), home: t.TempDir(), bin: bin, dataDir: dataDir}
	eventually(t, "apiloom to serve", func(ctx context.Context) (bool, error) {
		select {
		case err := <-exited:
			t.Fatalf("apiloom exited early: %v\n%s", err, logs.String())
		default:
		}
		if _, err := os.Stat(k.kubeconfig); err != nil {
			return false, err
		}
		out, err := k.cmd(ctx, "get", "--raw", "/readyz").CombinedOutput()
		return err == nil && string(out) == "ok", errors.New(string(out))
	})
	return k
}

// requireKubectl skips t without a kubectl on PATH, or fails it where one
// is required (APILOOM_CI, see testenv.Unavailable).
func requireKubectl(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		testenv.Unavailable(t, "kubectl not on PATH (hack/ensure-kubectl.sh provides one): %v", err)
	}
}

func TestKubectl(t *testing.T) {
	requireKubectl(t)
	k := startBinary(t)
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}

	out := k.run("api-resources", "--api-group=example.apiloom.dev")
	for _, want := range []string{"databases", "db,dbs", "regions", "rg", "Database", "Region"} {
		if !strings.Contains(out, want) {
			t.Fatalf("api-resources lacks %q:\n%s", want, out)
		}
	}

	// apply creates, then an unchanged apply is a no-op, then a change is patched in.
	out = k.run("apply", "-f", examples)
	if !strings.Contains(out, "database.example.apiloom.dev/orders created") || !strings.Contains(out, "region.example.apiloom.dev/eu-central created") {
		t.Fatalf("first apply:\n%s", out)
	}
	out = k.run("apply", "-f", examples)
	if !strings.Contains(out, "database.example.apiloom.dev/orders unchanged") {
		t.Fatalf("second apply:\n%s", out)
	}

	// The printer columns of +kubebuilder:printcolumn; the status is not
	// set, so PHASE is empty; REGION (priority 1) only shows with -o wide.
	expectTable(t, k.run("get", "databases", "-n", "default"),
		[]string{"NAME", "ENGINE", "VERSION", "REPLICAS", "PHASE", "AGE"},
		[]string{"orders", "postgres", "16.4", "3", ""})
	expectTable(t, k.run("get", "databases", "-n", "default", "-o", "wide"),
		[]string{"NAME", "ENGINE", "VERSION", "REPLICAS", "PHASE", "REGION", "AGE"},
		[]string{"orders", "postgres", "16.4", "3", "", "eu-central"})
	expectTable(t, k.run("get", "regions"),
		[]string{"NAME", "PROVIDER", "DISPLAY NAME", "AGE"},
		[]string{"eu-central", "aws", "Frankfurt"})
	out = k.run("get", "db", "orders", "-n", "default", "-o", "yaml")
	for _, want := range []string{"kind: Database", "apiVersion: example.apiloom.dev/v1", "engine: postgres", "resourceVersion:", "uid:", "kubectl.kubernetes.io/last-applied-configuration"} {
		if !strings.Contains(out, want) {
			t.Fatalf("get -o yaml lacks %q:\n%s", want, out)
		}
	}

	// get -w shows a change made while it watches.
	watchCtx, stopWatch := context.WithTimeout(t.Context(), time.Minute)
	defer stopWatch()
	w := k.cmd(watchCtx, "get", "database", "orders", "-n", "default", "-w", "-o", "custom-columns=NAME:.metadata.name,VERSION:.spec.version", "--no-headers")
	stdout, err := w.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	expectLine(t, lines, "orders 16.4")

	changed := filepath.Join(t.TempDir(), "orders.yaml")
	orig, err := os.ReadFile(filepath.Join(examples, "database-orders.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(changed, bytes.Replace(orig, []byte(`"16.4"`), []byte(`"17.2"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	out = k.run("apply", "-f", changed)
	if !strings.Contains(out, "database.example.apiloom.dev/orders configured") {
		t.Fatalf("apply change:\n%s", out)
	}
	expectLine(t, lines, "orders 17.2")
	stopWatch()
	_ = w.Wait()

	out = k.run("explain", "databases.spec")
	if !strings.Contains(out, "engine") || !strings.Contains(out, "storageGiB") {
		t.Fatalf("explain:\n%s", out)
	}

	out = k.run("delete", "database", "orders", "-n", "default", "--wait", "--timeout=60s")
	if !strings.Contains(out, `database.example.apiloom.dev "orders" deleted`) {
		t.Fatalf("delete:\n%s", out)
	}
	out = k.run("get", "databases", "-n", "default", "-o", "name")
	if strings.TrimSpace(out) != "" {
		t.Fatalf("after delete, get lists:\n%s", out)
	}
}

// expectTable checks kubectl get's output: the header, then one row whose
// cells are row followed by an age ("5s"). Cells are cut at the header's
// column positions, so an empty cell is seen as one.
func expectTable(t *testing.T, out string, header, row []string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("kubectl get printed\n%s\nwant a header and one row", out)
	}
	// Columns are separated by at least two spaces; a header may hold one.
	var names []string
	var starts []int
	for i := 0; i < len(lines[0]); {
		end := strings.Index(lines[0][i:], "  ")
		if end < 0 {
			end = len(lines[0]) - i
		}
		names, starts = append(names, lines[0][i:i+end]), append(starts, i)
		i += end
		for i < len(lines[0]) && lines[0][i] == ' ' {
			i++
		}
	}
	if !slices.Equal(names, header) {
		t.Fatalf("kubectl get printed the header %q, want %q:\n%s", names, header, out)
	}
	cells := make([]string, len(starts))
	for i, start := range starts {
		end := len(lines[1])
		if i+1 < len(starts) {
			end = min(starts[i+1], end)
		}
		if start < end {
			cells[i] = strings.TrimSpace(lines[1][start:end])
		}
	}
	age := cells[len(cells)-1]
	if !slices.Equal(cells[:len(cells)-1], row) || !ageLike(age) {
		t.Fatalf("kubectl get printed the cells %q, want %q and an age:\n%s", cells, row, out)
	}
}

// ageLike reports whether s is an age as kubectl prints one: "7s", "2m3s".
func ageLike(s string) bool {
	return s != "" && strings.Trim(s, "0123456789smhdy") == "" && strings.ContainsAny(s[:1], "0123456789")
}

// expectLine reads lines until one equals want (ignoring spacing), or fails.
func expectLine(t *testing.T, lines <-chan string, want string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	var seen []string
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("kubectl get -w ended before %q; saw %q", want, seen)
			}
			if strings.Join(strings.Fields(l), " ") == want {
				return
			}
			seen = append(seen, l)
		case <-timeout:
			t.Fatalf("no line %q from kubectl get -w within 30s; saw %q", want, seen)
		}
	}
}
