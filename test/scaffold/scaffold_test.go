package scaffold

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apiloom/apiloom/internal/testenv"
)

// TestScaffold is the new user's path, as the module's README gives it:
// init, create api twice (a namespaced and a cluster-scoped kind in two
// groups), make generate, make test, make verify (and that it catches
// stale code); then the user's first edit of both specs (a field
// replaced, a required one added, a Default hook on one kind) and make
// generate, test and verify again; then the server with apiloom's flags,
// kubectl apply, and creates without the required fields.
func TestScaffold(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: scaffolds and builds a whole module")
	}
	// protoc: make generate's protobuf step runs it (hack/lib/protoc.sh installs it).
	for _, tool := range []string{"go", "make", "protoc"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Unavailable(t, "%s not on PATH: %v", tool, err)
		}
	}
	requireKubectl(t)
	// About 8 minutes alone on 2 cores, more beside the rest of go test
	// ./...: beyond go test's default -timeout of 10m (hack/test.sh gives 25m).
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Minute)
	defer cancel()

	checkout, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	loom := filepath.Join(t.TempDir(), "loom")
	run(ctx, t, checkout, "go", "build", "-o", loom, "./cmd/loom")

	mod := filepath.Join(t.TempDir(), "shop")
	if err := os.Mkdir(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	run(ctx, t, mod, loom, "init", "--module", "example.com/shop", "--apiloom", checkout)
	gomod := read(t, mod, "go.mod")
	for _, want := range []string{"replace github.com/apiloom/apiloom => " + checkout, "\tgithub.com/apiloom/apiloom/codegen/cmd/apiloom-gen\n", "\tk8s.io/code-generator/cmd/client-gen\n"} {
		if !strings.Contains(gomod, want) {
			t.Fatalf("go.mod lacks %q:\n%s", want, gomod)
		}
	}
	if readme := read(t, mod, "README.md"); !strings.Contains(readme, "make generate && make run") || !strings.Contains(readme, "make test") || !strings.Contains(readme, "not published to a module proxy yet") {
		t.Fatalf("README lacks the two commands or the replace note:\n%s", readme)
	}
	// create api through the module's own pinned loom.
	run(ctx, t, mod, "go", "tool", "loom", "create", "api", "--group", "shop.example.com", "--version", "v1", "--kind", "Order")
	run(ctx, t, mod, "go", "tool", "loom", "create", "api", "--group", "billing.example.com", "--version", "v1beta1", "--kind", "Invoice", "--namespaced=false")

	run(ctx, t, mod, "make", "generate")
	for _, f := range []string{"apis/shop/v1/zz_generated.deepcopy.go", "apis/billing/v1beta1/generated.pb.go", "generated/apiserver/shop/v1/zz_generated.resources.go",
		"generated/clientset/versioned/typed/billing/v1beta1/invoice.go", "generated/apiserver/core/v1/zz_generated.resources.go"} {
		read(t, mod, f)
	}
	out := run(ctx, t, mod, "make", "test")
	for _, want := range []string{"ok  \texample.com/shop/test"} {
		if !strings.Contains(out, want) {
			t.Fatalf("make test did not run the module's tests:\n%s", out)
		}
	}

	// The user's first edit (issue 32). The scaffolded test and example
	// name no spec field, so they survive it, and the example needs only
	// the values of the new required fields, as loom's Next: text says.
	// make verify runs once, after it: on files create api wrote and
	// the user's edit, which leaves most of them as they were.
	firstEdit(t, mod)
	// The generated-code check of make verify catches the edit before make
	// generate, and changes nothing itself.
	before := snapshot(t, mod)
	out, err = runErr(ctx, mod, "go", "tool", "apiloom-gen", "--verify")
	if err == nil || !strings.Contains(out, "generated code is stale") || !strings.Contains(out, "zz_generated.deepcopy.go: differs") {
		t.Fatalf("apiloom-gen --verify with a stale deepcopy: %v\n%s", err, out)
	}
	if snapshot(t, mod) != before {
		t.Fatal("a failed apiloom-gen --verify changed the module")
	}
	run(ctx, t, mod, "make", "generate")
	if out := run(ctx, t, mod, "make", "test"); !strings.Contains(out, "ok  \texample.com/shop/test") {
		t.Fatalf("make test after the first edit did not run the module's tests:\n%s", out)
	}
	run(ctx, t, mod, "make", "verify")

	// deploy/, through the module's pinned loom: an APIService per group
	// version create api wrote, the server's image, the keys kept out of git.
	run(ctx, t, mod, "make", "manifests", "IMG=registry.example.com/shop:v1")
	deployed := read(t, mod, "deploy/70-apiservices.yaml") + read(t, mod, "deploy/50-statefulset.yaml")
	for _, want := range []string{"name: v1.shop.example.com\n", "name: v1beta1.billing.example.com\n", "image: registry.example.com/shop:v1\n"} {
		if !strings.Contains(deployed, want) {
			t.Fatalf("make manifests: deploy/ lacks %q", want)
		}
	}
	if gitignore := read(t, mod, ".gitignore"); !strings.Contains(gitignore, "/deploy/pki/\n") {
		t.Fatalf(".gitignore does not keep deploy/pki/ out of git:\n%s", gitignore)
	}

	kubectlApply(ctx, t, mod)
	badInput(ctx, t, mod, loom, checkout)
}

