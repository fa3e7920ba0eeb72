package resourcequota

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestReleased: only a count that went down asks for the re-check; a
// count that rose, stayed, or is new does not.
func TestReleased(t *testing.T) {
	list := func(kv ...string) corev1.ResourceList {
		out := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return out
	}
	for _, tc := range []struct {
		name          string
		before, after corev1.ResourceList
		want          bool
	}{
		{"lowered", list("count/databases.example.apiloom.dev", "10"), list("count/databases.example.apiloom.dev", "7"), true},
		{"raised", list("secrets", "1"), list("secrets", "2"), false},
		{"same", list("secrets", "2", "configmaps", "3"), list("secrets", "2", "configmaps", "3"), false},
		{"new count", list(), list("secrets", "0"), false},
		{"one of two lowered", list("secrets", "2", "configmaps", "3"), list("secrets", "3", "configmaps", "1"), true},
	} {
		if got := released(tc.before, tc.after); got != tc.want {
			t.Errorf("%s: released = %v, want %v", tc.name, got, tc.want)
		}
	}
}
