package discovery

import "testing"

// TestStorageVersionHash: the hashes kube-apiserver v1.37 publishes in
// /apis/apps/v1 for Deployment and, for a CRD stored as
// bench.example.com/v1, in /apis/bench.example.com/v1 for Widget.
func TestStorageVersionHash(t *testing.T) {
	for _, c := range []struct{ group, version, kind, want string }{
		{"apps", "v1", "Deployment", "8aSe+NMegvE="},
		{"bench.example.com", "v1", "Widget", "mqyNhypP98M="},
	} {
		if got := storageVersionHash(c.group, c.version, c.kind); got != c.want {
			t.Errorf("storageVersionHash(%s, %s, %s) = %q, want %q", c.group, c.version, c.kind, got, c.want)
		}
	}
}