// firstEdit is what a user does first to the kinds create api wrote, as
// the comment on the spec says: Order's placeholder field replaced (by a
// pointer, so that the deepcopy changes) and a required field added, with
// a Default hook for Order; a required field added to Invoice, which has
// no hook; each required field given a value in the kind's example.
func firstEdit(t *testing.T, mod string) {
	t.Helper()
	replaceSpec(t, mod, "apis/shop/v1/order_types.go", "Order", `	// Customer is who placed the order.
	//
	// +kubebuilder:validation:Required
	Customer string `+"`json:\"customer\"`"+`
	// Quantity is how many were ordered; the Default hook makes it 1.
	Quantity *int32 `+"`json:\"quantity,omitempty\"`"+`
`)
	replaceSpec(t, mod, "apis/billing/v1beta1/invoice_types.go", "Invoice", `	// Description says what this Invoice is for.
	//
	// +kubebuilder:validation:MaxLength=256
	Description string `+"`json:\"description,omitempty\" protobuf:\"bytes,1,opt,name=description\"`"+`
	// Account is who pays.
	//
	// +kubebuilder:validation:Required
	Account string `+"`json:\"account\"`"+`
`)
	if err := os.MkdirAll(filepath.Join(mod, "hooks/shop/v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(mod, "hooks/shop/v1/order.go"), `// Package v1 holds the hooks of the shop.example.com/v1 kinds.
package v1

import (
	"github.com/apiloom/apiloom/server/hook"

	shopv1 "example.com/shop/apis/shop/v1"
)

// Order holds the hooks of Order.
type Order struct{}

// Default orders one when the quantity is unset.
func (Order) Default(_ *hook.Request, o *shopv1.Order) {
	if o.Spec.Quantity == nil {
		one := int32(1)
		o.Spec.Quantity = &one
	}
}
`)
	addApprove(t, mod)
	for file, spec := range map[string]string{
		"examples/shop_v1_order.yaml":           "spec:\n  customer: alice\n",
		"examples/billing_v1beta1_invoice.yaml": "spec:\n  account: acme\n",
	} {
		orig := read(t, mod, file)
		changed := strings.Replace(orig, "spec: {}\n", spec, 1)
		if changed == orig {
			t.Fatalf("%s has no empty spec to fill:\n%s", file, orig)
		}
		write(t, filepath.Join(mod, file), changed)
	}
}

// addApprove gives Order a verb of its own (issue 38): an approve action
// declared by a +genclient:method marker, its input and result type, the
// hook that implements it, and a test in the module that calls it through
// the module's generated client against a real server.
func addApprove(t *testing.T, mod string) {
	t.Helper()
	file := filepath.Join(mod, "apis/shop/v1/order_types.go")
	orig := read(t, mod, "apis/shop/v1/order_types.go")
	marked := strings.Replace(orig, "// +genclient\n", "// +genclient\n// +genclient:method=Approve,verb=create,subresource=approve,input=OrderApproval,result=OrderApproval\n", 1)
	if marked == orig {
		t.Fatalf("order_types.go has no +genclient line:\n%s", orig)
	}
	write(t, file, marked+`
// OrderApproval approves an Order: the body and the answer of a POST to
// .../orders/NAME/approve.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type OrderApproval struct {
	metav1.TypeMeta `+"`json:\",inline\"`"+`

	// Approver is who approves.
	//
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	Approver string `+"`json:\"approver\"`"+`
	// Phase is the Order's phase once approved.
	Phase string `+"`json:\"phase,omitempty\"`"+`
}
`)
	write(t, filepath.Join(mod, "hooks/shop/v1/approve.go"), `package v1

import (
	"github.com/apiloom/apiloom/server/hook"

	shopv1 "example.com/shop/apis/shop/v1"
)

// Approve marks the Order approved, through the server's write path.
func (Order) Approve(req *hook.Request, o *shopv1.Order, in *shopv1.OrderApproval) (*shopv1.OrderApproval, error) {
	next := o.DeepCopy()
	next.Status.Phase = "Approved by " + in.Approver
	if _, err := hook.UpdateStatus(req, next); err != nil {
		return nil, err
	}
	return &shopv1.OrderApproval{Approver: in.Approver, Phase: next.Status.Phase}, nil
}
`)
	write(t, filepath.Join(mod, "test/approve_test.go"), `package test

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	shopv1 "example.com/shop/apis/shop/v1"
	"example.com/shop/generated/clientset/versioned"
)

// TestOrderApprove calls the approve action through the generated client.
func TestOrderApprove(t *testing.T) {
	srv := startServer(t)
	ctx := t.Context()
	orders := versioned.NewForConfigOrDie(srv.Config).ShopV1().Orders("default")
	order := &shopv1.Order{ObjectMeta: metav1.ObjectMeta{Name: "to-approve"}, Spec: shopv1.OrderSpec{Customer: "alice"}}
	if _, err := orders.Create(ctx, order, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := orders.Approve(ctx, "to-approve", &shopv1.OrderApproval{Approver: "bob"}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("approve: %v", err)
	}
	if got.Phase != "Approved by bob" {
		t.Fatalf("approve answered %+v", got)
	}
	stored, err := orders.Get(ctx, "to-approve", metav1.GetOptions{})
	if err != nil || stored.Status.Phase != "Approved by bob" {
		t.Fatalf("after approve: %v, status %+v", err, stored.Status)
	}
	// The input is validated by its markers.
	if _, err := orders.Approve(ctx, "to-approve", &shopv1.OrderApproval{}, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("approve without an approver: %v, want 422 Invalid", err)
	}
	if _, err := orders.Approve(ctx, "missing", &shopv1.OrderApproval{Approver: "bob"}, metav1.CreateOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("approve a missing order: %v, want 404", err)
	}
}
`)
}

// replaceSpec replaces the fields of kind's spec type in file with fields.
func replaceSpec(t *testing.T, mod, file, kind, fields string) {
	t.Helper()
	orig := read(t, mod, file)
	spec := regexp.MustCompile(`(?s)\ntype ` + kind + `Spec struct \{\n.*?\n\}\n`)
	changed := spec.ReplaceAllLiteralString(orig, "\ntype "+kind+"Spec struct {\n"+fields+"}\n")
	if changed == orig {
		t.Fatalf("%s has no %sSpec to edit:\n%s", file, kind, orig)
	}
	write(t, filepath.Join(mod, file), changed)
}

// kubectlApply builds the module's server, starts it with apiloom's flags,
// applies the examples create api wrote (as firstEdit left them) and
// checks that a create without a required field is refused.
func kubectlApply(ctx context.Context, t *testing.T, mod string) {
	run(ctx, t, mod, "make", "build")
	dataDir := t.TempDir()
	port := freePort(t)
	srvCtx, stop := context.WithCancel(ctx)
	srv := exec.CommandContext(srvCtx, filepath.Join(mod, "bin", "apiserver"),
		"--data-dir", dataDir, "--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(port))
	var logs syncBuffer
	srv.Stdout, srv.Stderr = &logs, &logs
	srv.Cancel = func() error { return srv.Process.Signal(os.Interrupt) }
	srv.WaitDelay = 30 * time.Second
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	defer func() {
		stop()
		<-exited
		if code := srv.ProcessState.ExitCode(); code != 0 {
			t.Errorf("the server exited with %d after SIGINT:\n%s", code, logs.String())
		}
	}()

	kubeconfig := filepath.Join(dataDir, "kubeconfig")
	kubectl := func(args ...string) (string, error) {
		return runErr(ctx, mod, "kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case err := <-exited:
			t.Fatalf("the server exited before serving: %v\n%s", err, logs.String())
		default:
		}
		if _, err := os.Stat(kubeconfig); err == nil {
			if out, err := kubectl("get", "--raw", "/readyz"); err == nil && out == "ok" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("not serving after 2m:\n%s", logs.String())
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}
	if kc := read(t, dataDir, "kubeconfig"); !strings.Contains(kc, fmt.Sprintf("https://127.0.0.1:%d", port)) {
		t.Fatalf("kubeconfig does not name --bind-address:--secure-port:\n%s", kc)
	}
	out, err := kubectl("apply", "-f", "examples/")
	if err != nil || !strings.Contains(out, "order.shop.example.com/example created") || !strings.Contains(out, "invoice.billing.example.com/example created") {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	out, err = kubectl("get", "orders,invoices")
	if err != nil || !strings.Contains(out, "order.shop.example.com/example ") || !strings.Contains(out, "invoice.billing.example.com/example ") || !strings.Contains(out, "PHASE") {
		t.Fatalf("kubectl get: %v\n%s", err, out)
	}
	// The new kinds are in the default admin, edit and view roles with no
	// RBAC written by hand: a user bound to view reads them, and only reads.
	for args, want := range map[string]string{
		"list orders.shop.example.com":                     "yes",
		"get invoices.billing.example.com":                 "yes",
		"delete orders.shop.example.com":                   "no",
		"get orders.shop.example.com --subresource=status": "yes",
		"create invoices.billing.example.com":              "no",
	} {
		deadline := time.Now().Add(30 * time.Second)
		for {
			// --as a member of a group bound to view: the admin may
			// impersonate; the binding is made once, below.
			out, _ := kubectl(append([]string{"auth", "can-i", "--as=viewer", "--as-group=viewers"}, strings.Fields(args)...)...)
			// The answer is the last line; kubectl may warn before it.
			if lines := strings.Fields(out); len(lines) > 0 && lines[len(lines)-1] == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("a viewer: can-i %s = %q, want %q", args, out, want)
			}
			if _, err := kubectl("get", "clusterrolebinding", "viewers"); err != nil {
				if out, err := kubectl("create", "clusterrolebinding", "viewers", "--clusterrole=view", "--group=viewers"); err != nil {
					t.Fatalf("create clusterrolebinding: %v\n%s", err, out)
				}
			}
			time.Sleep(100 * time.Millisecond) // the aggregation controller and the authorizer follow watches
		}
	}
	requiredRefused(t, kubeconfig)
}

// requiredRefused checks that a create without the field firstEdit made
// required is refused with 422 and "Required value", as a CRD refuses it,
// on a kind without hooks and on one with a Default hook (which the server
// must not let turn the missing field into a present zero value).
func requiredRefused(t *testing.T, kubeconfig string) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, body, want string }{
		{"without a hook (Invoice)", "/apis/billing.example.com/v1beta1/invoices",
			`{"apiVersion":"billing.example.com/v1beta1","kind":"Invoice","metadata":{"name":"no-account"},"spec":{"description":"no account"}}`,
			"spec.account: Required value"},
		{"with a Default hook (Order)", "/apis/shop.example.com/v1/namespaces/default/orders",
			`{"apiVersion":"shop.example.com/v1","kind":"Order","metadata":{"name":"no-customer"},"spec":{"quantity":2}}`,
			"spec.customer: Required value"},
	} {
		req, err := http.NewRequestWithContext(t.Context(), "POST", cfg.Host+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: POST %s: %v", tc.name, tc.path, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: POST %s: reading the body: %v", tc.name, tc.path, err)
		}
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: create without the required field: %d, want 422 with %q:\n%s", tc.name, resp.StatusCode, tc.want, body)
		}
	}
}

