package apiserver

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	generated "github.com/apiloom/apiloom/generated/apiserver"
	"github.com/apiloom/apiloom/internal/testenv"
	"github.com/apiloom/apiloom/server/admission/dynamic"
)

// TestNoCredentialInLogs is the log canary: a server at debug verbosity
// (-v, and k8s.io libraries' klog at -v=8, where client-go logs every
// request's headers) serves requests with the
// loopback token, a bad token, a token-file token, the admin's client
// certificate and a client certificate of an unknown CA, and no token,
// Authorization header value or key material appears in anything it
// logs. The test also checks that the logs did record the failures, so
// that it cannot pass by logging nothing.
func TestNoCredentialInLogs(t *testing.T) {
	var klogOut syncBuffer
	kfs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(kfs)
	// Not 9 or more: client-go v0.37's debugging round tripper then reads
	// a request's dial timing unlocked while an abandoned dial's trace
	// callback may still write it (transport/round_trippers.go), a data
	// race the race detector caught in CI once the server's controllers
	// dialed the loopback at start.
	for k, v := range map[string]string{"v": "8", "logtostderr": "false", "alsologtostderr": "false"} {
		if err := kfs.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	klog.SetOutput(&klogOut)
	t.Cleanup(func() {
		klog.Flush()
		_ = kfs.Set("v", "0")
		_ = kfs.Set("logtostderr", "true")
	})

	const (
		fileToken = "canary-file-token-7f3a9c"
		badToken  = "canary-bad-token-2b8e41"
	)
	dir := t.TempDir()
	tokens := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokens, []byte(fileToken+",carol,1003,dev\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var out syncBuffer
	done := make(chan int, 1)
	go func() {
		// Without the admission plugins' informers, fewer loopback
		// dials to wait for.
		done <- Command(ctx, "apiloom", generated.Install, []string{"--v", "--data-dir", dir, "--secure-port", "0",
			"--etcd-min-free-disk-bytes", "0", "--token-auth-file", tokens,
			"--disable-admission-plugins", strings.Join(dynamic.Names, ",")}, &out)
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Error("server did not stop")
		}
	}()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	deadline := time.Now().Add(90 * time.Second)
	for !fileHas(kubeconfig, "https://127.0.0.1:") {
		select {
		case code := <-done:
			done <- code // for the deferred wait
			t.Fatalf("exited with %d:\n%s", code, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no kubeconfig after 90s:\n%s", out.String())
		}
	}
	admin, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	loopback, err := os.ReadFile(filepath.Join(dir, "admin-token"))
	if err != nil {
		t.Fatal(err)
	}
	strangerCA := t.TempDir()
	stranger := DefaultOptions()
	stranger.DataDir = strangerCA
	if _, _, err := loadOrCreateAdminCert(&stranger); err != nil {
		t.Fatal(err)
	}
	foreign, err := IssueClientCert(strangerCA, "mallory", []string{"system:masters"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	withToken := func(tok string) *rest.Config {
		return &rest.Config{Host: admin.Host, BearerToken: tok, TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData}}
	}
	foreignCfg := &rest.Config{Host: admin.Host, TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData, CertData: foreign.CertPEM, KeyData: foreign.KeyPEM}}
	for _, tc := range []struct {
		name string
		cfg  *rest.Config
		code int
	}{
		{"loopback token", withToken(strings.TrimSpace(string(loopback))), http.StatusOK},
		{"bad token", withToken(badToken), http.StatusUnauthorized},
		// Authenticated, and refused by RBAC: no role binds the user.
		{"token file", withToken(fileToken), http.StatusForbidden},
		{"admin certificate", admin, http.StatusOK},
		{"foreign certificate", foreignCfg, http.StatusUnauthorized},
	} {
		for _, path := range []string{"/api/v1/namespaces", "/api/v1/namespaces?watch=1&timeoutSeconds=1", "/apis/no.such/v1/things"} {
			code, _ := testenv.Get(t, tc.cfg, path)
			if path == "/api/v1/namespaces" && code != tc.code {
				t.Errorf("%s: %s: %d, want %d", tc.name, path, code, tc.code)
			}
		}
	}
	// A TLS 1.1 client: refused, and logged at debug.
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}}
	if c, err := d.DialContext(t.Context(), "tcp", strings.TrimPrefix(admin.Host, "https://")); err == nil {
		_ = c.Close()
		t.Error("a TLS 1.1 handshake succeeded")
	}
	for !strings.Contains(out.String(), "TLS handshake error") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // the server logs it after the client saw the alert
	}
	cancel()
	code := <-done
	done <- code // for the deferred wait
	klog.Flush()

	logs := out.String() + klogOut.String()
	secrets := map[string]string{
		"loopback token": strings.TrimSpace(string(loopback)),
		"bad token":      badToken,
		"token file":     fileToken,
		"PEM header":     "PRIVATE KEY",
	}
	for _, f := range []string{"pki/ca.key", "pki/admin.key", "pki/apiserver.key"} {
		secrets[f] = pemBody(t, filepath.Join(dir, f))
	}
	secrets["foreign key"] = pemBodyOf(t, foreign.KeyPEM)
	for what, s := range secrets {
		if strings.Contains(logs, s) {
			t.Errorf("the logs show the %s", what)
		}
	}
	// client-go (the server's own controllers' loopback client) logs its
	// requests at klog -v=7 and up, with the Authorization value masked.
	for rest := logs; ; {
		i := strings.Index(rest, "Authorization")
		if i < 0 {
			break
		}
		rest = rest[i+len("Authorization"):]
		if after := strings.TrimLeft(rest, ": "); !strings.HasPrefix(after, "Bearer <masked>") {
			t.Errorf("an Authorization value in the logs: %.40q", rest)
		}
	}
	// Not vacuous: the debug log and klog's did record the refusals.
	for _, want := range []string{"level=DEBUG", "TLS handshake error", "Unable to authenticate the request", "invalid bearer token", "certificate signed by unknown authority", "Bearer <masked>"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the logs lack %q; is the canary looking at them?\n%s", want, logs)
		}
	}
}

func fileHas(path, s string) bool {
	b, err := os.ReadFile(path)
	return err == nil && bytes.Contains(b, []byte(s))
}

// pemBody is a line of the base64 body of the PEM file at path: any part
// of a key in a log is a leak.
func pemBody(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return pemBodyOf(t, b)
}

func pemBodyOf(t *testing.T, b []byte) string {
	t.Helper()
	if block, _ := pem.Decode(b); block == nil {
		t.Fatal("not PEM")
	}
	lines := strings.Split(string(b), "\n")
	return lines[1][:32]
}
