// Package aggregation_test runs apiloom as an aggregated API server behind
// a real kube-apiserver (internal/hostcluster) and drives it through the
// host's endpoint with kubectl, the generated clientset and informers.
// apiloom runs as a child process (this test binary, re-executed as the
// server), so that it can be stopped and restarted and its CPU measured
// apart from the clients'.
package aggregation_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	genapiserver "github.com/apiloom/apiloom/generated/apiserver"
	"github.com/apiloom/apiloom/internal/hostcluster"
	"github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/registry"
)

// childEnv makes this test binary the apiloom server (TestMain).
const childEnv = "APILOOM_AGGREGATION_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		apiserver.Main("apiloom", genapiserver.Install)
		return
	}
	os.Exit(m.Run())
}

// The Service the APIServices name; apiloom's serving certificate carries
// its DNS name, as the aggregator verifies it.
const (
	serviceName      = "apiloom"
	serviceNamespace = "default"
)

// extension is apiloom running in aggregated mode as a child process.
type extension struct {
	dir, hostKubeconfig string
	port                int
	caPEM               []byte
	cmd                 *exec.Cmd
	exited              chan struct{}
	// Direct reaches apiloom itself as its loopback user.
	Direct *rest.Config
}

// startExtension starts apiloom for host on a free port, with a serving
// certificate for the Service's DNS name, and waits until it is ready.
func startExtension(t *testing.T, host *hostcluster.Cluster) *extension {
	t.Helper()
	dir := t.TempDir()
	caPEM := writeServingCert(t, dir, serviceName+"."+serviceNamespace+".svc")
	e := &extension{dir: dir, hostKubeconfig: host.KubeconfigPath, port: freePort(t), caPEM: caPEM}
	e.start(t)
	t.Cleanup(func() { e.stop(t) })
	return e
}

// start runs the server process and waits for /readyz.
func (e *extension) start(t *testing.T) {
	t.Helper()
	cmd := exec.Command(os.Args[0],
		"--authentication-kubeconfig", e.hostKubeconfig, "--authorization-kubeconfig", e.hostKubeconfig,
		"--tls-cert-file", filepath.Join(e.dir, "tls.crt"), "--tls-private-key-file", filepath.Join(e.dir, "tls.key"),
		"--data-dir", filepath.Join(e.dir, "data"), "--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(e.port))
	cmd.Env = append(os.Environ(), childEnv+"=1")
	logFile, err := os.OpenFile(filepath.Join(e.dir, "apiloom.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	e.cmd, e.exited = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); _ = logFile.Close(); close(e.exited) }()

	token := ""
	deadline := time.Now().Add(90 * time.Second)
	for {
		if b, err := os.ReadFile(filepath.Join(e.dir, "data", "admin-token")); err == nil && token == "" {
			token = string(bytes.TrimSpace(b))
		}
		if token != "" {
			e.Direct = &rest.Config{Host: "https://127.0.0.1:" + strconv.Itoa(e.port), BearerToken: token,
				TLSClientConfig: rest.TLSClientConfig{CAData: e.caPEM}, QPS: -1}
			if code, _ := get(t.Context(), e.Direct, "/readyz", nil); code == http.StatusOK {
				return
			}
		}
		select {
		case <-e.exited:
			t.Fatalf("apiloom exited before it was ready:\n%s", e.log())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("apiloom not ready after 90s:\n%s", e.log())
		}
	}
}

// stop ends the server gracefully (SIGTERM), killing it after 30s.
func (e *extension) stop(t *testing.T) {
	if e.cmd == nil {
		return
	}
	_ = e.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.exited:
	case <-time.After(30 * time.Second):
		_ = e.cmd.Process.Kill()
		<-e.exited
		t.Errorf("apiloom did not stop within 30s of SIGTERM")
	}
	e.cmd = nil
	if t.Failed() {
		t.Logf("apiloom's log:\n%s", e.log())
	}
}

// pid is the server process's.
func (e *extension) pid() int { return e.cmd.Process.Pid }

func (e *extension) log() string {
	b, _ := os.ReadFile(filepath.Join(e.dir, "apiloom.log"))
	if len(b) > 20000 {
		b = b[len(b)-20000:]
	}
	return string(b)
}

// groupVersions are the APIs apiloom serves in aggregated mode: the
// registry's, without the built-in kinds, the host's.
func groupVersions() []schema.GroupVersion {
	reg := &registry.Registry{}
	genapiserver.Install(reg)
	var gvs []schema.GroupVersion
	for _, info := range reg.Infos() {
		gv := schema.GroupVersion{Group: info.Group, Version: info.Version}
		if !info.BuiltIn && !slices.Contains(gvs, gv) {
			gvs = append(gvs, gv)
		}
	}
	return gvs
}

var apiServices = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// register creates the ExternalName Service for localhost and an
// APIService per group/version naming it, and waits until each is
// Available.
func (e *extension) register(t *testing.T, host *hostcluster.Cluster) []string {
	t.Helper()
	ctx := t.Context()
	kube := kubernetes.NewForConfigOrDie(host.Config)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: serviceName, Namespace: serviceNamespace},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost",
			Ports: []corev1.ServicePort{{Port: int32(e.port)}}},
	}
	if _, err := kube.CoreV1().Services(serviceNamespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(host.Config)
	var names []string
	for i, gv := range groupVersions() {
		name := gv.Version + "." + gv.Group
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
			"metadata": map[string]any{"name": name},
			"spec": map[string]any{
				"group": gv.Group, "version": gv.Version, "caBundle": e.caPEM,
				"groupPriorityMinimum": int64(1000), "versionPriority": int64(15 - i),
				"service": map[string]any{"namespace": serviceNamespace, "name": serviceName, "port": int64(e.port)},
			},
		}}
		if _, err := dyn.Resource(apiServices).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create APIService %s: %v", name, err)
		}
		names = append(names, name)
	}
	for _, name := range names {
		waitAvailable(t, host, name, "True", 90*time.Second)
	}
	return names
}