// badInput runs each refused loom command line in the scaffolded module and
// in an empty directory, and checks the exit status, the one-line error and
// that nothing changed, byte for byte.
func badInput(ctx context.Context, t *testing.T, mod, loom, checkout string) {
	empty := t.TempDir()
	for _, tc := range []struct {
		dir  string
		args []string
		rule string
	}{
		{mod, []string{"init", "--module", "example.com/other", "--apiloom", checkout}, "is not empty"},
		{empty, []string{"init", "--module", "shop", "--apiloom", checkout}, "a module path must be a valid Go module path"},
		{mod, []string{"create", "api", "--group", "shop", "--version", "v1", "--kind", "Thing"}, "at least one dot"},
		{mod, []string{"create", "api", "--group", "shop.example.com", "--version", "1.0", "--kind", "Thing"}, "Kubernetes' form"},
		{mod, []string{"create", "api", "--group", "shop.example.com", "--version", "v1", "--kind", "thing"}, "UpperCamelCase"},
		{mod, []string{"create", "api", "--group", "shop.example.com", "--version", "v1", "--kind", "Order"}, "kind Order already exists"},
		{mod, []string{"create", "api", "--group", "billing.example.com", "--version", "v1beta1", "--kind", "Invoice"}, "kind Invoice already exists"},
	} {
		before := snapshot(t, tc.dir)
		cmd := exec.CommandContext(ctx, loom, tc.args...)
		cmd.Dir = tc.dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 {
			t.Errorf("loom %s: %v, want exit status 2\n%s", strings.Join(tc.args, " "), err, stderr.String())
			continue
		}
		if msg := stderr.String(); !strings.HasPrefix(msg, "loom: ") || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, tc.rule) {
			t.Errorf("loom %s: want one line naming %q, got:\n%s", strings.Join(tc.args, " "), tc.rule, msg)
		}
		if snapshot(t, tc.dir) != before {
			t.Errorf("loom %s changed %s", strings.Join(tc.args, " "), tc.dir)
		}
	}
}

