package etcdclient

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

func testLogger(buf *bytes.Buffer) *slog.Logger { return slog.New(slog.NewTextHandler(buf, nil)) }

// TestEtcdSocketInDataDir: the socket is in the etcd data directory,
// which is created private, or made private when it was not.
func TestEtcdSocketInDataDir(t *testing.T) {
	base := t.TempDir()
	var logs bytes.Buffer
	s, err := newEtcdSocket(filepath.Join(base, "etcd"), testLogger(&logs))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(base, "etcd", etcdSocketName); s.path != want || s.tempDir != "" {
		t.Fatalf("socket at %s (temp %q), want %s", s.path, s.tempDir, want)
	}
	if u := s.url(); u.String() != "unix://"+s.path {
		t.Errorf("url %s", u.String())
	}
	assertMode(t, filepath.Join(base, "etcd"), 0o700)

	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	if _, err := newEtcdSocket(open, testLogger(&logs)); err != nil {
		t.Fatal(err)
	}
	assertMode(t, open, 0o700)
	if !strings.Contains(logs.String(), "made it private") {
		t.Errorf("tightening not logged:\n%s", logs.String())
	}
}

// TestEtcdSocketLongDataDir: a data directory too deep for sun_path gets
// its socket in a private temporary directory, removed by remove.
func TestEtcdSocketLongDataDir(t *testing.T) {
	dir := longDir(t)
	var logs bytes.Buffer
	s, err := newEtcdSocket(dir, testLogger(&logs))
	if err != nil {
		t.Fatal(err)
	}
	if s.tempDir == "" || filepath.Dir(s.path) != s.tempDir || len(s.path) > maxSocketPath {
		t.Fatalf("socket at %s (temp %q), want a short path in a temporary directory", s.path, s.tempDir)
	}
	assertMode(t, s.tempDir, 0o700)
	assertMode(t, dir, 0o700)
	s.remove()
	if _, err := os.Stat(s.tempDir); !os.IsNotExist(err) {
		t.Errorf("temporary socket directory left behind: %v", err)
	}
}

// TestEtcdSocketInUse: a second server on the same data directory is
// refused instead of taking over the first one's socket.
func TestEtcdSocketInUse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etcd")
	var logs bytes.Buffer
	s, err := newEtcdSocket(dir, testLogger(&logs))
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", s.path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := newEtcdSocket(dir, testLogger(&logs)); err == nil || !strings.Contains(err.Error(), "another apiloom") {
		t.Fatalf("second socket on a served path: %v", err)
	}
}

// TestEmbeddedEtcdOnSocket starts the embedded etcd as the server does,
// in a data directory too deep for a socket path: a client reaches it over
// the socket (0600), and stopping it removes the temporary directory.
func TestEmbeddedEtcdOnSocket(t *testing.T) {
	dir := longDir(t)
	var logs bytes.Buffer
	s, err := newEtcdSocket(dir, testLogger(&logs))
	if err != nil {
		t.Fatal(err)
	}
	e, err := startEmbeddedEtcd(t.Context(), dir, s, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := &Conn{embedded: e, socket: s}
	var stop sync.Once
	t.Cleanup(func() { stop.Do(b.Close) })
	if len(e.Peers) != 0 {
		t.Errorf("embedded etcd has %d peer listeners, want none", len(e.Peers))
	}
	assertMode(t, s.path, 0o600)
	u := s.url()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{u.String()}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := c.Put(ctx, "/k", "v"); err != nil {
		t.Fatalf("put over the socket: %v", err)
	}
	_ = c.Close()
	stop.Do(b.Close)
	if _, err := os.Stat(s.tempDir); !os.IsNotExist(err) {
		t.Errorf("temporary socket directory left behind after stop: %v", err)
	}
}

// longDir returns a directory path too long for a socket inside it.
func longDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for len(filepath.Join(dir, etcdSocketName)) <= maxSocketPath {
		dir = filepath.Join(dir, strings.Repeat("d", 40))
	}
	return dir
}

func assertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s has mode %v, want %v", path, got, want)
	}
}
