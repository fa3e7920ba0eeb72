// Package hostcluster starts a real kube-apiserver v1.37 (the "host
// cluster") inside a Go test, with its etcd in-process, so that apiloom can
// be tested where users run it: as an aggregated API server behind the
// host's aggregation layer (an APIService), and its manifests applied to a
// real cluster. The front proxy is always configured as kubeadm configures
// it, authentication is by static tokens and client certificates, and the
// server's certificate is verified: nothing is looser than a real cluster.
//
// The binaries come from APILOOM_KUBE_APISERVER and
// APILOOM_KUBE_CONTROLLER_MANAGER, else from the cache directory that
// hack/ensure-kube-apiserver.sh builds them into; without them a test is
// skipped locally and fails in CI (internal/testenv).
package hostcluster

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/internal/testenv"
)

// Environment variables naming the binaries; hack/test.sh sets them.
const (
	KubeAPIServerEnv         = "APILOOM_KUBE_APISERVER"
	KubeControllerManagerEnv = "APILOOM_KUBE_CONTROLLER_MANAGER"
)

// AdminToken authenticates the admin user "admin" in group system:masters.
const AdminToken = "admintoken"

// readyTimeout bounds how long kube-apiserver (and kube-controller-manager)
// may take to become ready; a cold start under -race on two cores takes
// well under it.
const readyTimeout = 90 * time.Second

// Options of the host cluster.
type Options struct {
	// KCM also runs kube-controller-manager with only the garbage-collector
	// and namespace controllers, so that owner references and namespace
	// deletion work as in a real cluster.
	KCM bool
	// KCMControllers, when set, are the controllers kube-controller-manager
	// runs instead of the garbage-collector and namespace controllers
	// (its --controllers).
	KCMControllers []string
	// RBAC sets --authorization-mode=RBAC; otherwise AlwaysAllow.
	RBAC bool
	// Tokens are static token users besides the admin (AdminToken).
	Tokens []Token
}

// Token is a static token user (kube-apiserver's --token-auth-file).
type Token struct {
	Token, User, UID string
	Groups           []string
}

// Cluster is a running host cluster.
type Cluster struct {
	// Dir holds the certificates, keys, kubeconfigs and logs.
	Dir string
	// Host is kube-apiserver's URL, https://127.0.0.1:port.
	Host string
	// KubeconfigPath is the admin's kubeconfig: token auth, the server's
	// CA verified.
	KubeconfigPath string
	// Config is the admin's client configuration.
	Config *rest.Config
	// ServerCAPEM and ServerCAFile are the CA that signed kube-apiserver's
	// (and kube-controller-manager's) serving certificate.
	ServerCAPEM  []byte
	ServerCAFile string
	// ClientCAFile is the CA kube-apiserver authenticates client
	// certificates with (--client-ca-file); ClientCert mints them.
	ClientCAFile string
	// FrontProxyCAFile is the request-header CA
	// (--requestheader-client-ca-file); FrontProxyClientCertFile and
	// FrontProxyClientKeyFile are the aggregator's client certificate
	// (CN front-proxy-client) it signed, which kube-apiserver presents to
	// aggregated API servers.
	FrontProxyCAFile         string
	FrontProxyClientCertFile string
	FrontProxyClientKeyFile  string
	// FrontProxyCAPEM is FrontProxyCAFile's content.
	FrontProxyCAPEM []byte

	clientCA  *authority
	kubeconfs atomic.Int32 // kubeconfig files written by KubectlKubeconfig
	apiServer *process
}

// APIServerPID is kube-apiserver's process ID: to read the CPU time it
// spends (/proc/PID/stat) in measurements.
func (c *Cluster) APIServerPID() int { return c.apiServer.cmd.Process.Pid }

