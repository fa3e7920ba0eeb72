package opsbench

import (
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"github.com/apiloom/apiloom/internal/kmstest"
	"github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/testserver"
)

// Encryption at rest of Secrets, per provider. "off" and every other
// configuration run with Secrets given no transformer at all
// (plaintextSecrets); "identity" is the explicit opt-out an operator
// writes (Secrets in plaintext, through upstream's identity transformer);
// the embedded etcd's default is "secretbox".
func init() {
	for _, name := range []string{"identity", "aescbc", "aesgcm", "secretbox", "kms-v2"} {
		configurations = append(configurations, configuration{name: "encryption-" + name, options: func(b *testing.B) []testserver.Option {
			return []testserver.Option{encryptSecrets(b, name)}
		}})
	}
}

// encryptSecrets writes a configuration encrypting Secrets with the
// provider typ and gives it to the server.
func encryptSecrets(b *testing.B, typ string) testserver.Option {
	var provider string
	switch typ {
	case "identity":
		provider = "  - identity: {}\n"
	case "kms-v2":
		provider = kmstest.Provider("bench", kmstest.Start(b))
	default:
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			b.Fatal(err)
		}
		provider = "  - " + typ + ":\n      keys:\n      - name: key1\n        secret: " + base64.StdEncoding.EncodeToString(key) + "\n"
	}
	path := filepath.Join(b.TempDir(), "encryption.yaml")
	cfg := "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n" + provider
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	return func(o *apiserver.Options) { o.Encryption.ProviderConfig = path }
}

// plaintextSecrets gives the server an encryption configuration that names
// only ConfigMaps, so Secrets are stored without any transformer, as
// before encryption at rest existed.
func plaintextSecrets(b *testing.B) testserver.Option {
	path := filepath.Join(b.TempDir(), "plaintext.yaml")
	cfg := "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [configmaps]\n  providers:\n  - identity: {}\n"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	return func(o *apiserver.Options) { o.Encryption.ProviderConfig = path }
}
