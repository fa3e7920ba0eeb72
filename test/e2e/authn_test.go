package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	crdconfv1 "github.com/apiloom/apiloom/apis/crdconf/v1"
	"github.com/apiloom/apiloom/generated/apiserver"
	gencrdconf "github.com/apiloom/apiloom/generated/apiserver/crdconf/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/internal/testenv"
	apiloomserver "github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/hook"
	"github.com/apiloom/apiloom/server/registry"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/testserver"
)

// userRecorder is a Widget validation hook that records who created each
// Widget, as the server identified them: the one place a test can see the
// request's user before SelfSubjectReview is served.
type userRecorder struct {
	mu    sync.Mutex // guards users
	users map[string]string
}

func (u *userRecorder) install(r *registry.Registry) {
	all := &registry.Registry{}
	apiserver.Install(all)
	widget := *gencrdconf.Widget
	widget.Hooks = &hook.Hooks[*crdconfv1.Widget]{
		ValidateCreate: func(req *hook.Request, obj *crdconfv1.Widget) (hook.Warnings, field.ErrorList) {
			u.mu.Lock()
			defer u.mu.Unlock()
			if req.User == nil {
				u.users[obj.Name] = "<none>"
			} else {
				u.users[obj.Name] = fmt.Sprintf("%s %v", req.User.GetName(), req.User.GetGroups())
			}
			return nil, nil
		},
	}
	*r = *all.Select(func(i *resource.Info) bool { return i.GroupResource() != widget.GroupResource() })
	registry.Register(r, &widget)
}

func (u *userRecorder) user(name string) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.users[name]
}

// TestIdentities: every credential the server accepts identifies the user
// it names, as the server's hooks (and later its authorizer) see it: the
// kubeconfig `apiloom kubeconfig` writes (alice in dev), testserver's
// UserConfig, a --token-auth-file token, the admin kubeconfig written at
// start (a client certificate in system:masters) and the loopback token.
func TestIdentities(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokens, []byte("carol-token,carol,1003,\"qa,ops\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := &userRecorder{users: map[string]string{}}
	ts := testserver.Start(t, rec.install, testserver.WithHTTP2Server(http2Server(t)), testserver.WithTokenAuthFile(tokens),
		// Who the users are, not what they may do: TestRBACUsersKubectl.
		testserver.WithAuthorizationModes("AlwaysAllow"))

	aliceKubeconfig := filepath.Join(t.TempDir(), "alice.kubeconfig")
	var stderr bytes.Buffer
	if code := apiloomserver.Command(t.Context(), "apiloom", apiserver.Install,
		[]string{"kubeconfig", "--user", "alice", "--group", "dev", "--data-dir", ts.DataDir, "--out", aliceKubeconfig}, &stderr); code != 0 {
		t.Fatalf("apiloom kubeconfig: exit %d: %s", code, stderr.String())
	}
	if fi, err := os.Stat(aliceKubeconfig); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("alice's kubeconfig: %v %v", fi, err)
	}
	alice, err := clientcmd.BuildConfigFromFlags("", aliceKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := clientcmd.BuildConfigFromFlags("", ts.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if admin.BearerToken != "" {
		t.Errorf("the admin kubeconfig carries the loopback token")
	}
	carol := rest.CopyConfig(ts.UserConfig("nobody"))
	carol.CertData, carol.KeyData, carol.BearerToken = nil, nil, "carol-token"

	for _, tc := range []struct {
		name string
		cfg  *rest.Config
		want string
	}{
		{"alice", alice, "alice [dev system:authenticated]"},
		// A certificate's Organizations come back in DER order (a SET OF,
		// sorted by encoding: the shorter first), as kube-apiserver reads them.
		{"bob", ts.UserConfig("bob", "ops", "qa"), "bob [qa ops system:authenticated]"},
		{"carol", carol, "carol [qa ops system:authenticated]"},
		{"admin", admin, "apiloom:admin [system:masters system:authenticated]"},
		{"loopback", ts.Config, "system:apiserver [system:masters system:authenticated]"},
	} {
		w := &crdconfv1.Widget{
			ObjectMeta: metav1.ObjectMeta{Name: "by-" + tc.name, Namespace: "default"},
			Spec:       crdconfv1.WidgetSpec{Engine: "postgres", Owner: ptrTo("x")},
		}
		if _, err := versioned.NewForConfigOrDie(tc.cfg).CrdconfV1().Widgets("default").Create(t.Context(), w, metav1.CreateOptions{}); err != nil {
			t.Errorf("%s: create: %v", tc.name, err)
			continue
		}
		if got := rec.user(w.Name); got != tc.want {
			t.Errorf("%s: the server saw %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestUnauthenticated: no credential, a wrong token, a certificate from a
// CA the server does not trust, and a token-file token of another server
// all get kube-apiserver's 401 Status and nothing else; the health checks
// are served without credentials.
func TestUnauthenticated(t *testing.T) {
	ts := testserver.Start(t, apiserver.Install, testserver.WithHTTP2Server(http2Server(t)))
	other := testserver.Start(t, apiserver.Install)
	strangerCert := other.UserConfig("mallory", "system:masters")
	for _, tc := range []struct {
		name string
		cfg  *rest.Config
	}{
		{"none", &rest.Config{}},
		{"wrong token", &rest.Config{BearerToken: "wrong"}},
		{"other server's token", &rest.Config{BearerToken: other.Server.Token()}},
		{"other CA", &rest.Config{TLSClientConfig: rest.TLSClientConfig{CertData: strangerCert.CertData, KeyData: strangerCert.KeyData}}},
	} {
		tc.cfg.Host, tc.cfg.CAData = ts.Config.Host, ts.Config.CAData
		code, body := testenv.Get(t, tc.cfg, "/api/v1/namespaces")
		const want = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`
		if code != http.StatusUnauthorized || !jsonEqual(body, want) {
			t.Errorf("%s: %d %s, want 401 %s", tc.name, code, body, want)
		}
		for _, p := range []string{"/healthz", "/livez", "/readyz"} {
			if code, body := testenv.Get(t, tc.cfg, p); code != http.StatusOK {
				t.Errorf("%s: %s: %d %s", tc.name, p, code, body)
			}
		}
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// TestTLSMinimumVersion: a TLS 1.1 client cannot connect (kube-apiserver's
// minimum is TLS 1.2 too); TLS 1.2 and 1.3 clients can, with and without a
// client certificate, as the server asks for one but requires none.
func TestTLSMinimumVersion(t *testing.T) {
	ts := testserver.Start(t, apiserver.Install, testserver.WithHTTP2Server(http2Server(t)))
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ts.Config.CAData)
	alice := ts.UserConfig("alice")
	pair, err := tls.X509KeyPair(alice.CertData, alice.KeyData)
	if err != nil {
		t.Fatal(err)
	}
	host := ts.Config.Host[len("https://"):]
	dial := func(min, max uint16, certs []tls.Certificate) error {
		d := tls.Dialer{Config: &tls.Config{RootCAs: roots, MinVersion: min, MaxVersion: max, Certificates: certs}}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		c, err := d.DialContext(ctx, "tcp", host)
		if err == nil {
			_ = c.Close()
		}
		return err
	}
	if err := dial(tls.VersionTLS10, tls.VersionTLS11, nil); err == nil {
		t.Error("a TLS 1.1 handshake succeeded")
	}
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		for _, certs := range [][]tls.Certificate{nil, {pair}} {
			if err := dial(v, v, certs); err != nil {
				t.Errorf("%s with %d client certificates: %v", tls.VersionName(v), len(certs), err)
			}
		}
	}
}
