//go:build !unix

package direct

import (
	"os"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr              { return nil }
func signalGroup(p *os.Process, sig os.Signal) error { return p.Signal(sig) }
func killGroup(int)                                  {}
