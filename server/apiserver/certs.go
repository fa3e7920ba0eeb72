package apiserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// servingCert is the server's TLS identity and the CA clients trust it by.
type servingCert struct {
	cert  tls.Certificate
	caPEM []byte // nil when the operator brought their own certificate
	// notes are what the server should log about the certificates: one
	// replaced, or one the operator brought that is expired or expiring.
	notes []string
}

// renewWithin is how close to its expiry a generated certificate (or CA)
// is replaced at start, so that a server restarted now and then never
// serves an expired one; the kubeconfig written at every start carries the
// CA in use.
const renewWithin = 30 * 24 * time.Hour

// loadOrCreateServingCert returns the operator's certificate if one was
// given, or else a serving certificate signed by a CA of our own, both kept
// in dataDir/pki, generated on first start and again when they are about
// to expire (renewWithin), no longer match each other, or do not cover the
// bind address.
func loadOrCreateServingCert(o *Options) (*servingCert, error) {
	return loadOrCreateServingCertAt(o, time.Now())
}

func loadOrCreateServingCertAt(o *Options, now time.Time) (*servingCert, error) {
	if o.TLSCertFile != "" {
		c, err := tls.LoadX509KeyPair(o.TLSCertFile, o.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("load serving certificate: %w", err)
		}
		out := &servingCert{cert: c}
		if leaf, err := x509.ParseCertificate(c.Certificate[0]); err == nil && now.Add(renewWithin).After(leaf.NotAfter) {
			out.notes = append(out.notes, fmt.Sprintf("the serving certificate %s expires at %s; replace it", o.TLSCertFile, leaf.NotAfter.Format(time.RFC3339)))
		}
		return out, nil
	}
	caCrt, caKey := o.path("pki", "ca.crt"), o.path("pki", "ca.key")
	crt, key := o.path("pki", "apiserver.crt"), o.path("pki", "apiserver.key")
	ca, notes, err := loadOrCreateCA(o, now)
	if err != nil {
		return nil, err
	}
	if why := servingProblem(crt, key, ca, o.BindAddress, now); why != "" {
		if exists(crt) {
			notes = append(notes, "generated a new serving certificate: "+why)
		}
		if err := writeServing(caCrt, caKey, crt, key, o.BindAddress, now); err != nil {
			return nil, err
		}
	}
	c, err := tls.LoadX509KeyPair(crt, key)
	if err != nil {
		return nil, fmt.Errorf("load generated serving certificate: %w", err)
	}
	caPEM, err := os.ReadFile(caCrt)
	if err != nil {
		return nil, err
	}
	return &servingCert{cert: c, caPEM: caPEM, notes: notes}, nil
}

// loadOrCreateCA returns the server's own CA, kept in dataDir/pki and made
// on first start or when it is about to expire (renewWithin), with a note
// when an old one was replaced. It signs the generated serving certificate
// and the client certificates the server trusts (the admin's, those of
// `apiloom kubeconfig`), even when the operator brought a serving
// certificate of their own.
func loadOrCreateCA(o *Options, now time.Time) (*x509.Certificate, []string, error) {
	caCrt, caKey := o.path("pki", "ca.crt"), o.path("pki", "ca.key")
	if err := os.MkdirAll(o.path("pki"), 0o700); err != nil {
		return nil, nil, err
	}
	var notes []string
	ca, why := loadCA(caCrt, caKey, now)
	if ca == nil {
		if why != "" {
			notes = append(notes, "generated a new CA: "+why)
		}
		if err := writeCA(caCrt, caKey, now); err != nil {
			return nil, nil, err
		}
		if ca, why = loadCA(caCrt, caKey, now); ca == nil {
			return nil, nil, fmt.Errorf("generated CA does not load: %s", why)
		}
	}
	return ca, notes, nil
}

// loadCA returns the CA kept at crtPath and keyPath if it is usable past
// now+renewWithin, and otherwise nil and why not ("" when there is none).
func loadCA(crtPath, keyPath string, now time.Time) (*x509.Certificate, string) {
	if !exists(crtPath) || !exists(keyPath) {
		return nil, ""
	}
	pair, err := tls.LoadX509KeyPair(crtPath, keyPath)
	if err != nil {
		return nil, err.Error()
	}
	ca, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, err.Error()
	}
	if now.Add(renewWithin).After(ca.NotAfter) {
		return nil, "the old one expires at " + ca.NotAfter.Format(time.RFC3339)
	}
	return ca, ""
}

// loadLeaf returns the certificate of the key pair at crtPath and
// keyPath, or nil and why it cannot be used ("none yet" when missing).
func loadLeaf(crtPath, keyPath string) (*x509.Certificate, string) {
	if !exists(crtPath) || !exists(keyPath) {
		return nil, "none yet"
	}
	pair, err := tls.LoadX509KeyPair(crtPath, keyPath)
	if err != nil {
		return nil, err.Error()
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, err.Error()
	}
	return leaf, ""
}

// servingProblem says why the serving certificate at crtPath cannot be
// kept: missing, not signed by ca, expiring before now+renewWithin, or not
// valid for the bind address. "" means it can be kept.
func servingProblem(crtPath, keyPath string, ca *x509.Certificate, bind string, now time.Time) string {
	leaf, why := loadLeaf(crtPath, keyPath)
	if leaf == nil {
		return why
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	hosts := []string{"127.0.0.1"}
	if ip := net.ParseIP(bind); ip != nil && !ip.IsUnspecified() && !ip.IsLoopback() {
		hosts = append(hosts, bind)
	}
	for _, h := range hosts {
		opts := x509.VerifyOptions{Roots: roots, DNSName: h, CurrentTime: now.Add(renewWithin)}
		if _, err := leaf.Verify(opts); err != nil {
			return fmt.Sprintf("the old one (valid until %s) does not verify for %s in %s: %v",
				leaf.NotAfter.Format(time.RFC3339), h, renewWithin, err)
		}
	}
	return ""
}

func writeCA(crtPath, keyPath string, now time.Time) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "apiloom-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	return writePair(crtPath, der, keyPath, key)
}

func writeServing(caCrtPath, caKeyPath, crtPath, keyPath, bind string, now time.Time) error {
	ca, err := tls.LoadX509KeyPair(caCrtPath, caKeyPath)
	if err != nil {
		return fmt.Errorf("load CA: %w", err)
	}
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	ips := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	if ip := net.ParseIP(bind); ip != nil && !ip.IsUnspecified() && !ip.IsLoopback() {
		ips = append(ips, ip)
	}
	hosts := []string{"localhost", "apiloom"}
	if h, err := os.Hostname(); err == nil {
		hosts = append(hosts, h)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "apiloom"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     hosts,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, ca.PrivateKey)
	if err != nil {
		return err
	}
	return writePair(crtPath, der, keyPath, key)
}

func writePair(crtPath string, der []byte, keyPath string, key *ecdsa.PrivateKey) error {
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(crtPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}
