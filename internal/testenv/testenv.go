// Package testenv decides what a test does when something it needs from
// outside the repository (kubectl, h2spec) cannot be had: a developer's
// plain `go test` skips it, and CI fails it, so that a green CI run is one
// in which every such test ran. CI is told by the environment variable
// APILOOM_CI=1, which `make test` (hack/test.sh) and `make h2spec` set, and
// thus .ci/run.
package testenv

import (
	"os"
	"testing"
)

// CIEnv is the environment variable that marks a CI run: "1" there.
const CIEnv = "APILOOM_CI"

// CI reports whether the tests run as CI runs them.
func CI() bool { return os.Getenv(CIEnv) == "1" }

// Unavailable ends t because something it needs cannot be had, which the
// message says: t fails under CI and is skipped otherwise.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if CI() {
		t.Fatalf(format+" (and "+CIEnv+"=1: CI runs every test, none may skip)", args...)
		return // Fatalf does not return; a recording testing.TB's does
	}
	t.Skipf(format, args...)
}
