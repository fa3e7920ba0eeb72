package authn

import (
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
	"time"
)

// ErrBadCA is returned when the CA given to sign a client certificate
// cannot sign one.
var ErrBadCA = errors.New("authn: CA cannot sign client certificates")

// ClientCert is a client certificate and its key, PEM encoded, as a
// kubeconfig carries them.
type ClientCert struct {
	CertPEM, KeyPEM []byte
}

// NewClientCert makes a key and a client certificate for userName in
// groups (CN and O, which the x509 authenticator reads back), signed by
// ca, valid from an hour before now (clock skew) until notAfter, capped at
// the CA's own expiry so that no certificate outlives the CA that vouches
// for it.
func NewClientCert(ca *x509.Certificate, caKey crypto.Signer, userName string, groups []string, now, notAfter time.Time) (*ClientCert, error) {
	if userName == "" {
		return nil, errors.New("authn: a client certificate needs a user name")
	}
	if !ca.IsCA || ca.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, ErrBadCA
	}
	if notAfter.After(ca.NotAfter) {
		notAfter = ca.NotAfter
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: userName, Organization: groups},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCA, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &ClientCert{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}
