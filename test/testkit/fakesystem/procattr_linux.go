package fakesystem

import "syscall"

// sysProcAttr puts the operator in a process group of its own and has the
// kernel SIGKILL it when the test binary's thread that started it dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
