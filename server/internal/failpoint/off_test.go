//go:build !apiloom_failpoints

package failpoint

import "testing"

// TestNormalBuildCannotArm: in a build without the tag, the environment
// variable arms nothing.
func TestNormalBuildCannotArm(t *testing.T) {
	t.Setenv(EnvVar, "watchDropEvent=1;ackWithoutCommit=1;staleConsistentRead=1;listDropItem=1;staleConsistentList=1;informerDropDelete=1")
	if Enabled {
		t.Fatal("Enabled in a normal build")
	}
	for _, n := range Names {
		if Fire(n) {
			t.Errorf("%s fired in a normal build", n)
		}
	}
}
