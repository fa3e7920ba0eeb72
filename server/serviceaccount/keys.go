package serviceaccount

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	jose "github.com/go-jose/go-jose/v4"
	"k8s.io/client-go/util/keyutil"
)

// Keys are the issuer's signing key and every public key a token may be
// verified with (the signing key's own first).
type Keys struct {
	signer    crypto.Signer
	alg       jose.SignatureAlgorithm
	keyID     string
	verifiers []jose.JSONWebKey
}

// NewKeys builds Keys from the signing key and the extra public keys
// (--service-account-key-file) tokens signed elsewhere are verified with.
func NewKeys(signer crypto.Signer, public []crypto.PublicKey) (*Keys, error) {
	alg, err := algorithm(signer.Public())
	if err != nil {
		return nil, err
	}
	kid, err := keyID(signer.Public())
	if err != nil {
		return nil, err
	}
	k := &Keys{signer: signer, alg: alg, keyID: kid}
	seen := map[string]bool{}
	for _, pub := range append([]crypto.PublicKey{signer.Public()}, public...) {
		a, err := algorithm(pub)
		if err != nil {
			return nil, err
		}
		id, err := keyID(pub)
		if err != nil {
			return nil, err
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		k.verifiers = append(k.verifiers, jose.JSONWebKey{Key: pub, KeyID: id, Algorithm: string(a), Use: "sig"})
	}
	return k, nil
}

// JWKS is the public key set, as /openid/v1/jwks serves it.
func (k *Keys) JWKS() jose.JSONWebKeySet {
	return jose.JSONWebKeySet{Keys: append([]jose.JSONWebKey(nil), k.verifiers...)}
}

// algorithms are the signature algorithms of the verification keys, for
// the discovery document's id_token_signing_alg_values_supported.
func (k *Keys) algorithms() []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range k.verifiers {
		if !seen[v.Algorithm] {
			seen[v.Algorithm] = true
			out = append(out, v.Algorithm)
		}
	}
	return out
}

// algorithm is the JWS algorithm upstream signs with for a key: RS256 for
// RSA, ES256/384/512 by the curve of an ECDSA key.
func algorithm(pub crypto.PublicKey) (jose.SignatureAlgorithm, error) {
	switch p := pub.(type) {
	case *rsa.PublicKey:
		return jose.RS256, nil
	case *ecdsa.PublicKey:
		switch p.Curve {
		case elliptic.P256():
			return jose.ES256, nil
		case elliptic.P384():
			return jose.ES384, nil
		case elliptic.P521():
			return jose.ES512, nil
		}
		return "", errors.New("serviceaccount: unsupported ECDSA curve")
	}
	return "", fmt.Errorf("serviceaccount: unsupported key type %T", pub)
}

// keyID is upstream's key ID: the unpadded base64url SHA-256 of the
// public key's PKIX DER, so every server with the same key names it alike.
func keyID(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// LoadSigningKey reads a PEM private key (RSA or ECDSA; PKCS#1, SEC 1 or
// PKCS#8), kube-apiserver's --service-account-signing-key-file.
func LoadSigningKey(path string) (crypto.Signer, error) {
	key, err := keyutil.PrivateKeyFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("service account signing key %s: %w", path, err)
	}
	s, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("service account signing key %s: %T cannot sign", path, key)
	}
	return s, nil
}

// LoadPublicKeys reads the public keys of a PEM file (public keys,
// private keys or certificates), kube-apiserver's --service-account-key-file.
func LoadPublicKeys(path string) ([]crypto.PublicKey, error) {
	keys, err := keyutil.PublicKeysFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("service account key file %s: %w", path, err)
	}
	out := make([]crypto.PublicKey, 0, len(keys))
	for _, k := range keys {
		out = append(out, k)
	}
	return out, nil
}

// LoadOrCreateSigningKey reads the key at path, or generates a 2048-bit
// RSA key there (mode 0600) when there is none: the key kubeadm generates
// (pki/sa.key), and RS256 is the one algorithm every OIDC relying party
// must accept, so tokens verify wherever they are federated.
func LoadOrCreateSigningKey(path string) (crypto.Signer, error) {
	if _, err := os.Stat(path); err == nil {
		return LoadSigningKey(path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	block := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	// Written aside and renamed, so a crash never leaves half a key.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, block, 0o600); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, err
	}
	return key, nil
}
