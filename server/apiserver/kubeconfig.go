package apiserver

import (
	"os"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/apiloom/apiloom/server/authn"
)

// writeKubeconfig writes a kubeconfig for the admin user (a client
// certificate in system:masters) so that
// `kubectl --kubeconfig <data-dir>/kubeconfig` works without further setup.
func writeKubeconfig(path, serverURL string, caPEM []byte, admin *authn.ClientCert) error {
	return writeUserKubeconfig(path, serverURL, caPEM, "admin", admin)
}

// writeUserKubeconfig writes a kubeconfig whose one context is userName
// with cert on serverURL, trusted by caPEM, readable by its owner only.
func writeUserKubeconfig(path, serverURL string, caPEM []byte, userName string, cert *authn.ClientCert) error {
	b, err := userKubeconfig(serverURL, caPEM, userName, cert)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// userKubeconfig is the kubeconfig writeUserKubeconfig writes.
func userKubeconfig(serverURL string, caPEM []byte, userName string, cert *authn.ClientCert) ([]byte, error) {
	// caPEM is nil for an operator-provided certificate, which the system
	// pool is then expected to trust.
	cluster := &clientcmdapi.Cluster{Server: serverURL, CertificateAuthorityData: caPEM}
	cfg := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"apiloom": cluster},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{userName: {ClientCertificateData: cert.CertPEM, ClientKeyData: cert.KeyPEM}},
		Contexts:       map[string]*clientcmdapi.Context{"apiloom": {Cluster: "apiloom", AuthInfo: userName, Namespace: "default"}},
		CurrentContext: "apiloom",
	}
	return clientcmd.Write(cfg)
}

// writeKubeconfig writes the admin kubeconfig at s.KubeconfigPath(): the
// admin's client certificate, or in aggregated mode, where client
// certificates are the host's to sign, the loopback token.
func (s *Server) writeKubeconfig(caPEM []byte, admin *authn.ClientCert) error {
	if admin != nil {
		return writeKubeconfig(s.KubeconfigPath(), s.loopbackURL, caPEM, admin)
	}
	cfg := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"apiloom": {Server: s.loopbackURL, CertificateAuthorityData: caPEM}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{authn.LoopbackUser: {Token: s.token}},
		Contexts:       map[string]*clientcmdapi.Context{"apiloom": {Cluster: "apiloom", AuthInfo: authn.LoopbackUser, Namespace: "default"}},
		CurrentContext: "apiloom",
	}
	b, err := clientcmd.Write(cfg)
	if err != nil {
		return err
	}
	tmp := s.KubeconfigPath() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, s.KubeconfigPath())
}
