package fieldmanager

import (
	"strings"
	"testing"
)

func TestManagerName(t *testing.T) {
	long := strings.Repeat("x", 200)
	for _, tc := range []struct{ fieldManager, userAgent, want string }{
		{"ops", "kubectl/v1.37.1 (linux/amd64) kubernetes/abc", "ops"},
		{"", "kubectl/v1.37.1 (linux/amd64) kubernetes/abc", "kubectl"},
		{"", "kube-controller-manager/v1.37.1 (linux/amd64) kubernetes/abc/system:serviceaccount:kube-system:x", "kube-controller-manager"},
		{"", "Go-http-client/2.0", "Go-http-client"},
		{"", "no-slash", "no-slash"},
		{"", "", ""}, // the field manager records it as "unknown"
		{"", "a\x00b\tc/1", "abc"},
		{"", long, long[:128]},
		{"", strings.Repeat("é", 100), strings.Repeat("é", 64)},
	} {
		if got := ManagerName(tc.fieldManager, tc.userAgent); got != tc.want {
			t.Errorf("ManagerName(%q, %q) = %q, want %q", tc.fieldManager, tc.userAgent, got, tc.want)
		}
	}
}
