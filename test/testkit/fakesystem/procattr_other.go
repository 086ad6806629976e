//go:build !linux

package fakesystem

import "syscall"

// sysProcAttr puts the operator in a process group of its own.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