// run runs a command in dir and returns its output; a failure ends t, or
// skips it (fails it in CI) when go could not reach the module cache.
func run(ctx context.Context, t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	start := time.Now()
	out, err := runErr(ctx, dir, name, args...)
	t.Logf("%s %s: %v", filepath.Base(name), strings.Join(args, " "), time.Since(start).Round(time.Second))
	if err != nil {
		for _, sign := range []string{"dial tcp", "GOPROXY=off", "module lookup disabled", "GOFLAGS=-mod=mod", "cannot find module providing", "read-only file system"} {
			if strings.Contains(out, sign) {
				testenv.Unavailable(t, "go cannot reach the module cache or proxy (%s %s):\n%s", name, strings.Join(args, " "), out)
			}
		}
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	return out
}

func runErr(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func read(t *testing.T, dir, file string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func write(t *testing.T, file, content string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshot is every file and directory under dir with its mode and
// content, as one comparable string.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(&b, "%s %s\n", rel, info.Mode())
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.Write(data)
			b.WriteString("\n--\n")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// requireKubectl skips t without a kubectl on PATH, or fails it where one
// is required (APILOOM_CI, see testenv.Unavailable).
func requireKubectl(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		testenv.Unavailable(t, "kubectl not on PATH (hack/ensure-kubectl.sh provides one): %v", err)
	}
}
