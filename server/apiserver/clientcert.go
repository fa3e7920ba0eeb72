package apiserver

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/apiloom/apiloom/server/authn"
)

// The admin identity of the kubeconfig the server writes at every start: a
// client certificate in system:masters, which the authorizers allow
// everything, as kubeadm's admin.conf.
const (
	AdminUser = "apiloom:admin"
	// adminValidity is how long a generated admin certificate lasts; it is
	// renewed at start within renewWithin of its end, as the serving one.
	adminValidity = 365 * 24 * time.Hour
)

var adminGroups = []string{user.SystemPrivilegedGroup}

// loadOrCreateAdminCert returns the admin's client certificate kept in
// dataDir/pki, made on first start and again when it is about to expire,
// is no longer signed by the server's CA (which may have just been
// renewed), or names another identity.
func loadOrCreateAdminCert(o *Options) (*authn.ClientCert, []string, error) {
	return loadOrCreateAdminCertAt(o, time.Now())
}

func loadOrCreateAdminCertAt(o *Options, now time.Time) (*authn.ClientCert, []string, error) {
	ca, notes, err := loadOrCreateCA(o, now)
	if err != nil {
		return nil, nil, err
	}
	crt, key := o.path("pki", "admin.crt"), o.path("pki", "admin.key")
	if why := adminProblem(crt, key, ca, now); why != "" {
		if exists(crt) {
			notes = append(notes, "generated a new admin client certificate: "+why)
		}
		c, err := issueClientCert(o.DataDir, AdminUser, adminGroups, now, now.Add(adminValidity))
		if err != nil {
			return nil, nil, err
		}
		if err := os.WriteFile(key, c.KeyPEM, 0o600); err != nil {
			return nil, nil, err
		}
		if err := os.WriteFile(crt, c.CertPEM, 0o644); err != nil {
			return nil, nil, err
		}
	}
	certPEM, err := os.ReadFile(crt)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(key)
	if err != nil {
		return nil, nil, err
	}
	return &authn.ClientCert{CertPEM: certPEM, KeyPEM: keyPEM}, notes, nil
}

// adminProblem says why the admin certificate at crtPath cannot be kept
// ("" when it can).
func adminProblem(crtPath, keyPath string, ca *x509.Certificate, now time.Time) string {
	leaf, why := loadLeaf(crtPath, keyPath)
	if leaf == nil {
		return why
	}
	if leaf.Subject.CommonName != AdminUser || !slices.Equal(leaf.Subject.Organization, adminGroups) {
		return "it names " + leaf.Subject.String()
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	opts := x509.VerifyOptions{Roots: roots, CurrentTime: now.Add(renewWithin), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if _, err := leaf.Verify(opts); err != nil {
		return fmt.Sprintf("the old one (valid until %s) does not verify in %s: %v", leaf.NotAfter.Format(time.RFC3339), renewWithin, err)
	}
	return ""
}

// ErrNoCA is returned by IssueClientCert when the data directory holds no
// CA of the server's (it is made at the server's first start).
var ErrNoCA = errors.New("apiserver: no server CA in the data directory (start the server once first)")

// IssueClientCert makes a client certificate for userName in groups,
// valid for validFor, signed by the CA of the server whose data directory
// is dataDir (dataDir/pki/ca.{crt,key}), which every such server trusts:
// the credential of `apiloom kubeconfig` and of testserver's UserConfig.
func IssueClientCert(dataDir, userName string, groups []string, validFor time.Duration) (*authn.ClientCert, error) {
	now := time.Now()
	return issueClientCert(dataDir, userName, groups, now, now.Add(validFor))
}

func issueClientCert(dataDir, userName string, groups []string, now, notAfter time.Time) (*authn.ClientCert, error) {
	caCrt, caKey := filepath.Join(dataDir, "pki", "ca.crt"), filepath.Join(dataDir, "pki", "ca.key")
	if !exists(caCrt) || !exists(caKey) {
		return nil, fmt.Errorf("%w: %s", ErrNoCA, caCrt)
	}
	pair, err := tls.LoadX509KeyPair(caCrt, caKey)
	if err != nil {
		return nil, fmt.Errorf("load the server's CA: %w", err)
	}
	ca, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, err
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, authn.ErrBadCA
	}
	return authn.NewClientCert(ca, signer, userName, groups, now, notAfter)
}
