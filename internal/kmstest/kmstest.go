// Package kmstest serves a KMS v2 plugin for tests: k8s.io/kms's gRPC
// service on a unix socket, with its key encryption key in memory
// (AES-256-GCM), as a cloud KMS would hold it.
package kmstest

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	kmsapi "k8s.io/kms/apis/v2"
	kmsservice "k8s.io/kms/pkg/service"
)

// KeyID is the key the plugin reports and encrypts with.
const KeyID = "test-kek-1"

// Start serves a plugin until t ends and returns its endpoint
// ("unix:///..."), for a kms provider's endpoint.
func Start(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "kms") // short: a socket path is at most ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	sock := filepath.Join(dir, "kms.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	kek := make([]byte, 32)
	if _, err := rand.Read(kek); err != nil {
		t.Fatal(err)
	}
	block, err := aes.NewCipher(kek)
	if err != nil {
		t.Fatal(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	kmsapi.RegisterKeyManagementServiceServer(gs, kmsservice.NewGRPCService(sock, 5*time.Second, &plugin{aead: aead}))
	served := make(chan error, 1)
	go func() { served <- gs.Serve(ln) }()
	// Registered before the server that uses it, so stopped after it
	// (cleanups run last first).
	t.Cleanup(func() {
		gs.Stop()
		if err := <-served; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			t.Errorf("kms plugin: %v", err)
		}
	})
	return "unix://" + sock
}

// Provider is the providers-list item of a KMS v2 provider named name at
// endpoint, indented for an EncryptionConfiguration's providers key.
func Provider(name, endpoint string) string {
	return fmt.Sprintf("  - kms:\n      apiVersion: v2\n      name: %s\n      endpoint: %s\n      timeout: 5s\n", name, endpoint)
}

// plugin encrypts the data encryption keys the server sends.
type plugin struct{ aead cipher.AEAD }

func (p *plugin) Encrypt(_ context.Context, _ string, data []byte) (*kmsservice.EncryptResponse, error) {
	nonce := make([]byte, p.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return &kmsservice.EncryptResponse{Ciphertext: p.aead.Seal(nonce, nonce, data, nil), KeyID: KeyID}, nil
}

func (p *plugin) Decrypt(_ context.Context, _ string, req *kmsservice.DecryptRequest) ([]byte, error) {
	if req.KeyID != KeyID {
		return nil, fmt.Errorf("unknown key %q", req.KeyID)
	}
	n := p.aead.NonceSize()
	if len(req.Ciphertext) < n {
		return nil, errors.New("ciphertext too short")
	}
	return p.aead.Open(nil, req.Ciphertext[:n], req.Ciphertext[n:], nil)
}

func (p *plugin) Status(context.Context) (*kmsservice.StatusResponse, error) {
	return &kmsservice.StatusResponse{Version: "v2", Healthz: "ok", KeyID: KeyID}, nil
}
