package snapshot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Target is the etcd to snapshot: the embedded etcd's unix socket, or an
// external cluster's client URLs and TLS (the server's --etcd-* flags).
type Target struct {
	Endpoints                 []string
	CAFile, CertFile, KeyFile string
}

// Info describes a snapshot file.
type Info struct {
	// Path is the file.
	Path string
	// Endpoint is the member it was taken from ("" when only read).
	Endpoint string
	// Revision is the newest etcd revision in it: every write acknowledged
	// before Save began has a revision at most this.
	Revision int64
	// Keys is how many keys it holds (etcd's own, such as members, too).
	Keys int
	// Size is the file's size in bytes, sha256 trailer included.
	Size int64
}

// ErrBadHash is returned for a file that is not a whole etcd snapshot: its
// trailing sha256 is missing or does not match its content.
var ErrBadHash = errors.New("not a whole etcd snapshot")

// Save writes a snapshot of target's etcd to path, online: etcd serves
// on meanwhile. It is written to path.part, synced, verified by the sha256
// etcd appends and by opening its database, and only then renamed to path,
// so path is either absent or a whole, verified snapshot.
//
// The snapshot is consistent (one etcd revision) and holds every write
// acknowledged before Save was called: the member it is taken from first
// serves a linearizable read, which waits until the member has applied
// every write the cluster committed, and etcd's Snapshot then copies the
// member's database as of one transaction. With several endpoints the
// first member that answers is used.
func Save(ctx context.Context, target Target, path string) (Info, error) {
	if len(target.Endpoints) == 0 {
		return Info{}, errors.New("no etcd endpoint to snapshot")
	}
	var tlsCfg *tls.Config
	if target.CAFile != "" || target.CertFile != "" {
		info := transport.TLSInfo{TrustedCAFile: target.CAFile, CertFile: target.CertFile, KeyFile: target.KeyFile}
		var err error
		if tlsCfg, err = info.ClientConfig(); err != nil {
			return Info{}, fmt.Errorf("etcd client TLS: %w", err)
		}
	}
	var errs []error
	for _, ep := range target.Endpoints {
		info, err := saveFrom(ctx, ep, tlsCfg, path)
		if err == nil {
			return info, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", ep, err))
		if ctx.Err() != nil || errors.Is(err, ErrBadHash) {
			break
		}
	}
	return Info{}, fmt.Errorf("etcd snapshot: %w", errors.Join(errs...))
}

// saveFrom snapshots the one member at endpoint: Snapshot must go to one
// member, and the linearizable read must go to the same one.
func saveFrom(ctx context.Context, endpoint string, tlsCfg *tls.Config, path string) (Info, error) {
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{endpoint},
		TLS:         tlsCfg,
		DialTimeout: 10 * time.Second,
		Logger:      zap.NewNop(),
		Context:     ctx,
	})
	if err != nil {
		return Info{}, err
	}
	defer func() { _ = c.Close() }()
	readCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	_, err = c.Get(readCtx, "health-check-key", clientv3.WithCountOnly()) // linearizable by default
	cancel()
	if err != nil {
		return Info{}, fmt.Errorf("not reachable (is the server, or etcd, running?): %w", err)
	}
	rc, err := c.Snapshot(ctx)
	if err != nil {
		return Info{}, err
	}
	defer func() { _ = rc.Close() }()
	if err := writeVerified(rc, path); err != nil {
		return Info{}, err
	}
	info, err := Verify(path)
	if err != nil {
		_ = os.Remove(path)
		return Info{}, err
	}
	info.Endpoint = endpoint
	return info, nil
}

// writeVerified streams r to path.part, syncs it, checks its sha256
// trailer as read back from disk, and renames it to path. On any error
// path.part is removed and path left as it was.
func writeVerified(r io.Reader, path string) (err error) {
	part := path + ".part"
	f, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(part)
		}
	}()
	if _, err = io.Copy(f, r); err != nil {
		return fmt.Errorf("receive snapshot: %w", err)
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = checkHash(part); err != nil {
		return err
	}
	if err = os.Rename(part, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// checkHash verifies the sha256 etcd appends to a snapshot's database
// (etcd's snapshot restore checks the same; a database copied out of a
// data directory has none and is refused).
func checkHash(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	n := fi.Size()
	// etcd's database is a whole number of 512-byte sectors; the
	// snapshot adds the 32-byte digest.
	if n%512 != sha256.Size {
		return fmt.Errorf("%w: %s: %d bytes, no sha256 trailer (a truncated transfer, or a database copied from a data directory?)", ErrBadHash, path, n)
	}
	h := sha256.New()
	if _, err := io.CopyN(h, f, n-sha256.Size); err != nil {
		return err
	}
	want := make([]byte, sha256.Size)
	if _, err := io.ReadFull(f, want); err != nil {
		return err
	}
	if got := h.Sum(nil); !bytes.Equal(got, want) {
		return fmt.Errorf("%w: %s: sha256 %x, its trailer says %x (corrupted)", ErrBadHash, path, got, want)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}
