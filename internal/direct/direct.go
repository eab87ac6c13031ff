package direct

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/loki-sh/loki/internal/session"
)

// Name is the --isolation value of this backend.
const Name = "none"

// ErrNotFound reports a peer command that is not an executable on the
// peer's PATH.
var ErrNotFound = errors.New("peer command not found")

// Backend runs the peer directly.
type Backend struct{}

func (Backend) Name() string    { return Name }
func (Backend) NeedsInit() bool { return false }

// Start spawns the peer in a new session.
func (Backend) Start(req session.Request) (session.Process, error) {
	spec := req.Peer
	path, err := lookPath(spec.Argv[0], spec.Env["PATH"], spec.Cwd)
	if err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        spec.Argv,
		Dir:         spec.Cwd,
		Env:         spec.Environ(),
		Stdin:       req.Stdin,
		Stdout:      req.Stdout,
		Stderr:      req.Stderr,
		SysProcAttr: sysProcAttr(),
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", filepath.Base(spec.Argv[0]), err)
	}
	return &process{cmd: cmd}, nil
}

// lookPath resolves name on the peer's PATH, not the supervisor's.
func lookPath(name, path, cwd string) (string, error) {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(cwd, name)
		}
		if executable(name) {
			return name, nil
		}
		return "", fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		if p := filepath.Join(dir, name); executable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w on the session's PATH: %s", ErrNotFound, name)
}

func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

type process struct{ cmd *exec.Cmd }

func (p *process) Wait() session.Exit {
	err := p.cmd.Wait()
	// Whatever is left of the peer's group does not outlive the session.
	killGroup(p.cmd.Process.Pid)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return session.Exit{}
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return session.Exit{Signal: int(ws.Signal())}
		}
		return session.Exit{Code: ee.ExitCode()}
	default:
		return session.Exit{Code: -1, Err: err}
	}
}

func (p *process) Signal(sig os.Signal) error { return signalGroup(p.cmd.Process, sig) }
func (p *process) Kill() error                { return signalGroup(p.cmd.Process, syscall.SIGKILL) }
func (p *process) Close() error               { return nil }
