//go:build linux

package stage

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/landlock"
	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/egress/handoff"
)

// Run is the stage: args are what Args made. It returns only on failure,
// after writing the reason to the status pipe; on success it has become
// loki-init. It must run on the thread the kernel created the process
// with (main keeps its goroutine there): the parent-death signal belongs
// to that thread and would be lost by an exec from any other.
func Run(args []string) error {
	status := os.NewFile(StatusFD, "status")
	fail := func(step string, err error) error {
		if status != nil {
			fmt.Fprintf(status, "%s: %v", step, err)
		}
		return exitcode.NotLaunched(nil)
	}
	if _, err := unix.FcntlInt(StatusFD, unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		return fail("status pipe", err)
	}
	control, argv, err := ParseArgs(args)
	if err != nil {
		return fail("arguments", err)
	}
	var policy Policy
	if err := json.Unmarshal([]byte(os.Getenv(PolicyEnv)), &policy); err != nil {
		return fail("arguments", fmt.Errorf("confinement policy: %v", err))
	}
	if os.Getpid() != 1 {
		return fail("pid namespace", errors.New("stage is not PID 1"))
	}
	var trees map[string]int
	if len(policy.IDMap) > 0 {
		trees, err = receiveTrees(policy.IDMapFD, policy.IDMap)
		if err != nil {
			return fail("mounts", err)
		}
		unix.Close(policy.IDMapFD)
	}
	fs := &fsPlan{hide: policy.Hide, host: true}
	if policy.FS != confine.FSHost {
		fs = &fsPlan{write: policy.Write, read: policy.Read, hide: policy.Hide, trees: trees}
		for _, t := range policy.IDMap {
			fs.treeOrder = append(fs.treeOrder, t.Path)
		}
		if Under(filepath.Clean(argv[0]), "/tmp") {
			// loki-init itself stays reachable at its path (exec'd by
			// it: its comm stays loki-init), read-only.
			fs.read = append(fs.read, filepath.Clean(argv[0]))
		}
	}
	if policy.PrivateUser {
		fs.become = becomeRoot
	}
	if err := isolateMounts(control, fs); err != nil {
		return fail("mounts", err)
	}
	if policy.TTY && fs.host {
		if err := privatePTS(); err != nil {
			return fail("mounts", err)
		}
	}
	if policy.Net() == confine.NetworkLoopback {
		if err := loopbackUp(); err != nil {
			return fail("network", err)
		}
	}
	if policy.EgressFD > 0 {
		if err := handoff.SendListener(policy.EgressFD); err != nil {
			return fail("network", err)
		}
		unix.Close(policy.EgressFD)
	}
	if err := dropPrivileges(); err != nil {
		return fail("capabilities", err)
	}
	if err := switchUser(policy.User); err != nil {
		return fail("user", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail("capabilities", fmt.Errorf("set no_new_privs: %w", err))
	}
	if err := denyKeyrings(); err != nil {
		return fail("seccomp", err)
	}
	if policy.FS != confine.FSHost && !policy.Net().Private() {
		// A confined peer on the host's network: the host's abstract
		// unix sockets are out of its reach where Landlock can say so.
		if err := landlock.ScopeAbstractUnix(); err != nil && !errors.Is(err, landlock.ErrUnavailable) {
			return fail("landlock", err)
		}
	}
	// Descriptors the supervisor inherited from its own caller must not
	// reach the namespace: only stdio crosses the exec.
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fail("close descriptors", err)
	}
	if policy.HostStdin {
		// The client's own stdin, which loki-init hands to the peer.
		if _, err := unix.FcntlInt(HostStdinFD, unix.F_SETFD, 0); err != nil {
			return fail("host stdin", err)
		}
	}
	err = unix.Exec(argv[0], argv, []string{})
	return fail("exec "+argv[0], err)
}

// isolateMounts: nothing mounted here propagates to the host; /proc shows
// this namespace's processes; the control root (which holds every
// session's dir) is covered by an empty tmpfs, so the peer cannot see, let
// alone renew, another session's lease; its own control dir reappears at
// the same path, read-only (and nosuid, nodev, noexec).
func isolateMounts(control string, fs *fsPlan) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	// Held from here on: a private /tmp may cover its path.
	controlFD, err := unix.Open(control, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open control dir: %w", err)
	}
	defer unix.Close(controlFD)
	if fs != nil {
		if err := fs.apply(); err != nil {
			return err
		}
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	if err := protectKernel(); err != nil {
		return err
	}
	if err := maskControlRoot(control, controlFD); err != nil {
		return err
	}
	ro := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
	if err := unix.Mount("", control, "", ro, ""); err != nil {
		return fmt.Errorf("remount control dir read-only: %w", err)
	}
	return nil
}

