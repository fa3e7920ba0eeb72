package discovery

import (
	"crypto/sha256"
	"encoding/base64"
)

// storageVersionHash is an APIResource's storageVersionHash, as
// kube-apiserver computes it: the first 8 bytes of the SHA-256 of
// "group/version/kind" of the version objects are stored in, in standard
// base64. Clients only compare it for equality (a storage version
// migrator rewrites a resource's objects when it changes), so it must be
// exactly upstream's for a client that knows both servers.
func storageVersionHash(group, version, kind string) string {
	sum := sha256.Sum256([]byte(group + "/" + version + "/" + kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}