// Start starts etcd, kube-apiserver and, with o.KCM, kube-controller-manager
// for t, and returns when they are ready. Everything is stopped and removed
// at t's cleanup; if t failed, the tail of each process's log is logged.
func Start(t testing.TB, o Options) *Cluster {
	t.Helper()
	kas := binary(t, KubeAPIServerEnv, "kube-apiserver")
	var kcm string
	if o.KCM {
		kcm = binary(t, KubeControllerManagerEnv, "kube-controller-manager")
	}
	dir := t.TempDir()
	c := &Cluster{Dir: dir}

	serverCA := newAuthority(t, "host-cluster-ca")
	c.ServerCAPEM = serverCA.certPEM
	c.ServerCAFile = writeFile(t, dir, "pki/server-ca.crt", serverCA.certPEM)
	crt, key := serverCA.servingCert(t)
	servingCert, servingKey := writeFile(t, dir, "pki/serving.crt", crt), writeFile(t, dir, "pki/serving.key", key)

	c.clientCA = newAuthority(t, "host-cluster-client-ca")
	c.ClientCAFile = writeFile(t, dir, "pki/client-ca.crt", c.clientCA.certPEM)

	fp := newAuthority(t, "front-proxy-ca")
	c.FrontProxyCAPEM = fp.certPEM
	c.FrontProxyCAFile = writeFile(t, dir, "pki/front-proxy-ca.crt", fp.certPEM)
	crt, key = fp.clientCert(t, "front-proxy-client")
	c.FrontProxyClientCertFile = writeFile(t, dir, "pki/front-proxy-client.crt", crt)
	c.FrontProxyClientKeyFile = writeFile(t, dir, "pki/front-proxy-client.key", key)

	saKey, saPub := serviceAccountKeys(t, filepath.Join(dir, "pki"))
	tokens := writeFile(t, dir, "tokens.csv", tokenFile(append([]Token{{
		Token: AdminToken, User: "admin", UID: "admin", Groups: []string{"system:masters"},
	}}, o.Tokens...)))

	authz := "AlwaysAllow"
	if o.RBAC {
		authz = "RBAC"
	}
	etcd := etcdtest.StartServer(t)

	etcdURL := "http://" + etcd.Clients[0].Addr().String()
	_, c.apiServer = serve(t, dir, "kube-apiserver", kas, "/readyz", func(port int) *rest.Config {
		c.Host = "https://127.0.0.1:" + strconv.Itoa(port)
		c.Config = c.UserConfig(AdminToken)
		return c.Config
	}, func(port int) []string {
		return []string{
			"--etcd-servers=" + etcdURL,
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(port),
			"--cert-dir=" + filepath.Join(dir, "kas-certs"),
			"--tls-cert-file=" + servingCert,
			"--tls-private-key-file=" + servingKey,
			"--client-ca-file=" + c.ClientCAFile,
			"--token-auth-file=" + tokens,
			"--authorization-mode=" + authz,
			"--service-cluster-ip-range=10.96.0.0/12",
			"--service-account-issuer=https://kubernetes.default.svc",
			"--service-account-signing-key-file=" + saKey,
			"--service-account-key-file=" + saPub,
			// The aggregation layer's front proxy, as kubeadm sets it up.
			"--requestheader-client-ca-file=" + c.FrontProxyCAFile,
			"--requestheader-allowed-names=front-proxy-client",
			"--requestheader-username-headers=X-Remote-User",
			"--requestheader-group-headers=X-Remote-Group",
			"--requestheader-extra-headers-prefix=X-Remote-Extra-",
			"--requestheader-uid-headers=X-Remote-Uid",
			"--proxy-client-cert-file=" + c.FrontProxyClientCertFile,
			"--proxy-client-key-file=" + c.FrontProxyClientKeyFile,
		}
	})
	c.KubeconfigPath = c.writeKubeconfig(t, "kubeconfig", AdminToken)

	if o.KCM {
		controllers := "garbagecollector,namespace"
		if len(o.KCMControllers) > 0 {
			controllers = strings.Join(o.KCMControllers, ",")
		}
		serve(t, dir, "kube-controller-manager", kcm, "/healthz", func(port int) *rest.Config {
			// /healthz is always allowed, so an anonymous client that
			// verifies the server's certificate asks it.
			return &rest.Config{
				Host:            "https://127.0.0.1:" + strconv.Itoa(port),
				TLSClientConfig: rest.TLSClientConfig{CAData: c.ServerCAPEM},
			}
		}, func(port int) []string {
			return []string{
				"--kubeconfig=" + c.KubeconfigPath,
				"--controllers=" + controllers,
				"--leader-elect=false",
				"--bind-address=127.0.0.1",
				"--secure-port=" + strconv.Itoa(port),
				"--cert-dir=" + filepath.Join(dir, "kcm-certs"),
				"--tls-cert-file=" + servingCert,
				"--tls-private-key-file=" + servingKey,
			}
		})
	}
	return c
}

