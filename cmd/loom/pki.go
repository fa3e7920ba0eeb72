package main

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// The serving certificate the host's aggregator verifies the server by:
// the APIServices carry the CA (caBundle), the Secret the certificate and
// its key. Both are kept in deploy/pki/, which is not committed, and
// reused while they still fit, so re-running loom manifests changes no
// caBundle and no Secret.
const (
	certLifetime = 365 * 24 * time.Hour
	// renewBefore: a certificate closer than this to its end is replaced,
	// so that a re-run well before expiry renews it.
	renewBefore = 30 * 24 * time.Hour
)

// servingPKI is the CA and the serving certificate, PEM-encoded.
type servingPKI struct {
	CACert, CAKey    []byte
	ServingCert, Key []byte
	caReused, reused bool
}

// pkiFiles are the names under deploy/pki/.
var pkiFiles = struct{ caCert, caKey, cert, key string }{"ca.crt", "ca.key", "tls.crt", "tls.key"}

// loadOrCreatePKI returns the CA and a serving certificate for dnsNames
// from dir, reusing what is there while it is valid (the CA a CA, the
// certificate signed by it, for every name, its key matching, neither
// within renewBefore of its end) and generating what is not. It writes
// nothing: writePKI does, once every check of the command has passed.
func loadOrCreatePKI(dir string, dnsNames []string, now time.Time) (*servingPKI, error) {
	p := &servingPKI{}
	caCert, caKey, err := loadCA(dir, now)
	if err != nil {
		if caCert, caKey, err = newCA(now); err != nil {
			return nil, err
		}
	} else {
		p.caReused = true
	}
	p.CACert, p.CAKey, err = encodePair(caCert, caKey)
	if err != nil {
		return nil, err
	}
	if p.caReused {
		if cert, key, err := loadServing(dir, caCert, dnsNames, now); err == nil {
			p.ServingCert, p.Key = pemOf("CERTIFICATE", cert.Raw), key
			p.reused = true
			return p, nil
		}
	}
	cert, key, err := newServing(caCert, caKey, dnsNames, now)
	if err != nil {
		return nil, err
	}
	p.ServingCert, p.Key, err = encodePair(cert, key)
	return p, err
}

// writePKI writes p into dir (made readable by its owner only), the keys
// readable by their owner only.
func writePKI(dir string, p *servingPKI) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
		mode os.FileMode
	}{
		{pkiFiles.caCert, p.CACert, 0o644}, {pkiFiles.caKey, p.CAKey, 0o600},
		{pkiFiles.cert, p.ServingCert, 0o644}, {pkiFiles.key, p.Key, 0o600},
	} {
		path := filepath.Join(dir, f.name)
		if err := os.WriteFile(path, f.data, f.mode); err != nil {
			return err
		}
		if err := os.Chmod(path, f.mode); err != nil {
			return err
		}
	}
	return nil
}

func loadCA(dir string, now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	cert, key, _, err := loadPair(filepath.Join(dir, pkiFiles.caCert), filepath.Join(dir, pkiFiles.caKey))
	if err != nil {
		return nil, nil, err
	}
	if !cert.IsCA || cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, nil, errors.New("not a CA")
	}
	if err := fresh(cert, now); err != nil {
		return nil, nil, err
	}
	return cert, key, nil
}

func loadServing(dir string, ca *x509.Certificate, dnsNames []string, now time.Time) (*x509.Certificate, []byte, error) {
	cert, _, keyPEM, err := loadPair(filepath.Join(dir, pkiFiles.cert), filepath.Join(dir, pkiFiles.key))
	if err != nil {
		return nil, nil, err
	}
	if err := fresh(cert, now); err != nil {
		return nil, nil, err
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	for _, name := range dnsNames {
		if _, err := cert.Verify(x509.VerifyOptions{
			DNSName: name, Roots: roots, CurrentTime: now,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}); err != nil {
			return nil, nil, err
		}
	}
	// Names the certificate has beyond those asked for (an old namespace's)
	// make it a different certificate from the one to generate.
	if !slices.Equal(slices.Sorted(slices.Values(cert.DNSNames)), slices.Sorted(slices.Values(dnsNames))) {
		return nil, nil, errors.New("other names")
	}
	return cert, keyPEM, nil
}

// fresh refuses a certificate not yet valid or within renewBefore of its end.
func fresh(cert *x509.Certificate, now time.Time) error {
	if now.Before(cert.NotBefore) || now.Add(renewBefore).After(cert.NotAfter) {
		return fmt.Errorf("%s is valid from %s to %s", cert.Subject.CommonName, cert.NotBefore, cert.NotAfter)
	}
	return nil
}

// loadPair reads a PEM certificate and its ECDSA key, checking that they
// belong together.
func loadPair(certPath, keyPath string) (*x509.Certificate, *ecdsa.PrivateKey, []byte, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, nil, nil, err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, nil, nil, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil || cb.Type != "CERTIFICATE" || kb.Type != "EC PRIVATE KEY" {
		return nil, nil, nil, errors.New("not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, nil, err
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, nil, err
	}
	if pub, ok := cert.PublicKey.(*ecdsa.PublicKey); !ok || !pub.Equal(key.Public()) {
		return nil, nil, nil, errors.New("key does not match")
	}
	return cert, key, keyPEM, nil
}

func newCA(now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: fmt.Sprintf("loom-serving-ca@%d", now.Unix())},
		NotBefore:             now.Add(-time.Hour), // clock skew
		NotAfter:              now.Add(certLifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	cert, err := sign(tmpl, tmpl, key.Public(), key)
	return cert, key, err
}

func newServing(ca *x509.Certificate, caKey crypto.Signer, dnsNames []string, now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: dnsNames[0]},
		DNSNames:    dnsNames,
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(certLifetime),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	cert, err := sign(tmpl, ca, key.Public(), caKey)
	return cert, key, err
}

// sign issues tmpl for pub, signed by signer, parent's key.
func sign(tmpl, parent *x509.Certificate, pub crypto.PublicKey, signer crypto.Signer) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(der)
}

func encodePair(cert *x509.Certificate, key *ecdsa.PrivateKey) (certPEM, keyPEM []byte, err error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pemOf("CERTIFICATE", cert.Raw), pemOf("EC PRIVATE KEY", der), nil
}

func pemOf(typ string, der []byte) []byte {
	var b bytes.Buffer
	_ = pem.Encode(&b, &pem.Block{Type: typ, Bytes: der})
	return b.Bytes()
}