// maskControlRoot covers ROOT of ROOT/session-X/control with a fresh
// tmpfs and binds the session's own control dir back at its path. The
// tmpfs and the dirs on the way are 0711: a --user init must traverse them
// to reach its control dir, and nobody can list them. The dir
// is held open across the mount, since its path is hidden by it. The
// tmpfs is made read-only once the path exists; the peer has no
// capabilities left to unmount either.
func maskControlRoot(control string, fd int) error {
	root := filepath.Dir(filepath.Dir(control))
	rel, err := filepath.Rel(root, control)
	if err != nil || root == "/" || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("control dir %s is not ROOT/SESSION/control", control)
	}
	// Under a private /tmp the root's path is gone: make it there.
	if err := mkdirAllMode(root, 0o711); err != nil {
		return fmt.Errorf("control root mount point: %w", err)
	}
	const flags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	if err := unix.Mount("tmpfs", root, "tmpfs", flags, "mode=0711,size=64k"); err != nil {
		return fmt.Errorf("mask control root: %w", err)
	}
	if err := mkdirAllMode(control, 0o711); err != nil {
		return fmt.Errorf("recreate control path: %w", err)
	}
	if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(fd), control, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind control dir: %w", err)
	}
	if err := unix.Mount("", root, "", unix.MS_REMOUNT|unix.MS_RDONLY|flags, ""); err != nil {
		return fmt.Errorf("make control root mask read-only: %w", err)
	}
	return nil
}

// privatePTS mounts a devpts instance of the session's own at /dev/pts
// over the host's (the confined /dev has one already): /dev/ptmx then
// allocates the peer's terminal in it (the kernel resolves ptmx to the
// devpts mounted at "pts" beside it), the peer sees no host terminal
// there, and the host's /dev/pts lists nothing of the session.
func privatePTS() error {
	const flags = unix.MS_NOSUID | unix.MS_NOEXEC
	if err := unix.Mount("devpts", "/dev/pts", "devpts", flags, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("mount a private /dev/pts: %w", err)
	}
	return nil
}

// dropPrivileges empties the bounding, inheritable and ambient sets on
// this (the exec'ing) thread; with no_new_privs, set after switchUser,
// neither loki-init nor anything it starts can hold or regain a
// capability.
func dropPrivileges() error {
	last := lastCap()
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	// Root keeps the inheritable set across exec whatever the bounding set
	// says, so it must be emptied too.
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("read capabilities: %w", err)
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clear inheritable capabilities: %w", err)
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	return nil
}

// switchUser makes this thread (the one that execs loki-init) run as
// --user, with that gid as its only group. The bounding set is already
// empty, so the uid change also leaves no capability to regain. A user
// that is the caller itself (the user-namespace case) needs no change.
func switchUser(u *confine.User) error {
	if u == nil || (int(u.UID) == os.Getuid() && int(u.GID) == os.Getgid()) {
		return nil
	}
	return setIDs(u.UID, u.GID)
}

// setIDs sets this thread's uids to uid and its gids to gid, with gid as
// its only group. Raw syscalls on this thread only: the Go wrappers
// change every thread of the process, and only this one execs.
func setIDs(uid, gid uint32) error {
	if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, 1, uintptr(unsafe.Pointer(&gid)), 0); e != 0 {
		return fmt.Errorf("setgroups %d: %w", gid, e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(gid), uintptr(gid), uintptr(gid)); e != 0 {
		return fmt.Errorf("setgid %d: %w", gid, e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(uid), uintptr(uid), uintptr(uid)); e != 0 {
		return fmt.Errorf("setuid %d: %w", uid, e)
	}
	return nil
}

// loopbackUp brings lo of the new network namespace up (it starts down).
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("read lo flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	return nil
}

// mkdirAllMode is os.MkdirAll with mode applied despite the umask.
func mkdirAllMode(path string, mode os.FileMode) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil
	}
	if err := mkdirAllMode(filepath.Dir(path), mode); err != nil {
		return err
	}
	if err := os.Mkdir(path, mode); err != nil && !os.IsExist(err) {
		return err
	}
	return os.Chmod(path, mode)
}

func lastCap() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err == nil {
		var n int
		if _, err := fmt.Sscanf(strings.TrimSpace(string(b)), "%d", &n); err == nil && n > 0 && n < 128 {
			return n
		}
	}
	return 63
}
