package snapshot

import (
	"fmt"
	"os"

	etcdutl "go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
)

// Verify checks that path is a whole etcd snapshot, by the sha256 etcd
// appends and by reading its database (etcdutl's snapshot status), and
// describes it.
func Verify(path string) (Info, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Info{}, err
	}
	if err := checkHash(path); err != nil {
		return Info{}, err
	}
	st, err := etcdutl.NewV3(zap.NewNop()).Status(path)
	if err != nil {
		return Info{}, fmt.Errorf("%s: its database does not read: %w", path, err)
	}
	return Info{Path: path, Revision: st.Revision, Keys: st.TotalKey, Size: fi.Size()}, nil
}
