//go:build unix

package procid

import "golang.org/x/sys/unix"

// signalable: kill(pid, 0) succeeds (EPERM, another user's process, is
// false, as os.kill raises there).
func signalable(pid int) bool { return unix.Kill(pid, 0) == nil }
