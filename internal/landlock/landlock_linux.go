//go:build linux

package landlock

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ABI is the running kernel's Landlock ABI version, 0 when it has none.
func ABI() int {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0
	}
	return int(v)
}

// rulesetAttr is struct landlock_ruleset_attr up to the scopes (ABI 6).
// Its size is passed as is: a kernel that knows fewer fields accepts the
// struct while the fields it does not know are zero.
type rulesetAttr struct{ fs, net, scoped uint64 }

// ScopeAbstractUnix confines the calling thread and what it execs to its
// own abstract unix sockets (ABI 6). It needs no_new_privs (or
// CAP_SYS_ADMIN). ErrUnavailable when the kernel has no such scope.
func ScopeAbstractUnix() error {
	if ABI() < 6 {
		return fmt.Errorf("%w: abstract unix socket scope needs ABI 6", ErrUnavailable)
	}
	attr := rulesetAttr{scoped: unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return fmt.Errorf("landlock ruleset: %w", e)
	}
	defer unix.Close(int(fd))
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); e != 0 {
		return fmt.Errorf("landlock restrict: %w", e)
	}
	return nil
}
