//go:build linux

package stage

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/egress/handoff"
	"github.com/loki-sh/loki/internal/session/seccomp"
)

// parentDeath is the parent-death signal the supervisor set, read while
// package initialisation runs: the runtime keeps it on the thread the
// kernel started the process with, the one thread that holds the signal
// (threads the runtime starts later begin without one).
var parentDeath struct {
	sig int32
	err unix.Errno
}

func init() {
	if len(os.Args) > 1 && os.Args[1] == Command {
		_, _, parentDeath.err = unix.RawSyscall(unix.SYS_PRCTL, unix.PR_GET_PDEATHSIG, uintptr(unsafe.Pointer(&parentDeath.sig)), 0)
	}
}

// Run is the stage: args are what Args made. On success it returns
// loki-init's arguments (after its argv[0]) for the caller to run as PID 1
// in this same process, and whether the peer must be kept to its own
// abstract unix sockets (pid1.Config.ScopeAbstractUnix: a Landlock domain
// is per thread, so only the thread that forks the peer takes it); on
// failure it has written the reason to the status pipe. It may run on any thread: the one that held the
// parent-death signal was read at init (parentDeath), and the signal is
// armed again on every thread.
//
// Invariant from the first privilege change on: every thread of the
// process has the same credentials, capabilities, no_new_privs and seccomp
// filter (privileges_linux.go), so that no thread loki-init or the peer's
// spawn may run on holds more than another.
func Run(args []string) (initArgs []string, scope bool, err error) {
	fail := func(step string, err error) ([]string, bool, error) {
		unix.Write(StatusFD, []byte(fmt.Sprintf("%s: %v", step, err)))
		return nil, false, exitcode.NotLaunched(nil)
	}
	if _, err := unix.FcntlInt(StatusFD, unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		return fail("status pipe", err)
	}
	control, argv, err := ParseArgs(args)
	if err != nil {
		return fail("arguments", err)
	}
	policy, err := ParsePolicy(os.Getenv(PolicyEnv))
	if err != nil {
		return fail("arguments", fmt.Errorf("confinement policy: %v", err))
	}
	if policy.Cgroup != nil {
		// Born in the session's cgroup, or refused: nothing of the
		// session may run outside its limits, even for a moment.
		self, err := os.ReadFile("/proc/self/cgroup")
		if err == nil {
			err = policy.Cgroup.Holds(string(self))
		}
		if err != nil {
			return fail("cgroup", err)
		}
	}
	// loki-init runs with an empty environment: the policy is the stage's.
	os.Clearenv()
	if os.Getpid() != 1 {
		return fail("pid namespace", errors.New("stage is not PID 1"))
	}
	if parentDeath.err != 0 {
		return fail("parent-death signal", parentDeath.err)
	}
	pdeath := parentDeath.sig
	if policy.LateFD > 0 {
		if policy.Late, err = readLate(policy.LateFD); err != nil {
			return fail("arguments", err)
		}
	}
	var trees map[string]int
	if len(policy.IDMap) > 0 {
		trees, err = receiveTrees(policy.IDMapFD, policy.IDMap)
		if err != nil {
			closeAll(trees)
			return fail("mounts", err)
		}
		unix.Close(policy.IDMapFD)
	}
	hide := append(policy.Hide, policy.Late.OtherRoots...)
	fs := &fsPlan{hide: hide, host: true}
	if policy.FS != confine.FSHost {
		fs = &fsPlan{write: policy.Write, read: policy.Read, hide: hide, protect: policy.Protect, trees: trees,
			private: confine.PrivateHostDirs(), mask: policy.Late.Mask, sockets: policy.Sockets, tmpSize: policy.Resources.Tmp()}
		for _, t := range policy.IDMap {
			fs.treeOrder = append(fs.treeOrder, t.Path)
		}
	}
	if policy.PrivateUser {
		fs.become = becomeRoot
	}
	err = isolateMounts(control, fs)
	closeAll(trees)
	if err != nil {
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
	if err := switchUser(policy.User); err != nil {
		return fail("user", err)
	}
	if err := clearCapabilities(); err != nil {
		return fail("capabilities", err)
	}
	if pdeath != 0 {
		// The credential changes cleared it; the last one is behind us
		// (emptying the capability sets does not clear it, nor do
		// no_new_privs and the filter). Armed before confineThreads,
		// whose LockOSThread starts the runtime's template thread: an
		// all-threads call right after that waited for the new thread.
		if err := allThreads(unix.SYS_PRCTL, unix.PR_SET_PDEATHSIG, uintptr(pdeath), 0, 0, 0, 0); err != nil {
			return fail("parent-death signal", err)
		}
		// A supervisor that died while it was cleared sent nothing; it
		// read the status pipe until EOF, so its end is gone with it.
		fds := []unix.PollFd{{Fd: StatusFD}}
		if n, err := unix.Poll(fds, 0); err == nil && n > 0 && fds[0].Revents&unix.POLLERR != 0 {
			return nil, false, exitcode.NotLaunched(errors.New("the supervisor is gone"))
		}
	}
	if err := confineThreads(policy.NotifyFD); err != nil {
		return fail("seccomp", err)
	}
	// Descriptors the supervisor inherited from its own caller must not
	// reach the peer: loki-init spawns it with only what the protocol
	// hands over (stdio, HostStdinFD).
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fail("close descriptors", err)
	}
	// EOF on the status pipe tells the supervisor the session is confined.
	unix.Close(StatusFD)
	// A confined peer on the host's network: the host's abstract unix
	// sockets are out of its reach where Landlock can say so.
	return argv[1:], policy.FS != confine.FSHost && !policy.Net().Private(), nil
}

