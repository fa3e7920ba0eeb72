package snapshot

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	etcdutl "go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"

	"github.com/apiloom/apiloom/server/etcdclient"
)

// DefaultRevisionBump is how far Restore moves etcd's revision past the
// snapshot's, Kubernetes' documented figure (etcdutl --bump-revision
// 1000000000). Every resourceVersion a client saw before the restore must
// be below the restored revision, or a watch resumed from it would skip
// the changes in between instead of being told to relist: the bump must
// exceed the writes made after the snapshot was taken and before the
// restore, 11 days at 1,000 writes a second. Revisions are int64, so the
// bump costs nothing but digits.
const DefaultRevisionBump = 1_000_000_000

// ErrNotEmpty is returned by Restore for a data directory that has files.
var ErrNotEmpty = errors.New("data directory is not empty")

// RestoreOptions says what to restore where.
type RestoreOptions struct {
	// File is the snapshot, as Save writes it (its sha256 is checked).
	File string
	// DataDir is the server's --data-dir to create; it must not exist or
	// be empty.
	DataDir string
	// EtcdDir is where the server's embedded etcd keeps its data, inside
	// DataDir.
	EtcdDir string
	// RevisionBump is added to the snapshot's revision, which is then
	// marked compacted; at least 1.
	RevisionBump uint64
}

// Restored says what Restore made.
type Restored struct {
	Snapshot Info
	// Revision is the restored etcd's revision: the snapshot's plus the
	// bump. Reads and watches at any older resourceVersion get 410.
	Revision int64
}

// Restore creates a data directory in which the server's embedded etcd
// starts with the snapshot's data: a single member named and addressed as
// etcdclient's embedded one, in a new cluster (new IDs). The revision is
// bumped and compacted, so that every client's watch or list at a
// resourceVersion from before the restore gets 410 Gone and relists rather
// than resuming past changes the restore undid.
//
// It creates EtcdDir only; the server's certificates, token and kubeconfig
// are not in a snapshot and the server makes new ones unless the operator
// copies them in (see docs/backup.md).
func Restore(o RestoreOptions, log *zap.Logger) (Restored, error) {
	if o.RevisionBump < 1 {
		return Restored{}, errors.New("the revision bump must be at least 1: clients must relist after a restore")
	}
	if err := checkEmpty(o.DataDir); err != nil {
		return Restored{}, err
	}
	info, err := Verify(o.File)
	if err != nil {
		return Restored{}, err
	}
	if log == nil {
		log = zap.NewNop()
	}
	created := !exists(o.DataDir)
	if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
		return Restored{}, err
	}
	err = etcdutl.NewV3(log).Restore(etcdutl.RestoreConfig{
		SnapshotPath:        o.File,
		Name:                etcdclient.EmbeddedMemberName,
		OutputDataDir:       o.EtcdDir,
		PeerURLs:            []string{etcdclient.EmbeddedPeerURL},
		InitialCluster:      etcdclient.EmbeddedInitialCluster(),
		InitialClusterToken: etcdclient.EmbeddedClusterToken,
		RevisionBump:        o.RevisionBump,
		MarkCompacted:       true,
	})
	if err != nil {
		// Leave nothing half-made: a later attempt needs an empty dir.
		_ = os.RemoveAll(o.EtcdDir)
		if created {
			_ = os.Remove(o.DataDir)
		}
		return Restored{}, fmt.Errorf("restore %s into %s: %w", o.File, o.EtcdDir, err)
	}
	if err := os.Chmod(o.EtcdDir, 0o700); err != nil {
		return Restored{}, err
	}
	return Restored{Snapshot: info, Revision: info.Revision + int64(o.RevisionBump)}, nil
}

// checkEmpty refuses a data directory with anything in it: restoring over
// a server's data would mix two histories, or destroy the only copy.
func checkEmpty(dir string) error {
	d, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	names, err := d.Readdirnames(1)
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	return fmt.Errorf("%w: %s has %s: restore into a new --data-dir (stop the server, move its data directory aside, restore, then copy back pki/, admin-token, kubeconfig and any key files; see docs/backup.md)",
		ErrNotEmpty, dir, filepath.Join(dir, names[0]))
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
