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
}

// loadOrCreateServingCert returns the operator's certificate if one was
// given, or else a serving certificate signed by a CA of our own, both kept
// in dataDir/pki and generated on first start.
func loadOrCreateServingCert(o *Options) (*servingCert, error) {
	if o.TLSCertFile != "" {
		c, err := tls.LoadX509KeyPair(o.TLSCertFile, o.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("load serving certificate: %w", err)
		}
		return &servingCert{cert: c}, nil
	}
	dir := o.path("pki")
	caCrt, caKey := o.path("pki", "ca.crt"), o.path("pki", "ca.key")
	crt, key := o.path("pki", "apiserver.crt"), o.path("pki", "apiserver.key")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if !exists(caCrt) || !exists(caKey) {
		if err := writeCA(caCrt, caKey); err != nil {
			return nil, err
		}
		_ = os.Remove(crt) // a new CA invalidates the old serving certificate
	}
	if !exists(crt) || !exists(key) {
		if err := writeServing(caCrt, caKey, crt, key, o.BindAddress); err != nil {
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
	return &servingCert{cert: c, caPEM: caPEM}, nil
}

func writeCA(crtPath, keyPath string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
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

func writeServing(caCrtPath, caKeyPath, crtPath, keyPath, bind string) error {
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
	now := time.Now()
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
