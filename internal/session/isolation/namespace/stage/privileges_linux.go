//go:build linux

package stage

import (
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/session/confine"
)

// The stage goes on as loki-init in the same process, so a privilege it
// gives up must be given up by every thread: the Go runtime runs
// goroutines on any of them, and the peer is forked from whichever one
// spawns it. Hence syscall.AllThreadsSyscall (loki-init is built without
// cgo, where it works) and Go's own Setresuid and kin, which use it. It
// ends the program if threads disagree, which they cannot: every thread
// has had the same credentials from the start, and only these all-thread
// calls change them.

// allThreads makes one system call on every thread of the process.
func allThreads(trap, a1, a2, a3, a4, a5, a6 uintptr) error {
	if _, _, e := syscall.AllThreadsSyscall6(trap, a1, a2, a3, a4, a5, a6); e != 0 {
		return e
	}
	return nil
}

// clearCapabilities empties the effective, permitted and inheritable
// sets, and with them the ambient set (the kernel keeps no capability
// ambient that is not both permitted and inheritable: cap_capset), on
// every thread. Without an exec, root would keep its effective set (the
// kernel recomputes the sets only at exec, or at a change away from uid
// 0). With no_new_privs (confineThreads) neither loki-init nor anything
// it starts can hold or regain a capability. The bounding set is left
// as it is: it only caps what an execve may add to the permitted set,
// and under no_new_privs the kernel already caps that at the old
// permitted set (empty), for a set-uid binary, file capabilities and
// root's exec alike; a new user namespace gets a full bounding set
// again whatever this one held. Emptying it cost one all-threads call
// per capability, each a stop-the-world (docs/session.md, Performance).
func clearCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := allThreads(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0, 0, 0, 0); err != nil {
		return fmt.Errorf("clear capabilities: %w", err)
	}
	return nil
}

// switchUser makes the process run as --user, with that gid as its only
// group. The uid change clears the permitted set; no_new_privs, set
// after it, keeps an exec from raising it again. A user that is the caller itself (the
// user-namespace case) needs no change.
func switchUser(u *confine.User) error {
	if u == nil || (int(u.UID) == unix.Getuid() && int(u.GID) == unix.Getgid()) {
		return nil
	}
	return setIDs(u.UID, u.GID)
}

// setIDs sets every thread's uids to uid and gids to gid, with gid as the
// only group.
func setIDs(uid, gid uint32) error {
	if err := syscall.Setgroups([]int{int(gid)}); err != nil {
		return fmt.Errorf("setgroups %d: %w", gid, err)
	}
	if err := syscall.Setresgid(int(gid), int(gid), int(gid)); err != nil {
		return fmt.Errorf("setgid %d: %w", gid, err)
	}
	if err := syscall.Setresuid(int(uid), int(uid), int(uid)); err != nil {
		return fmt.Errorf("setuid %d: %w", uid, err)
	}
	return nil
}

// becomeRoot makes the process root of the stage's user namespace (the
// private block's first ids, with no supplementary group). Until then it
// ran as the host's uid 0 with the capabilities the clone gave it as
// ambient ones: that is what resolves host paths under root's 0700 dirs
// while the stage mounts; from here on it creates files, which need ids
// mapped in the namespace.
func becomeRoot() error { return setIDs(0, 0) }
