package pid1

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/landlock"
	"github.com/loki-sh/loki/internal/launch"
)

// peer is the spawned agent and the init's ends of its three pipes.
type peer struct {
	pid    int
	pidfd  int // -1 when the kernel gives none (before Linux 5.3)
	stdin  int // write end
	stdout int // read end
	stderr int // read end; -1 on a terminal (one stream)
	tty    int // the pty master on a terminal, else -1
}

// spawn starts the peer in its own session (so it and everything it starts
// can be signalled as one), with fresh pipes as its stdio. Nothing but
// those three descriptors crosses into it: every other descriptor of the
// init is close-on-exec.
func spawn(s launch.Spec, stdinFD int, stderrDirect bool) (peer, error) {
	if !isDir(s.Cwd) {
		return peer{}, ErrCwd
	}
	path, err := lookPath(s.Argv[0], s.Cwd, s.Env)
	if err != nil {
		return peer{}, err
	}
	if s.TTY != nil {
		return spawnTTY(path, s)
	}
	if stdinFD > 0 {
		return spawnDirect(path, s, stdinFD, stderrDirect)
	}
	var in, out, errp [2]int
	ps := []*[2]int{&out, &errp}
	if inheritStdin() {
		in = [2]int{0, -1} // the peer reads the host's pipe itself
	} else {
		ps = append(ps, &in)
	}
	if err := pipes(ps...); err != nil {
		return peer{}, err
	}
	// Both pipes of each output hop are large, the host's included: a
	// splice then moves up to 1 MiB per call.
	for _, fd := range []int{in[1], out[1], errp[1], 1, 2} {
		if fd >= 0 {
			growPipe(fd)
		}
	}
	pidfd := -1
	pid, err := syscall.ForkExec(path, s.Argv, &syscall.ProcAttr{
		Dir:   s.Cwd,
		Env:   s.Environ(),
		Files: []uintptr{uintptr(in[0]), uintptr(out[1]), uintptr(errp[1])},
		Sys:   &syscall.SysProcAttr{Setsid: true, PidFD: &pidfd},
	})
	for _, fd := range []int{in[0], out[1], errp[1]} {
		if fd > 0 {
			unix.Close(fd)
		}
	}
	if err != nil {
		for _, fd := range []int{in[1], out[0], errp[0]} {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
		return peer{}, classifyExec(err)
	}
	return peer{pid: pid, pidfd: pidfd, stdin: in[1], stdout: out[0], stderr: errp[0], tty: -1}, nil
}

// inheritStdin reports whether the peer may read the init's fd 0 itself
// once the prelude is read: a blocking pipe (what loki-supervise and the
// OCI runtimes give). A forwarder would add a hop, a thread wakeup, to
// every message. The prelude is read to its last byte and never one more,
// so the pipe holds the peer's input only; its writer closing (POLLHUP)
// is host stdin's EOF (watchInput). Anything else (a file, /dev/null, a
// socket, a descriptor left non-blocking, which the peer would get as
// such) keeps the forwarder, which reads it to its end.
func inheritStdin() bool {
	var st unix.Stat_t
	if unix.Fstat(0, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return false
	}
	fl, err := unix.FcntlInt(0, unix.F_GETFL, 0)
	return err == nil && fl&unix.O_NONBLOCK == 0
}

// spawnDirect starts the peer on the host's own descriptors: stdinFD and
// fd 1, and fd 2 when stderrDirect (else a pipe the init forwards). The
// init keeps its copies, to watch them.
func spawnDirect(path string, s launch.Spec, stdinFD int, stderrDirect bool) (peer, error) {
	errR, errW := -1, 2
	if !stderrDirect {
		var p [2]int
		if err := pipes(&p); err != nil {
			return peer{}, err
		}
		growPipe(p[1])
		errR, errW = p[0], p[1]
	}
	pidfd := -1
	pid, err := syscall.ForkExec(path, s.Argv, &syscall.ProcAttr{
		Dir:   s.Cwd,
		Env:   s.Environ(),
		Files: []uintptr{uintptr(stdinFD), 1, uintptr(errW)},
		Sys:   &syscall.SysProcAttr{Setsid: true, PidFD: &pidfd},
	})
	if !stderrDirect {
		unix.Close(errW)
	}
	if err != nil {
		if errR >= 0 {
			unix.Close(errR)
		}
		return peer{}, classifyExec(err)
	}
	return peer{pid: pid, pidfd: pidfd, stdin: -1, stdout: -1, stderr: errR, tty: -1}, nil
}

// spawnTTY starts the peer on a fresh pseudo-terminal: the slave is its
// stdin, stdout and stderr and its controlling terminal. The init keeps
// the master (output) and a duplicate of it (input, closed at host EOF
// without hanging the terminal up).
func spawnTTY(path string, s launch.Spec) (peer, error) {
	master, slave, err := openPTY(*s.TTY)
	if err != nil {
		return peer{}, err
	}
	in, err := unix.FcntlInt(uintptr(master), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		unix.Close(master)
		unix.Close(slave)
		return peer{}, fmt.Errorf("%w: dup: %w", ErrSpawn, err)
	}
	growPipe(1)
	pidfd := -1
	pid, err := syscall.ForkExec(path, s.Argv, &syscall.ProcAttr{
		Dir:   s.Cwd,
		Env:   s.Environ(),
		Files: []uintptr{uintptr(slave), uintptr(slave), uintptr(slave)},
		Sys:   ttyAttr(&pidfd),
	})
	unix.Close(slave)
	if err != nil {
		unix.Close(master)
		unix.Close(in)
		return peer{}, classifyExec(err)
	}
	return peer{pid: pid, pidfd: pidfd, stdin: in, stdout: master, stderr: -1, tty: master}, nil
}

func pipes(ps ...*[2]int) error {
	for i, p := range ps {
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			for _, q := range ps[:i] {
				unix.Close(q[0])
				unix.Close(q[1])
			}
			return fmt.Errorf("%w: pipe: %w", ErrSpawn, err)
		}
	}
	return nil
}

