package testenv

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that records how the test was ended instead of
// ending it.
type recorder struct {
	testing.TB // nil: only the methods below may be called
	ended      string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.ended = "failed: " + fmt.Sprintf(format, args...)
}

func (r *recorder) Skipf(format string, args ...any) {
	r.ended = "skipped: " + fmt.Sprintf(format, args...)
}

func TestUnavailableFailsInCIAndSkipsElsewhere(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want string
	}{
		{"1", "failed: kubectl not on PATH (and APILOOM_CI=1: CI runs every test, none may skip)"},
		{"", "skipped: kubectl not on PATH"},
		{"0", "skipped: kubectl not on PATH"},
	} {
		t.Run("APILOOM_CI="+tc.env, func(t *testing.T) {
			t.Setenv(CIEnv, tc.env)
			var r recorder
			Unavailable(&r, "%s not on PATH", "kubectl")
			if r.ended != tc.want {
				t.Fatalf("ended %q, want %q", r.ended, tc.want)
			}
			if CI() != strings.HasPrefix(tc.want, "failed") {
				t.Fatalf("CI() = %t", CI())
			}
		})
	}
}
