package apiserver

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	generated "github.com/apiloom/apiloom/generated/apiserver"
	"github.com/apiloom/apiloom/server/registry"
)

func TestCommandBadInvocations(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"help", []string{"--help"}, 0, "--data-dir"},
		{"unknown flag", []string{"--no-such-flag"}, 2, "unknown flag: --no-such-flag"},
		{"positional", []string{"serve"}, 2, `unexpected arguments ["serve"]`},
		{"invalid option", []string{"--bind-address", "localhost"}, 2, `--bind-address "localhost" is not an IP address`},
		{"kubeconfig without user", []string{"kubeconfig", "--group", "dev"}, 2, "--user is required"},
		{"kubeconfig without a server's CA", []string{"kubeconfig", "--user", "alice", "--data-dir", "/nonexistent/apiloom"}, 1, "no server CA in the data directory"},
		{"kubeconfig expiry", []string{"kubeconfig", "--user", "alice", "--expiry-days", "0"}, 2, "--expiry-days must be at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			installed := false
			code := Command(t.Context(), "myapi", func(*registry.Registry) { installed = true }, tc.args, &out)
			if code != tc.code || !strings.Contains(out.String(), tc.want) {
				t.Fatalf("exit %d, want %d; output lacks %q:\n%s", code, tc.code, tc.want, out.String())
			}
			if installed && tc.name != "invalid option" {
				t.Fatalf("install ran for a command that never starts a server")
			}
		})
	}
}

// TestCommandServes runs the command a server binary is, with the flags
// the README gives, and sees it write its kubeconfig into --data-dir and
// shut down cleanly when its context ends.
func TestCommandServes(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Command(ctx, "myapi", generated.Install,
			[]string{"--data-dir", dir, "--secure-port", "0", "--bind-address", "127.0.0.1", "--etcd-min-free-disk-bytes", "0"}, &out)
	}()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	deadline := time.Now().Add(90 * time.Second)
	for {
		if data, err := os.ReadFile(kubeconfig); err == nil && bytes.Contains(data, []byte("https://127.0.0.1:")) {
			break
		}
		select {
		case code := <-done:
			t.Fatalf("exited with %d before serving:\n%s", code, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no kubeconfig in --data-dir after 90s:\n%s", out.String())
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d after shutdown:\n%s", code, out.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("did not stop within 60s of its context ending")
	}
}

// syncBuffer is a bytes.Buffer the server's log and the test may use at
// once.
type syncBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
