package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	svmv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	encryptionconfigcontroller "k8s.io/apiserver/pkg/server/options/encryptionconfig/controller"
	"k8s.io/client-go/kubernetes"

	"github.com/apiloom/apiloom/generated/apiserver"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/internal/kmstest"
	apiloomserver "github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/registry"
	"github.com/apiloom/apiloom/server/testserver"
)

// canary is secret data that must never appear in etcd, neither as it
// is nor base64-encoded as the stored JSON carries it.
const canary = "hunter2-canary-value"

// encryptionConfig is an EncryptionConfiguration for resources with the
// providers (YAML list items, indented for the providers key).
func encryptionConfig(resources, providers string) string {
	return "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n" +
		"- resources: [" + resources + "]\n  providers:\n" + providers
}

// keyProvider is a provider of type typ (aescbc, aesgcm, secretbox) with
// the keys given as name=secret, the first one encrypting.
func keyProvider(typ string, keys ...string) string {
	s := "  - " + typ + ":\n      keys:\n"
	for _, k := range keys {
		name, secret, _ := strings.Cut(k, "=")
		s += "      - name: " + name + "\n        secret: " + secret + "\n"
	}
	return s
}

func newAESKey(t *testing.T) string {
	t.Helper()
	return base64.StdEncoding.EncodeToString(randomBytes(t, 32))
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	// Written whole then renamed, so that a reloading server never reads
	// half a file.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// encryptedServer is a server on its embedded etcd, with a client of
// that etcd to read the stored values directly.
type encryptedServer struct {
	ts   *testserver.TestServer
	kc   kubernetes.Interface
	cs   versioned.Interface
	etcd *clientv3.Client
}

func startEncryptedServer(t *testing.T, opts ...testserver.Option) *encryptedServer {
	t.Helper()
	ts := testserver.Start(t, apiserver.Install, append([]testserver.Option{testserver.WithHTTP2Server(http2Server(t))}, opts...)...)
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{ts.Server.EtcdEndpoint()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ts.CreateNamespaces(t, "shop")
	return &encryptedServer{ts: ts, kc: kubernetes.NewForConfigOrDie(ts.Config), cs: versioned.NewForConfigOrDie(ts.Config), etcd: c}
}

func withEncryptionConfig(path string, reload bool) testserver.Option {
	return func(o *apiloomserver.Options) {
		o.Encryption.ProviderConfig, o.Encryption.AutomaticReload = path, reload
	}
}

// stored is the value etcd holds at key.
func (s *encryptedServer) stored(t *testing.T, key string) []byte {
	t.Helper()
	resp, err := s.etcd.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 {
		t.Fatalf("%s: %d values in etcd", key, len(resp.Kvs))
	}
	return resp.Kvs[0].Value
}

func (s *encryptedServer) createSecret(t *testing.T, name string) *corev1.Secret {
	t.Helper()
	sec, err := s.kc.CoreV1().Secrets("shop").Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Data:       map[string][]byte{"password": []byte(canary)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sec
}

// assertEncrypted fails unless the value at key starts with prefix and
// carries no plaintext of the canary.
func assertEncrypted(t *testing.T, value []byte, prefix string) {
	t.Helper()
	if !bytes.HasPrefix(value, []byte(prefix)) {
		t.Fatalf("stored value starts %q, want %q", value[:min(len(value), 40)], prefix)
	}
	if bytes.Contains(value, []byte(canary)) || bytes.Contains(value, []byte(base64.StdEncoding.EncodeToString([]byte(canary)))) {
		t.Fatalf("stored value holds the secret in plaintext: %q", value)
	}
}

// TestEncryptionProviders: with each provider Secrets are stored under
// its prefix with no plaintext, read back through the API and the watch
// cache as written; with the providers that authenticate the etcd key, a
// value moved to another key does not decrypt and is answered with
// kube-apiserver's 500.
func TestEncryptionProviders(t *testing.T) {
	for _, tc := range []struct {
		name, providers, prefix string
		// authenticated: the provider authenticates the etcd key
		// (aescbc and secretbox have no additional data).
		authenticated bool
	}{
		{"aescbc", keyProvider("aescbc", "key1="+newAESKey(t)), "k8s:enc:aescbc:v1:key1:", false},
		{"aesgcm", keyProvider("aesgcm", "key1="+newAESKey(t)), "k8s:enc:aesgcm:v1:key1:", true},
		{"secretbox", keyProvider("secretbox", "key1="+newAESKey(t)), "k8s:enc:secretbox:v1:key1:", false},
		{"kms-v2", "", "k8s:enc:kms:v2:testkms:", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			providers := tc.providers
			if tc.name == "kms-v2" {
				providers = kmstest.Provider("testkms", kmstest.Start(t))
			}
			path := filepath.Join(t.TempDir(), "encryption.yaml")
			writeFile(t, path, encryptionConfig("secrets", providers))
			s := startEncryptedServer(t, withEncryptionConfig(path, false))
			ctx := t.Context()
			s.createSecret(t, "db-password")
			assertEncrypted(t, s.stored(t, "/registry/secrets/shop/db-password"), tc.prefix)
			got, err := s.kc.CoreV1().Secrets("shop").Get(ctx, "db-password", metav1.GetOptions{})
			if err != nil || string(got.Data["password"]) != canary {
				t.Fatalf("get: %v, %v", got, err)
			}
			list, err := s.kc.CoreV1().Secrets("shop").List(ctx, metav1.ListOptions{})
			if err != nil || len(list.Items) != 1 || string(list.Items[0].Data["password"]) != canary {
				t.Fatalf("list: %v, %v", list, err)
			}
			// Upstream's transformation metrics are served.
			if n := metric(t, s.ts.Config, "apiserver_storage_transformation_operations_total",
				`resource="secrets"`, `transformation_type="to_storage"`, `status="OK"`); n < 1 {
				t.Errorf("apiserver_storage_transformation_operations_total for secrets to storage: %v, want at least 1", n)
			}
			// Other resources stay plaintext JSON.
			if _, err := s.cs.ExampleV1().Databases("shop").Create(ctx, newDatabase("orders"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if v := s.stored(t, "/registry/example.apiloom.dev/databases/shop/orders"); v[0] != '{' {
				t.Fatalf("a Database is stored as %q, want JSON", v[:20])
			}
			// With aesgcm and KMS v2 a value moved to another key is not
			// transformable.
			if !tc.authenticated {
				return
			}
			if _, err := s.etcd.Put(ctx, "/registry/secrets/shop/moved", string(s.stored(t, "/registry/secrets/shop/db-password"))); err != nil {
				t.Fatal(err)
			}
			_, err = s.kc.CoreV1().Secrets("shop").Get(ctx, "moved", metav1.GetOptions{})
			if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "data from the storage is not transformable") {
				t.Fatalf("get of a moved value: %v, want 500 not transformable", err)
			}
			if tc.name == "kms-v2" {
				// One check for KMS v2 providers, as kube-apiserver names it.
				for _, p := range []string{"/healthz/kms-providers", "/readyz/kms-providers", "/healthz"} {
					if code, body := getPath(t, s.ts, p); code != http.StatusOK || body != "ok" {
						t.Errorf("%s: %d %q", p, code, body)
					}
				}
			}
		})
	}
}

func getPath(t *testing.T, ts *testserver.TestServer, path string) (int, string) {
	t.Helper()
	res := kubernetes.NewForConfigOrDie(ts.Config).Discovery().RESTClient().Get().AbsPath(path).Do(t.Context())
	var code int
	res.StatusCode(&code)
	body, _ := res.Raw()
	return code, string(body)
}

// TestEncryptionDefault: with the embedded etcd and no configuration,
// Secrets are encrypted with secretbox and a key generated into
// <data-dir>/pki (0600), outside etcd's directory; other kinds are not.
// A restart reuses the key.
func TestEncryptionDefault(t *testing.T) {
	dir := t.TempDir()
	s := startEncryptedServer(t, testserver.WithDataDir(dir))
	s.createSecret(t, "api-token")
	assertEncrypted(t, s.stored(t, "/registry/secrets/shop/api-token"), "k8s:enc:secretbox:v1:key1:")
	fi, err := os.Stat(filepath.Join(dir, "pki", "encryption-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("generated configuration has mode %v, want 0600", fi.Mode().Perm())
	}
	if _, err := s.cs.ExampleV1().Databases("shop").Create(t.Context(), newDatabase("orders"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if v := s.stored(t, "/registry/example.apiloom.dev/databases/shop/orders"); v[0] != '{' {
		t.Fatalf("a Database is stored as %q, want JSON", v[:20])
	}
}

// TestEncryptionDefaultUpgrade: Secrets stored in plaintext by a server
// without encryption (an older apiloom's data dir) stay readable once
// the default encrypts Secrets, and are encrypted by their next write,
// even one that changes nothing.
func TestEncryptionDefaultUpgrade(t *testing.T) {
	dir := t.TempDir()
	var rv string
	t.Run("plaintext", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "encryption.yaml")
		writeFile(t, path, encryptionConfig("secrets", "  - identity: {}\n"))
		s := startEncryptedServer(t, testserver.WithDataDir(dir), withEncryptionConfig(path, false))
		rv = s.createSecret(t, "old").ResourceVersion
		if v := s.stored(t, "/registry/secrets/shop/old"); v[0] != '{' {
			t.Fatalf("stored %q, want plaintext JSON", v[:20])
		}
	})
	t.Run("default", func(t *testing.T) {
		s := startEncryptedServer(t, testserver.WithDataDir(dir))
		ctx := t.Context()
		got, err := s.kc.CoreV1().Secrets("shop").Get(ctx, "old", metav1.GetOptions{})
		if err != nil || string(got.Data["password"]) != canary {
			t.Fatalf("get of the plaintext Secret: %v, %v", got, err)
		}
		patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q}}`, rv)
		if _, err := s.kc.CoreV1().Secrets("shop").Patch(ctx, "old", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		assertEncrypted(t, s.stored(t, "/registry/secrets/shop/old"), "k8s:enc:secretbox:v1:key1:")
	})
}

// TestEncryptionUserKind: a kind of the user's API named in the
// configuration is encrypted, and served as usual.
func TestEncryptionUserKind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "encryption.yaml")
	writeFile(t, path, encryptionConfig("databases.example.apiloom.dev", keyProvider("aesgcm", "key1="+newAESKey(t))))
	s := startEncryptedServer(t, withEncryptionConfig(path, false))
	ctx := t.Context()
	if _, err := s.cs.ExampleV1().Databases("shop").Create(ctx, newDatabase("orders"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	v := s.stored(t, "/registry/example.apiloom.dev/databases/shop/orders")
	if !bytes.HasPrefix(v, []byte("k8s:enc:aesgcm:v1:key1:")) || bytes.Contains(v, []byte("eu-central")) {
		t.Fatalf("stored %q, want aesgcm ciphertext", v)
	}
	list, err := s.cs.ExampleV1().Databases("shop").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Spec.Region != "eu-central" {
		t.Fatalf("list: %v, %v", list, err)
	}
}

// TestEncryptionReloadAndRotation is the key rotation procedure: key2 is
// added first to the reloaded configuration, new writes use it while
// key1 still reads, then a StorageVersionMigration of Secrets rewrites
// every one (its controller's no-op PATCH with a resourceVersion
// precondition is written because the value was read under key1) and no
// value is left under key1, as etcd read directly shows.
func TestEncryptionReloadAndRotation(t *testing.T) {
	// Upstream's poll period is a package variable (a minute); it is read
	// when the reload controller starts, and restored after the server
	// stopped (cleanups run last first).
	period := encryptionconfigcontroller.EncryptionConfigFileChangePollDuration
	encryptionconfigcontroller.EncryptionConfigFileChangePollDuration = 100 * time.Millisecond
	t.Cleanup(func() { encryptionconfigcontroller.EncryptionConfigFileChangePollDuration = period })
	path := filepath.Join(t.TempDir(), "encryption.yaml")
	key1, key2 := "key1="+newAESKey(t), "key2="+newAESKey(t)
	writeFile(t, path, encryptionConfig("secrets", keyProvider("aescbc", key1)))
	s := startEncryptedServer(t, withEncryptionConfig(path, true))
	ctx := t.Context()
	if code, body := getPath(t, s.ts, "/healthz/kms-providers"); code != http.StatusOK {
		t.Errorf("/healthz/kms-providers: %d %q", code, body)
	}
	names := []string{"a", "b", "c"}
	for _, n := range names {
		s.createSecret(t, n)
		assertEncrypted(t, s.stored(t, "/registry/secrets/shop/"+n), "k8s:enc:aescbc:v1:key1:")
	}

	writeFile(t, path, encryptionConfig("secrets", keyProvider("aescbc", key2, key1)))
	probe := s.createSecret(t, "probe")
	eventually(t, "writes to use key2", func(ctx context.Context) (bool, error) {
		probe.Labels = map[string]string{"n": fmt.Sprint(time.Now().UnixNano())}
		p, err := s.kc.CoreV1().Secrets("shop").Update(ctx, probe, metav1.UpdateOptions{})
		if err != nil {
			return false, err
		}
		probe = p
		return bytes.HasPrefix(s.stored(t, "/registry/secrets/shop/probe"), []byte("k8s:enc:aescbc:v1:key2:")), nil
	})
	for _, n := range names {
		got, err := s.kc.CoreV1().Secrets("shop").Get(ctx, n, metav1.GetOptions{})
		if err != nil || string(got.Data["password"]) != canary {
			t.Fatalf("get %s under key1 after the reload: %v, %v", n, got, err)
		}
	}

	// Migrate as an operator does: a StorageVersionMigration of Secrets,
	// whose controller rewrites each one unchanged (written again because
	// it was read under key1).
	before, err := s.kc.CoreV1().Secrets("shop").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svm := &svmEnv{t: t, ts: s.ts, kc: s.kc, cs: s.cs, etcd: s.etcd}
	svm.migrate("secrets-to-key2", metav1.GroupResource{Resource: "secrets"})
	svm.waitFor("secrets-to-key2", svmv1.MigrationSucceeded)
	for _, sec := range before.Items {
		got, err := s.kc.CoreV1().Secrets("shop").Get(ctx, sec.Name, metav1.GetOptions{})
		if err != nil || string(got.Data["password"]) != canary {
			t.Fatalf("get %s after the migration: %v, %v", sec.Name, got, err)
		}
		if sec.Name != "probe" && got.ResourceVersion == sec.ResourceVersion {
			t.Errorf("the migration did not write %s, stored under key1", sec.Name)
		}
	}
	resp, err := s.etcd.Get(ctx, "/registry/secrets/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range resp.Kvs {
		assertEncrypted(t, kv.Value, "k8s:enc:aescbc:v1:key2:")
	}
	if len(resp.Kvs) != len(names)+1 {
		t.Errorf("%d Secrets in etcd, want %d", len(resp.Kvs), len(names)+1)
	}
}

// TestEncryptionBadConfig: the server refuses to start with a
// configuration it cannot read or use, naming the file and upstream's
// reason.
func TestEncryptionBadConfig(t *testing.T) {
	dir := t.TempDir()
	invalid := filepath.Join(dir, "invalid.yaml")
	writeFile(t, invalid, encryptionConfig("secrets", keyProvider("aesgcm", "key1=dG9vIHNob3J0")))
	notYAML := filepath.Join(dir, "garbage.yaml")
	writeFile(t, notYAML, "{{ not an EncryptionConfiguration")
	for _, tc := range []struct{ name, path, reason string }{
		{"missing", filepath.Join(dir, "missing.yaml"), "no such file or directory"},
		{"invalid", invalid, "secret is not of the expected length"},
		{"garbage", notYAML, "error decoding encryption provider configuration file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := apiloomserver.DefaultOptions()
			o.DataDir, o.SecurePort = t.TempDir(), 0
			o.Encryption.ProviderConfig = tc.path
			reg := &registry.Registry{}
			apiserver.Install(reg)
			srv, err := apiloomserver.New(o, reg, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			err = srv.Run(ctx)
			if err == nil || !strings.Contains(err.Error(), "--encryption-provider-config "+tc.path) || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("run: %v; want a refusal naming %s and %q", err, tc.path, tc.reason)
			}
		})
	}
}
