//go:build !apiloom_failpoints

package failpoint

// Enabled is false in a normal build: a constant, so that every site's
// `if failpoint.Enabled && ...` block is dead code the compiler removes.
const Enabled = false

// Fire never fires in a normal build.
func Fire(Name) bool { return false }

// Logf does nothing in a normal build.
func Logf(Name, string, ...any) {}
