package apiserver

import (
	"os"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig for the admin user so that
// `kubectl --kubeconfig <data-dir>/kubeconfig` works without further setup.
func writeKubeconfig(path, serverURL string, caPEM []byte, token string) error {
	// caPEM is nil for an operator-provided certificate, which the system
	// pool is then expected to trust.
	cluster := &clientcmdapi.Cluster{Server: serverURL, CertificateAuthorityData: caPEM}
	cfg := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"apiloom": cluster},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"admin": {Token: token}},
		Contexts:       map[string]*clientcmdapi.Context{"apiloom": {Cluster: "apiloom", AuthInfo: "admin", Namespace: "default"}},
		CurrentContext: "apiloom",
	}
	b, err := clientcmd.Write(cfg)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