// waitAvailable waits until APIService name's Available condition is
// status, and returns its message.
func waitAvailable(t *testing.T, host *hostcluster.Cluster, name, status string, timeout time.Duration) string {
	t.Helper()
	dyn := dynamic.NewForConfigOrDie(host.Config)
	last, msg := "", ""
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		obj, err := dyn.Resource(apiServices).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Available" {
				last = fmt.Sprintf("%v: %v (%v)", m["status"], m["message"], m["reason"])
				msg, _ = m["message"].(string)
				return m["status"] == status, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("APIService %s: Available is not %s after %v; last: %s", name, status, timeout, last)
	}
	return msg
}

// writeServingCert writes a CA and a serving certificate for dnsName,
// localhost and 127.0.0.1 into dir (tls.crt, tls.key) and returns the CA.
func writeServingCert(t *testing.T, dir, dnsName string) []byte {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "apiloom-test-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: dnsName},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		DNSNames: []string{dnsName, "localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("tls.crt", "CERTIFICATE", der)
	write("tls.key", "EC PRIVATE KEY", keyDER)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// get sends GET path to cfg's server with cfg's credentials and the given
// headers, and returns the status code and response.
func get(ctx context.Context, cfg *rest.Config, path string, header http.Header) (int, *http.Response) {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return 0, nil
	}
	return do(ctx, client, cfg.Host+path, header)
}

func do(ctx context.Context, client *http.Client, url string, header http.Header) (int, *http.Response) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return 0, nil
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		// The error in place of the body, for the failure message.
		return 0, &http.Response{Body: nopCloser{bytes.NewBufferString(err.Error())}}
	}
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	_ = resp.Body.Close()
	resp.Body = nopCloser{&body}
	return resp.StatusCode, resp
}

type nopCloser struct{ *bytes.Buffer }

func (nopCloser) Close() error { return nil }

// tlsClient is an HTTPS client trusting caPEM that presents cert, if any.
func tlsClient(caPEM []byte, cert *tls.Certificate) *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}, Timeout: 30 * time.Second}
}

// newFrontProxy makes a CA and a client certificate named cn that it
// signed: a second front proxy.
func newFrontProxy(t *testing.T, cn string) (caPEM []byte, cert tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(10), Subject: pkix.Name{CommonName: cn + "-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(11), Subject: pkix.Name{CommonName: cn},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
