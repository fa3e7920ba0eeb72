package apiserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/server/options/encryptionconfig"

	"github.com/apiloom/apiloom/internal/etcdtest"
)

func TestValidateEncryption(t *testing.T) {
	o := DefaultOptions()
	o.Encryption.AutomaticReload = true
	if errs := o.validateEncryption(); len(errs) != 1 {
		t.Fatalf("reload without a file: %v, want one error", errs)
	}
	o.Encryption.ProviderConfig = "enc.yaml"
	if errs := o.validateEncryption(); len(errs) != 0 {
		t.Fatalf("reload with a file: %v", errs)
	}
}

// TestNamedOnly: resources the configuration names get a transformer
// (exactly, by group, or by *.*); the others none, so they pay nothing.
func TestNamedOnly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "enc.yaml")
	cfg := `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets, "*.example.apiloom.dev"]
  providers:
  - secretbox:
      keys:
      - name: key1
        secret: DYxBmFhFOM42ttznR4D36nq+BFTw2LL4Nv2Lwgb/kX8=
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := encryptionconfig.LoadEncryptionConfig(t.Context(), path, false, "test")
	if err != nil {
		t.Fatal(err)
	}
	named := namedOnly(loaded.Transformers)
	for gr, want := range map[schema.GroupResource]bool{
		{Resource: "secrets"}: true,
		{Group: "example.apiloom.dev", Resource: "databases"}: true,
		{Resource: "configmaps"}:                              false,
		{Group: "apps", Resource: "secrets"}:                  false,
	} {
		if got := named.TransformerForResource(gr) != nil; got != want {
			t.Errorf("%s: transformer %v, want %v", gr, got, want)
		}
	}
}

// TestDefaultEncryptionConfig: generated once (0600), kept on later
// starts; refused when etcd holds encrypted Secrets and the file is gone.
func TestDefaultEncryptionConfig(t *testing.T) {
	c := etcdtest.Start(t)
	path := filepath.Join(t.TempDir(), "pki", defaultEncryptionConfigName)
	created, err := ensureDefaultEncryptionConfig(t.Context(), path, c, "/registry")
	if err != nil || !created {
		t.Fatalf("first start: created %v, %v", created, err)
	}
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	if _, err := encryptionconfig.LoadEncryptionConfig(t.Context(), path, false, "test"); err != nil {
		t.Fatalf("the generated configuration does not load: %v", err)
	}
	if created, err := ensureDefaultEncryptionConfig(t.Context(), path, c, "/registry"); err != nil || created {
		t.Fatalf("second start: created %v, %v", created, err)
	}
	if again, _ := os.ReadFile(path); string(again) != string(first) {
		t.Fatal("the second start changed the key")
	}
	if _, err := c.Put(t.Context(), "/registry/secrets/ns/s", "k8s:enc:secretbox:v1:key1:xxxx"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	_, err = ensureDefaultEncryptionConfig(t.Context(), path, c, "/registry")
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("lost key: %v, want a refusal naming %s", err, path)
	}
}
