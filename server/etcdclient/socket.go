package etcdclient

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
)

// maxSocketPath is the longest path a unix socket can be bound to on
// Linux: sun_path holds 108 bytes, the last one the terminating NUL.
const maxSocketPath = 107

// etcdSocketName is the embedded etcd's socket's file name.
const etcdSocketName = "etcd.sock"

// etcdSocket is where the embedded etcd serves its clients: a unix socket
// (mode 0600) in a directory only this user may enter (0700), so that no
// other local user can reach etcd, which has no authentication of its own
// here. It is normally in the etcd data directory; when that path is too
// long for a socket, in a private directory under os.TempDir() that is
// removed when the server stops.
type etcdSocket struct {
	path    string // absolute path of the socket
	tempDir string // the private temporary directory holding it, or ""
}

// newEtcdSocket prepares the socket's place for the etcd data directory
// dir: it creates dir (0700) or makes an existing one private, as etcd
// itself asks of its data directory, and falls back to a private
// temporary directory when dir's socket path would not fit in sun_path.
// It fails if an etcd already serves on the socket, which is another
// server using the same --data-dir.
func newEtcdSocket(dir string, log *slog.Logger) (*etcdSocket, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := privateDir(abs, log); err != nil {
		return nil, err
	}
	s := &etcdSocket{path: filepath.Join(abs, etcdSocketName)}
	if len(s.path) > maxSocketPath {
		// A path relative to the working directory would fit more often,
		// but etcdctl users and the log need one that works from anywhere.
		tmp, err := os.MkdirTemp("", "apiloom-etcd-") // 0700
		if err != nil {
			return nil, fmt.Errorf("embedded etcd socket: %w", err)
		}
		s.path, s.tempDir = filepath.Join(tmp, etcdSocketName), tmp
		if len(s.path) > maxSocketPath {
			s.remove()
			return nil, fmt.Errorf("embedded etcd socket: neither %s nor %s fits a unix socket path (%d bytes); use a shorter --data-dir or TMPDIR",
				filepath.Join(abs, etcdSocketName), s.path, maxSocketPath)
		}
		log.Info("the embedded etcd's data directory is too deep for a unix socket path; its socket is in a private temporary directory instead",
			"dataDir", abs, "socket", s.path)
	}
	if c, err := net.Dial("unix", s.path); err == nil {
		_ = c.Close()
		s.remove()
		return nil, fmt.Errorf("an etcd already serves on %s: is another apiloom server using this --data-dir?", s.path)
	}
	return s, nil
}

// url is the socket as an etcd client and listen URL, unix:///abs/path.
func (s *etcdSocket) url() url.URL { return url.URL{Scheme: "unix", Path: s.path} }

// restrict makes the socket 0600 once etcd listens on it. The directory
// already keeps other users out; this also keeps them out should the
// directory's mode be loosened later.
func (s *etcdSocket) restrict() error { return os.Chmod(s.path, 0o600) }

// remove deletes the temporary directory, if any; etcd removes the socket
// itself when it closes its listener.
func (s *etcdSocket) remove() {
	if s.tempDir != "" {
		_ = os.RemoveAll(s.tempDir)
	}
}

// privateDir creates dir with mode 0700, or makes an existing dir 0700 if
// others could enter it (etcd warns about such a data directory too).
func privateDir(dir string, log *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errors.New(dir + " is not a directory")
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("make the embedded etcd's directory private: %w", err)
		}
		log.Warn("the embedded etcd's data directory was open to other users; made it private (0700)", "dir", dir, "was", perm.String())
	}
	return nil
}
