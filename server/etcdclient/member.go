package etcdclient

import (
	"fmt"
	"net/url"
	"path/filepath"
)

// The embedded etcd's member, as startEmbeddedEtcd configures it. A data
// directory restored from a snapshot (server/snapshot) must be made for
// this very member, or the embedded etcd would not start on it.
const (
	// EmbeddedMemberName is the member's name (etcd's default name).
	EmbeddedMemberName = "default"
	// EmbeddedPeerURL is the peer URL the member advertises; nothing
	// listens there (see startEmbeddedEtcd), but the member's ID is
	// derived from it.
	EmbeddedPeerURL = "http://127.0.0.1:0"
	// EmbeddedClusterToken is the initial cluster token (etcd's default);
	// with the peer URL it makes the cluster's ID.
	EmbeddedClusterToken = "etcd-cluster"
)

// EmbeddedInitialCluster is the member's --initial-cluster.
func EmbeddedInitialCluster() string { return EmbeddedMemberName + "=" + EmbeddedPeerURL }

// EmbeddedEndpoint is the client URL of the embedded etcd whose data
// directory is dir (the server's --data-dir/etcd), for a process other
// than the server (apiloom snapshot save). It fails when dir's socket path
// does not fit a unix socket: that server put its socket in a temporary
// directory, which it logged at start.
func EmbeddedEndpoint(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	p := filepath.Join(abs, etcdSocketName)
	if len(p) > maxSocketPath {
		return "", fmt.Errorf("the embedded etcd's socket path %s is too long for a unix socket, so the server put its socket in a temporary directory: "+
			"pass the endpoint the server logged at start (\"embedded etcd serves only this user\") as --etcd-servers", p)
	}
	u := url.URL{Scheme: "unix", Path: p}
	return u.String(), nil
}
