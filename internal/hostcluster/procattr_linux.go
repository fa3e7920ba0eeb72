package hostcluster

import "syscall"

// dieWithParent makes the kernel kill a child when the test binary dies,
// so that a crashed or killed test leaves no kube-apiserver behind.
// (Pdeathsig follows the thread that started the child; the Go runtime
// ends threads only under runtime.LockOSThread, which the harness does
// not use.)
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