// pipeSize is what the init asks for on every pipe its output crosses: the
// default 64 KiB holds only 16 of the 4 KiB writes a typical peer makes,
// so each splice would move a few pages and every side would wake far more
// often. 1 MiB is the default pipe-max-size, allowed to any user.
const pipeSize = 1 << 20

// growPipe enlarges a pipe to pipeSize. It never shrinks one (the host may
// have made fd 1 larger already), and failure (not a pipe, per-user
// limits) just keeps the size it has.
func growPipe(fd int) {
	if n, err := unix.FcntlInt(uintptr(fd), unix.F_GETPIPE_SZ, 0); err != nil || n >= pipeSize {
		return
	}
	unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, pipeSize)
}

func classifyExec(err error) error {
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.EACCES),
		errors.Is(err, unix.ENOEXEC), errors.Is(err, unix.ENOTDIR),
		errors.Is(err, unix.EISDIR), errors.Is(err, unix.ELOOP),
		errors.Is(err, unix.ENAMETOOLONG), errors.Is(err, unix.EPERM):
		return fmt.Errorf("%w: %w", launch.ErrNotExecutable, err)
	}
	return fmt.Errorf("%w: %w", ErrSpawn, err)
}

func isDir(p string) bool {
	var st unix.Stat_t
	return unix.Stat(p, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// lookPath resolves argv[0] in the launch's own env and cwd, never the
// init's (launch.LookPath); any failure is ErrNotExecutable.
func lookPath(name, cwd string, env map[string]string) (string, error) {
	search, ok := env["PATH"]
	if !ok {
		search = launch.DefaultPath
	}
	p, err := launch.LookPath(name, search, cwd)
	if err != nil {
		return "", launch.ErrNotExecutable
	}
	return p, nil
}

// spawnScoped runs spawn, when scope is set or cgroupFD > 0 on a thread
// of its own that first moves itself alone into the peer's pids cgroup
// (writing "0", itself, to the tasks file cgroupFD) and confines itself
// to its abstract unix sockets (Landlock): the peer forks from that
// thread and inherits both, and the thread ends with the spawn (its
// goroutine exits locked), so no code of the init ever runs inside the
// domain or counts against the peer's pids limit. A locked thread asks
// the runtime's template thread for new threads, so none is born there.
// A kernel without the scope runs the peer without it, as everywhere
// else; any other failure spawns nothing.
func spawnScoped(scope bool, cgroupFD int, spawn func() (peer, error)) (peer, error) {
	if !scope && cgroupFD <= 0 {
		return spawn()
	}
	type result struct {
		p   peer
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with this goroutine
		if cgroupFD > 0 {
			// Used once: the init keeps no handle on the peer's cgroup.
			_, err := unix.Write(cgroupFD, []byte("0"))
			unix.Close(cgroupFD)
			if err != nil {
				done <- result{err: fmt.Errorf("%w: peer cgroup: %v", ErrSpawn, err)}
				return
			}
		}
		if scope {
			if err := landlock.ScopeAbstractUnix(); err != nil && !errors.Is(err, landlock.ErrUnavailable) {
				done <- result{err: fmt.Errorf("%w: landlock: %v", ErrSpawn, err)}
				return
			}
		}
		p, err := spawn()
		done <- result{p, err}
	}()
	r := <-done
	return r.p, r.err
}
