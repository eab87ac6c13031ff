//go:build linux

package confine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/testutil"
)

// noMountSetattrEnv makes the test binary exec its arguments under a
// seccomp filter that answers ENOSYS for open_tree and mount_setattr
// (TestMain), as a kernel before 5.2 and 5.12 would.
const noMountSetattrEnv = "LOKI_TEST_NO_MOUNT_SETATTR"

func execWithoutMountSetattr() {
	runtime.LockOSThread() // the filter is this thread's, and exec keeps it
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // the call's number
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.SYS_OPEN_TREE, Jt: 2},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.SYS_MOUNT_SETATTR, Jt: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "seccomp:", err)
		os.Exit(127)
	}
	env := slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, noMountSetattrEnv+"=") })
	err := syscall.Exec(os.Args[1], os.Args[1:], env)
	fmt.Fprintln(os.Stderr, "exec:", err)
	os.Exit(127)
}

// TestReadOnlyWithoutMountSetattr: where the kernel has neither
// open_tree nor mount_setattr, the stage makes the host read-only mount
// by mount, and the session is as confined as with them: the cwd
// writable, a mount below it with its own flags, every other mount
// (those under /sys too) read-only.
func TestReadOnlyWithoutMountSetattr(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount on the host")
	}
	ws, other := hostDir(t, 0), hostDir(t, 0)
	hostMount(t, filepath.Join(ws, "rw"), false)
	hostMount(t, filepath.Join(ws, "ro"), true)
	hostMount(t, filepath.Join(other, "rw"), false)
	probe := writeProbe + `w "$1/f" cwd; w "$1/rw/f" cwd_rw; w "$1/ro/f" cwd_ro; w "$2/f" other; w "$2/rw/f" other_rw
w /etc/loki-confine-probe etc
awk '$5 ~ "^/sys(/|$)" && $6 !~ /^ro/ {n++} END {print "sys_rw=" n+0}' /proc/self/mountinfo`
	sup, init := testutil.Binary(t, "loki-supervise"), testutil.Binary(t, "loki-init")
	// --userns host: the idmapped trees of a private user namespace
	// need the same calls, and the session refuses without them.
	cmd := exec.Command(os.Args[0], sup, "session", "--init", init, "--control-root", t.TempDir(),
		"--userns", "host", "--cwd", ws, "--", "sh", "-c", probe, "probe", ws, other)
	cmd.Env = append(os.Environ(), noMountSetattrEnv+"=1", "LC_ALL=C")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	t.Cleanup(func() { os.Remove("/etc/loki-confine-probe") })
	if err != nil {
		t.Fatalf("%v, stderr %q", err, stderr.String())
	}
	wantResults(t, string(out), map[string]string{"cwd": "written", "cwd_rw": "written", "cwd_ro": "refused",
		"other": "refused", "other_rw": "refused", "etc": "refused", "sys_rw": "0"})
}