// binary is the path of a kube binary: from env, else the cache directory
// hack/ensure-kube-apiserver.sh builds into. Missing, it ends t through
// testenv.Unavailable.
func binary(t testing.TB, env, name string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		cache := os.Getenv("KUBE_APISERVER_CACHE")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				testenv.Unavailable(t, "%s is not set and there is no home directory: %v", env, err)
				return ""
			}
			cache = filepath.Join(home, ".cache", "apiloom-peer")
		}
		p = filepath.Join(cache, name)
	}
	if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		testenv.Unavailable(t, "no %s binary at %s (set %s, or run hack/ensure-kube-apiserver.sh)", name, p, env)
	}
	return p
}

// tokenFile renders kube-apiserver's static token CSV:
// token,user,uid,"group1,group2".
func tokenFile(tokens []Token) []byte {
	var b strings.Builder
	for _, tk := range tokens {
		fmt.Fprintf(&b, "%s,%s,%s,%q\n", tk.Token, tk.User, tk.UID, strings.Join(tk.Groups, ","))
	}
	return []byte(b.String())
}

// freePort is a loopback port nobody listened on a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// serve starts bin, serving on a free loopback port, and waits until path
// answers 200 there. A free port is found by listening and closing, so
// another process may take it first: then bin exits saying so, and serve
// tries again on another port. config gives the client that asks path for a
// port, args bin's arguments. It returns the port.
func serve(t testing.TB, dir, name, bin, path string, config func(port int) *rest.Config, args func(port int) []string) (int, *process) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		port := freePort(t)
		logName := name
		if attempt > 0 {
			logName = fmt.Sprintf("%s-%d", name, attempt)
		}
		p := startProcess(t, dir, logName, bin, args(port)...)
		err := waitHealthy(t.Context(), p, config(port), path)
		if err == nil {
			return port, p
		}
		if attempt < 4 && p.exited() != nil && p.logContains("address already in use") {
			continue
		}
		t.Fatalf("%v; %s's log:\n%s", err, name, p.tail())
	}
}

// waitHealthy polls path on cfg's server until it answers 200, and fails
// if p exits or readyTimeout passes first.
func waitHealthy(ctx context.Context, p *process, cfg *rest.Config, path string) error {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	client.Timeout = 5 * time.Second
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	last := "no answer yet"
	for {
		if err := p.exited(); err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+path, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s%s not healthy within %v (last: %s)", p.name, path, readyTimeout, last)
		case <-tick.C:
		}
	}
}

// UserConfig is a client configuration for the user of token (AdminToken or
// one of Options.Tokens).
func (c *Cluster) UserConfig(token string) *rest.Config {
	return &rest.Config{
		Host:            c.Host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.ServerCAPEM},
	}
}

// KubectlKubeconfig writes a kubeconfig file for the user of token, for
// kubectl --kubeconfig, and returns its path.
func (c *Cluster) KubectlKubeconfig(t testing.TB, token string) string {
	t.Helper()
	n := c.kubeconfs.Add(1)
	return c.writeKubeconfig(t, "kubeconfig-"+strconv.Itoa(int(n)), token)
}

func (c *Cluster) writeKubeconfig(t testing.TB, name, token string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["host"] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: c.ServerCAPEM}
	kc.AuthInfos["user"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["host"] = &clientcmdapi.Context{Cluster: "host", AuthInfo: "user"}
	kc.CurrentContext = "host"
	data, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, c.Dir, name, data)
}

// ClientCert mints a client certificate that kube-apiserver authenticates
// as user in groups (x509 authentication against ClientCAFile).
func (c *Cluster) ClientCert(t testing.TB, user string, groups ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	return c.clientCA.clientCert(t, user, groups...)
}
