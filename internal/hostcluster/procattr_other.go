//go:build !linux

package hostcluster

import "syscall"

// dieWithParent has no portable equivalent off Linux: there a child
// outlives a test binary that is killed, not one that ends.
func dieWithParent() *syscall.SysProcAttr { return nil }
