package initproc

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/launch"
)

// defaultPath is searched when the launch env has no PATH, as execvp does.
const defaultPath = "/bin:/usr/bin"

// peer is the spawned agent and the init's ends of its three pipes.
type peer struct {
	pid    int
	stdin  int // write end
	stdout int // read end
	stderr int // read end
}

// spawn starts the peer in its own session (so it and everything it starts
// can be signalled as one), with fresh pipes as its stdio. Nothing but
// those three descriptors crosses into it: every other descriptor of the
// init is close-on-exec.
func spawn(s launch.Spec) (peer, error) {
	if !isDir(s.Cwd) {
		return peer{}, ErrCwd
	}
	path, err := lookPath(s.Argv[0], s.Cwd, s.Env)
	if err != nil {
		return peer{}, err
	}
	var in, out, errp [2]int
	if err := pipes(&in, &out, &errp); err != nil {
		return peer{}, err
	}
	growPipe(out[1])
	growPipe(errp[1])
	pid, err := syscall.ForkExec(path, s.Argv, &syscall.ProcAttr{
		Dir:   s.Cwd,
		Env:   s.Environ(),
		Files: []uintptr{uintptr(in[0]), uintptr(out[1]), uintptr(errp[1])},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	for _, fd := range []int{in[0], out[1], errp[1]} {
		unix.Close(fd)
	}
	if err != nil {
		for _, fd := range []int{in[1], out[0], errp[0]} {
			unix.Close(fd)
		}
		return peer{}, classifyExec(err)
	}
	return peer{pid: pid, stdin: in[1], stdout: out[0], stderr: errp[0]}, nil
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

// growPipe enlarges an output pipe so a fast writer needs fewer wakeups of
// the forwarder; failure (limits) just keeps the default size.
func growPipe(fd int) {
	unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, 1<<20)
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

// lookPath resolves argv[0] the way the peer's own environment would: a
// name with a slash is taken as is (relative to cwd), a bare name is looked
// up in the launch env's PATH, never in the init's.
func lookPath(name, cwd string, env map[string]string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if !executable(p) {
			return "", launch.ErrNotExecutable
		}
		return p, nil
	}
	search, ok := env["PATH"]
	if !ok {
		search = defaultPath
	}
	for _, dir := range filepath.SplitList(search) {
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		if p := filepath.Join(dir, name); executable(p) {
			return p, nil
		}
	}
	return "", launch.ErrNotExecutable
}

func executable(p string) bool {
	var st unix.Stat_t
	if unix.Stat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false
	}
	return unix.Access(p, unix.X_OK) == nil
}
