package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/etcdclient"
)

// saved is a snapshot of an etcd holding keys k0..k9, and the revision of
// its last write.
func saved(t *testing.T) (string, int64) { return savedVia(t, false) }

// savedVia is saved; with deadFirst, the first endpoint Save is given has
// no etcd, and Save must go on to the next.
func savedVia(t *testing.T, deadFirst bool) (string, int64) {
	t.Helper()
	e := etcdtest.StartServer(t)
	ep := "http://" + e.Clients[0].Addr().String()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var rev int64
	for i := range 10 {
		r, err := c.Put(t.Context(), fmt.Sprintf("/registry/k%d", i), "v")
		if err != nil {
			t.Fatal(err)
		}
		rev = r.Header.Revision
	}
	path := filepath.Join(t.TempDir(), "s.db")
	endpoints := []string{ep}
	if deadFirst {
		endpoints = []string{"http://127.0.0.1:1", ep}
	}
	info, err := Save(t.Context(), Target{Endpoints: endpoints}, path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Revision != rev || info.Endpoint != ep || info.Path != path {
		t.Fatalf("saved %+v; want revision %d from %s", info, rev, ep)
	}
	if _, err := os.Stat(path + ".part"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf(".part left behind: %v", err)
	}
	return path, rev
}

func TestSaveVerifyRestore(t *testing.T) {
	path, rev := savedVia(t, true)

	dataDir := filepath.Join(t.TempDir(), "data")
	res, err := Restore(RestoreOptions{File: path, DataDir: dataDir, EtcdDir: filepath.Join(dataDir, "etcd"), RevisionBump: 1000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Revision != rev+1000 || res.Snapshot.Revision != rev {
		t.Fatalf("restored %+v; want revision %d", res, rev+1000)
	}

	// The server's embedded etcd starts on it, with the keys, at the
	// bumped revision, and everything before it compacted.
	conn, err := etcdclient.Connect(t.Context(), etcdclient.Config{Dir: filepath.Join(dataDir, "etcd"), MaxRequestBytes: 1 << 20}, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	got, err := conn.Client.Get(t.Context(), "/registry/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Kvs) != 10 || got.Header.Revision != rev+1000 {
		t.Fatalf("restored etcd: %d keys at revision %d; want 10 at %d", len(got.Kvs), got.Header.Revision, rev+1000)
	}
	if got.Kvs[9].ModRevision != rev {
		t.Fatalf("k9's revision %d; want %d (kept)", got.Kvs[9].ModRevision, rev)
	}
	if _, err := conn.Client.Get(t.Context(), "/registry/k0", clientv3.WithRev(rev)); !errors.Is(err, rpctypes.ErrCompacted) {
		t.Fatalf("read at the snapshot's revision: %v; want compacted", err)
	}
	w := conn.Client.Watch(context.Background(), "/registry/", clientv3.WithPrefix(), clientv3.WithRev(rev))
	if r := <-w; r.CompactRevision != rev+1000 {
		t.Fatalf("watch at the snapshot's revision: compact revision %d, err %v; want %d", r.CompactRevision, r.Err(), rev+1000)
	}
	p, err := conn.Client.Put(t.Context(), "/registry/new", "v")
	if err != nil || p.Header.Revision != rev+1001 {
		t.Fatalf("write after restore: revision %v, %v; want %d", p, err, rev+1001)
	}
}

func TestRestoreRefusesNonEmptyDataDir(t *testing.T) {
	path, _ := saved(t)
	dataDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dataDir, "token"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Restore(RestoreOptions{File: path, DataDir: dataDir, EtcdDir: filepath.Join(dataDir, "etcd"), RevisionBump: 1}, nil)
	if !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("restore into a data dir with a token: %v; want ErrNotEmpty", err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "etcd")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("refused restore made etcd/: %v", err)
	}
}

func TestRestoreRefusesBadHash(t *testing.T) {
	path, _ := saved(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"flipped byte": func() []byte { c := append([]byte(nil), b...); c[len(c)/2] ^= 1; return c }(),
		"truncated":    b[:len(b)-100],
		"no trailer":   b[:len(b)-32], // a database copied out of a data directory
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "bad.db")
			if err := os.WriteFile(bad, content, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := Verify(bad); !errors.Is(err, ErrBadHash) {
				t.Fatalf("verify: %v; want ErrBadHash", err)
			}
			dataDir := filepath.Join(t.TempDir(), "data")
			if _, err := Restore(RestoreOptions{File: bad, DataDir: dataDir, EtcdDir: filepath.Join(dataDir, "etcd"), RevisionBump: 1}, nil); !errors.Is(err, ErrBadHash) {
				t.Fatalf("restore: %v; want ErrBadHash", err)
			}
			if _, err := os.Stat(dataDir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("refused restore made the data dir: %v", err)
			}
		})
	}
}

// A stream that ends early is never renamed into place.
func TestWriteVerifiedKeepsNothingPartial(t *testing.T) {
	path, _ := saved(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out.db")
	err = writeVerified(&cutReader{b: b[:len(b)-512]}, out)
	if !errors.Is(err, ErrBadHash) {
		t.Fatalf("short stream: %v; want ErrBadHash", err)
	}
	for _, p := range []string{out, out + ".part"} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s after a failed save: %v", p, err)
		}
	}
}

type cutReader struct{ b []byte }

func (r *cutReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}
