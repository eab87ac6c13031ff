//go:build linux

package landlock

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pathBeneathAttr and netPortAttr are the kernel's packed structs; only
// their first 12 and 16 bytes are read.
type pathBeneathAttr struct {
	allowed  uint64
	parentFD int32
	_        int32
}

type netPortAttr struct{ allowed, port uint64 }

const ruleNetPort = 2 // LANDLOCK_RULE_NET_PORT

// Create makes the ruleset in the kernel and returns its descriptor
// (close-on-exec). Creating it restricts nothing; RestrictSelf with it
// does. Every path is opened now (O_PATH), so a path that is missing or
// unreachable is an error here, not a hole later. ErrUnavailable when the
// running kernel's ABI is older than the ruleset's.
func (r *Ruleset) Create() (*os.File, error) {
	if err := r.Check(); err != nil {
		return nil, err
	}
	if abi := ABI(); abi < r.ABI {
		return nil, fmt.Errorf("%w: the ruleset needs ABI %d, this kernel has %d", ErrUnavailable, r.ABI, abi)
	}
	attr := rulesetAttr{fs: r.HandledFS, net: r.HandledNet, scoped: r.Scoped}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return nil, fmt.Errorf("landlock ruleset: %w", e)
	}
	f := os.NewFile(fd, "landlock-ruleset")
	fail := func(err error) (*os.File, error) { f.Close(); return nil, err }
	for _, p := range r.Paths {
		pfd, err := unix.Open(p.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fail(fmt.Errorf("landlock rule for %s: %w", p.Path, err))
		}
		a := pathBeneathAttr{allowed: p.Access, parentFD: int32(pfd)}
		_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&a)), 0, 0, 0)
		unix.Close(pfd)
		if e != 0 {
			return fail(fmt.Errorf("landlock rule for %s: %w", p.Path, e))
		}
	}
	for _, p := range r.Ports {
		a := netPortAttr{allowed: p.Access, port: uint64(p.Port)}
		if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, ruleNetPort, uintptr(unsafe.Pointer(&a)), 0, 0, 0); e != 0 {
			return fail(fmt.Errorf("landlock rule for port %d: %w", p.Port, e))
		}
	}
	return f, nil
}

// RestrictSelf enforces the ruleset fd on the calling thread, after
// setting no_new_privs (which Landlock requires without CAP_SYS_ADMIN, and
// which keeps a set-uid program from leaving the domain's intent). The
// caller must be locked to its thread and exec from it.
func RestrictSelf(fd int) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(fd), 0, 0); e != 0 {
		return fmt.Errorf("landlock restrict: %w", e)
	}
	return nil
}
