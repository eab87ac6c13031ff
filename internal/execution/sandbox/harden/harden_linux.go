package harden

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/session/seccomp"
)

// DropCapabilities empties every capability set of the calling thread
// (the bounding set first, while CAP_SETPCAP is still held) and checks
// that none is left. A bounding set that cannot be dropped (a non-root
// caller has no CAP_SETPCAP) is harmless under no_new_privs with empty
// permitted and inheritable sets: exec then gives nothing back, not even
// to uid 0. Anything left in the permitted set is an error.
func DropCapabilities() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("harden: no_new_privs: %w", err)
	}
	for c := 0; c < 64; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break // past the kernel's last capability
		}
		if err != nil && !errors.Is(err, unix.EPERM) {
			return fmt.Errorf("harden: drop bounding capability %d: %w", c, err)
		}
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("harden: clear capabilities: %w", err)
	}
	var now [2]unix.CapUserData
	if err := unix.Capget(&hdr, &now[0]); err != nil {
		return fmt.Errorf("harden: read capabilities: %w", err)
	}
	for _, d := range now {
		if d.Permitted != 0 || d.Effective != 0 || d.Inheritable != 0 {
			return errors.New("harden: capabilities left after dropping them")
		}
	}
	return nil
}

// InstallFilter loads seccomp's RunnerPolicy, compiled by the session's
// one compiler, on every thread (no_new_privs must be set, as
// DropCapabilities and Landlock leave it).
func InstallFilter() error {
	if err := seccomp.InstallRules(seccomp.RunnerPolicy()); err != nil {
		return fmt.Errorf("harden: %w", err)
	}
	return nil
}

// HideSelf makes the calling process non-dumpable: its /proc/PID/environ,
// fd, maps and mem then need CAP_SYS_PTRACE, so a same-uid runner without
// it (every confined runner) cannot read the supervisor's secrets.
func HideSelf() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}

// CloseOnExecFrom marks every descriptor from fd up close-on-exec, so a
// descriptor the caller left open never reaches the exec'd program
// (close_range with CLOSE_RANGE_CLOEXEC, Linux 5.11; else one by one).
func CloseOnExecFrom(fd int) error {
	if err := unix.CloseRange(uint(fd), ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	return closeOnExecListed(fd)
}
