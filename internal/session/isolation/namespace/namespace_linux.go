//go:build linux

package namespace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/session"
)

// The stage runs from this package's init, on the thread the kernel
// created the process with (the runtime runs package inits on the main
// thread): the parent-death signal belongs to that thread and would be lost
// by an exec from any other. Running it here, before the CLI is built and
// before the remaining packages initialise, takes the stage's cost down to
// little more than the Go runtime's start: it is paid on every session.
func init() {
	if len(os.Args) > 1 && os.Args[1] == StageCommand {
		runtime.LockOSThread()
		os.Exit(RunStage(os.Args[2:]))
	}
}

// statusFD is the stage's end of the status pipe (ExtraFiles[0]).
const statusFD = 3

// maxStatus bounds what the supervisor reads from the status pipe.
const maxStatus = 4096

// Start clones the stage into new namespaces and waits until it has either
// exec'd loki-init or reported why it could not.
func (b *Backend) Start(req session.Request) (session.Process, error) {
	self := b.Self
	if self == "" {
		self = "/proc/self/exe"
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer statusR.Close()
	cmd := &exec.Cmd{
		Path:        self,
		Args:        append([]string{"loki-supervise", StageCommand}, stageArgs(req.ControlDir, b.Init, req.InitArgs)...),
		Env:         []string{}, // the init gets no environment: secrets travel only in the prelude
		Dir:         "/",
		Stdin:       req.Stdin,
		Stdout:      req.Stdout,
		Stderr:      req.Stderr,
		ExtraFiles:  []*os.File{statusW},
		SysProcAttr: b.sysProcAttr(),
	}
	err = cmd.Start()
	statusW.Close()
	if err != nil {
		return nil, fmt.Errorf("%w: %v; %s", ErrNamespace, err, FixHint)
	}
	msg, _ := io.ReadAll(io.LimitReader(statusR, maxStatus))
	p := &process{cmd: cmd}
	if len(msg) > 0 {
		p.startErr = fmt.Errorf("%w: %s", ErrStage, strings.TrimSpace(string(msg)))
	}
	return p, nil
}

func (b *Backend) sysProcAttr() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{
		Cloneflags: unix.CLONE_NEWPID | unix.CLONE_NEWNS,
		// Its own process group: a terminal's ^C reaches the supervisor,
		// which forwards it once, instead of every process at once.
		Setpgid: true,
	}
	if !b.NoParentDeathSignal {
		attr.Pdeathsig = syscall.SIGKILL
	}
	if uid, gid := os.Geteuid(), os.Getegid(); uid != 0 {
		attr.Cloneflags |= unix.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.GidMappingsEnableSetgroups = false
		// A non-root uid loses its capabilities at exec; keep the two the
		// stage needs (mounts, dropping the bounding set) as ambient ones.
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP}
	}
	return attr
}

type process struct {
	cmd      *exec.Cmd
	startErr error
}

func (p *process) Wait() session.Exit {
	err := p.cmd.Wait()
	exit := session.Exit{Err: p.startErr}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			exit.Signal = int(ws.Signal())
		} else {
			exit.Code = ee.ExitCode()
		}
	default:
		exit.Code, exit.Err = -1, err
	}
	return exit
}

// Signal and Kill go through os.Process, which holds the child unreaped
// (and uses a pidfd where available), so the pid cannot name another
// process. SIGKILL of PID 1 ends every process of the namespace.
func (p *process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }
func (p *process) Kill() error                { return p.cmd.Process.Kill() }
func (p *process) Close() error               { return nil }

// RunStage is the body of StageCommand. It returns only on failure, after
// writing the reason to the status pipe; on success it has become loki-init.
func RunStage(args []string) int {
	status := os.NewFile(statusFD, "status")
	fail := func(step string, err error) int {
		if status != nil {
			fmt.Fprintf(status, "%s: %v", step, err)
		}
		return 127
	}
	if _, err := unix.FcntlInt(statusFD, unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		return fail("status pipe", err)
	}
	control, argv, err := parseStageArgs(args)
	if err != nil {
		return fail("arguments", err)
	}
	if os.Getpid() != 1 {
		return fail("pid namespace", errors.New("stage is not PID 1"))
	}
	if err := isolateMounts(control); err != nil {
		return fail("mounts", err)
	}
	if err := dropPrivileges(); err != nil {
		return fail("capabilities", err)
	}
	// Descriptors the supervisor inherited from its own caller must not
	// reach the namespace: only stdio crosses the exec.
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fail("close descriptors", err)
	}
	err = unix.Exec(argv[0], argv, []string{})
	return fail("exec "+argv[0], err)
}

// isolateMounts: nothing mounted here propagates to the host; /proc shows
// this namespace's processes; the control root (which holds every
// session's dir) is covered by an empty tmpfs, so the peer cannot see, let
// alone renew, another session's lease; its own control dir reappears at
// the same path, read-only (and nosuid, nodev, noexec).
func isolateMounts(control string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	if err := protectKernel(); err != nil {
		return err
	}
	if err := maskControlRoot(control); err != nil {
		return err
	}
	ro := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
	if err := unix.Mount("", control, "", ro, ""); err != nil {
		return fmt.Errorf("remount control dir read-only: %w", err)
	}
	return nil
}

// maskControlRoot covers ROOT of ROOT/session-X/control with a fresh
// tmpfs and binds the session's own control dir back at its path. The dir
// is held open across the mount, since its path is hidden by it. The
// tmpfs is made read-only once the path exists; the peer has no
// capabilities left to unmount either.
func maskControlRoot(control string) error {
	root := filepath.Dir(filepath.Dir(control))
	rel, err := filepath.Rel(root, control)
	if err != nil || root == "/" || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("control dir %s is not ROOT/SESSION/control", control)
	}
	fd, err := unix.Open(control, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open control dir: %w", err)
	}
	defer unix.Close(fd)
	const flags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	if err := unix.Mount("tmpfs", root, "tmpfs", flags, "mode=0700,size=64k"); err != nil {
		return fmt.Errorf("mask control root: %w", err)
	}
	if err := os.MkdirAll(control, 0o700); err != nil {
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

// dropPrivileges empties the bounding and ambient sets and sets
// no_new_privs on this (the exec'ing) thread, so neither loki-init nor
// anything it starts can hold or regain a capability.
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
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	return nil
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