// maxLate bounds what the stage reads on LateFD.
const maxLate = 1 << 20

// readLate reads the Late part of the policy from fd until EOF, and
// closes it: a supervisor gone before it wrote it whole leaves a
// document without its end, which does not parse, so nothing is mounted
// with a part of it.
func readLate(fd int) (Late, error) {
	f := os.NewFile(uintptr(fd), "late")
	defer f.Close()
	var late Late
	b, err := io.ReadAll(io.LimitReader(f, maxLate))
	if err == nil {
		late, err = ParseLate(b)
	}
	if err != nil {
		return Late{}, fmt.Errorf("host sockets and other sessions' control roots: %v", err)
	}
	return late, nil
}

// confineThreads sets no_new_privs and installs the session's syscall
// policy on every thread, with one all-threads change: no_new_privs is
// set on this thread, which then installs the filter with TSYNC, and the
// kernel gives every other thread the caller's no_new_privs along with
// its filter (seccomp_sync_threads), all or none. The thread is locked
// between the two, so that the filter comes from the one that has it.
func confineThreads(notifyFD int) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	return installSeccomp(notifyFD)
}

// installSeccomp installs the session's syscall policy on every thread;
// with sock > 0, with a listener sent to the supervisor over sock, or
// where the kernel gives none, the plain policy and why (never less of
// it). The stage's copy of the listener is closed before anything else
// runs: whoever holds it answers for the filter.
func installSeccomp(sock int) error {
	if sock <= 0 {
		return seccomp.Install()
	}
	defer unix.Close(sock)
	fd, err := seccomp.InstallNotified()
	why := ""
	if err != nil {
		why = "the kernel gave the syscall filter no listener (" + err.Error() + "; it needs Linux 5.7, and no listener above the session)"
		if err := seccomp.Install(); err != nil {
			return err
		}
	}
	err = seccomp.SendListener(sock, fd, why)
	if fd >= 0 {
		unix.Close(fd)
	}
	return err
}

// closeAll closes the detached mounts' descriptors (attached or not).
func closeAll(fds map[string]int) {
	for path, fd := range fds {
		unix.Close(fd)
		delete(fds, path)
	}
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
	ctl, err := holdControl(control)
	if err != nil {
		return fmt.Errorf("open control dir: %w", err)
	}
	defer unix.Close(ctl.fd)
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
	if err := maskControlRoot(control, ctl); err != nil {
		return err
	}
	ro := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
	if err := unix.Mount("", control, "", ro, ""); err != nil {
		return fmt.Errorf("remount control dir read-only: %w", err)
	}
	return nil
}

// holdControl holds the control dir: a detached bind of it (open_tree,
// not recursive, as a plain bind), or before Linux 5.2 a descriptor to
// bind from.
func holdControl(control string) (held, error) {
	fd, err := unix.OpenTree(unix.AT_FDCWD, control, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err == nil {
		return held{path: control, fd: fd, tree: true}, nil
	}
	if !errors.Is(err, unix.ENOSYS) {
		return held{fd: -1}, err
	}
	fd, err = unix.Open(control, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	return held{path: control, fd: fd}, err
}

// maskControlRoot covers ROOT of ROOT/session-X/control with a fresh
// tmpfs and binds the session's own control dir back at its path. The
// tmpfs and the dirs on the way are 0711: a --user init must traverse them
// to reach its control dir, and nobody can list them. The dir
// is held open across the mount, since its path is hidden by it. The
// tmpfs is made read-only once the path exists; the peer has no
// capabilities left to unmount either.
func maskControlRoot(control string, ctl held) error {
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
	if ctl.tree {
		err = unix.MoveMount(ctl.fd, "", unix.AT_FDCWD, control, unix.MOVE_MOUNT_F_EMPTY_PATH)
	} else {
		err = unix.Mount("/proc/self/fd/"+strconv.Itoa(ctl.fd), control, "", unix.MS_BIND, "")
	}
	if err != nil {
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

// mkdirAllMode is os.MkdirAll with mode applied despite the umask. It
// tries the mkdir first: its paths are mostly missing, in a tmpfs of the
// stage's, so a lookup first would be a system call more for each.
func mkdirAllMode(path string, mode os.FileMode) error {
	perm := uint32(mode.Perm())
	err := unix.Mkdir(path, perm)
	if errors.Is(err, unix.ENOENT) {
		if err := mkdirAllMode(filepath.Dir(path), mode); err != nil {
			return err
		}
		err = unix.Mkdir(path, perm)
	}
	if errors.Is(err, unix.EEXIST) {
		var st unix.Stat_t
		if err := unix.Stat(path, &st); err != nil {
			return &os.PathError{Op: "stat", Path: path, Err: err}
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return &os.PathError{Op: "mkdir", Path: path, Err: unix.ENOTDIR}
		}
		return nil
	}
	if err != nil {
		return &os.PathError{Op: "mkdir", Path: path, Err: err}
	}
	if err := unix.Chmod(path, perm); err != nil {
		return &os.PathError{Op: "chmod", Path: path, Err: err}
	}
	return nil
}
