//go:build linux

package oci

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/loki-sh/loki/internal/exitcode"
	"golang.org/x/sys/unix"
)

// ShimCommand is the hidden loki-supervise subcommand that runs a runtime
// with the hybrid cgroup2 mount hidden (see the package doc).
const ShimCommand = "__oci-cgroup-shim"

const unifiedMount = "/sys/fs/cgroup/unified"

func shimAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWNS, Setpgid: true}
}

// needsHybridShim: /sys/fs/cgroup is a v1 tmpfs and the cgroup2 mount at
// unified has controllers, which crun refuses.
func needsHybridShim() bool {
	var st unix.Statfs_t
	if unix.Statfs("/sys/fs/cgroup", &st) != nil || st.Type == unix.CGROUP2_SUPER_MAGIC {
		return false
	}
	if unix.Statfs(unifiedMount, &st) != nil || st.Type != unix.CGROUP2_SUPER_MAGIC {
		return false
	}
	b, err := os.ReadFile(unifiedMount + "/cgroup.controllers")
	return err == nil && len(bytes.TrimSpace(b)) > 0
}

// PidsControllerAvailable reports whether a pids limit can be enforced
// (Capabilities gives --pids-max by it).
func PidsControllerAvailable() bool {
	var st unix.Statfs_t
	if unix.Statfs("/sys/fs/cgroup", &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
		b, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers")
		return err == nil && strings.Contains(" "+string(b)+" ", " pids")
	}
	_, err := os.Stat("/sys/fs/cgroup/pids/cgroup.procs")
	return err == nil
}

// RunShim is the body of ShimCommand: it is already in a private mount
// namespace; it keeps host mounts flowing in but none flowing out, hides the
// cgroup2 mount under a scratch tmpfs, and execs the runtime.
func RunShim(args []string) error {
	if len(args) < 1 {
		fmt.Fprintln(os.Stderr, "loki-supervise: cgroup shim: missing runtime")
		return exitcode.NotLaunched(nil)
	}
	// Refuse unless this is a mount namespace of our own: the tmpfs below
	// must never cover the host's cgroup2 mount.
	own, err1 := os.Readlink("/proc/self/ns/mnt")
	parent, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", os.Getppid()))
	if err1 != nil || err2 != nil || own == parent {
		fmt.Fprintln(os.Stderr, "loki-supervise: cgroup shim: not in a private mount namespace")
		return exitcode.NotLaunched(nil)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		fmt.Fprintf(os.Stderr, "loki-supervise: cgroup shim: make / a slave mount: %v\n", err)
		return exitcode.NotLaunched(nil)
	}
	if err := unix.Mount("loki-cgroup-shim", unifiedMount, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=64k,mode=0755"); err != nil {
		fmt.Fprintf(os.Stderr, "loki-supervise: cgroup shim: hide %s: %v\n", unifiedMount, err)
		return exitcode.NotLaunched(nil)
	}
	err := unix.Exec(args[0], args, os.Environ())
	fmt.Fprintf(os.Stderr, "loki-supervise: cgroup shim: exec %s: %v\n", args[0], err)
	return exitcode.NotLaunched(nil)
}
