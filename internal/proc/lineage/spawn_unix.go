//go:build unix

package lineage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/proc/procid"
)

// cgroupEnabled lets tests exercise the containment without a cgroup.
var cgroupEnabled = true

// Start launches c as a tracked runner (see the package doc). Its errors
// wrap ErrNotFound, ErrPermission or ErrLaunch; ExitCodeFor maps them.
func Start(c Command) (*Runner, error) {
	if len(c.Args) == 0 || c.Args[0] == "" {
		return nil, fmt.Errorf("%w: empty command", ErrLaunch)
	}
	if err := checkDir(c.Dir); err != nil {
		return nil, err
	}
	path, err := lookPath(c.Args[0], c.Env, c.Dir)
	if err != nil {
		return nil, err
	}
	src, treeWalk := newPlatformSource()
	if src == nil {
		return nil, fmt.Errorf("%w: %w", ErrLaunch, ErrUnsupported)
	}
	subreaper := becomeSubreaper()
	token, nonce := randomHex(16), randomHex(16)
	var cg *cgroup
	if cgroupEnabled {
		cg = newCgroup(token[:16])
	}
	// The keeper exists before the runner: there is no moment when the
	// supervisor could die leaving a runner nobody will end.
	cgDir := ""
	if cg != nil {
		cgDir = cg.dir
	}
	k := startKeeper(token, cgDir)
	r, start, err := spawn(c, src, path, token, nonce, cg)
	if err != nil && cg != nil {
		cg.remove() // clone3 into a cgroup can fail (EBUSY, old kernel): retry without
		cg = nil
		if !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrPermission) {
			r, start, err = spawn(c, src, path, token, nonce, nil)
		}
	}
	if err != nil {
		k.release()
		return nil, err
	}
	if cg != nil {
		cg.closeFD()
	}
	r.keeper = k
	r.tr = &tracker{
		src: src, self: os.Getpid(), subreaper: subreaper, treeWalk: treeWalk,
		leader: r.id, leaderStart: start, sid: r.id.PID(), token: token,
		members:  map[int]*member{r.id.PID(): {id: r.id, start: start}},
		rejected: map[int]uint64{}, dying: map[int]uint64{}, group: cg,
		// The runner may fork the moment it execs: open the window now.
		windowUntil: time.Now().Add(discoveryWindow),
	}
	return r, nil
}

// spawn starts the gate, records the identity, releases it and learns
// whether the exec succeeded.
func spawn(c Command, src source, path, token, nonce string, cg *cgroup) (*Runner, uint64, error) {
	exe, err := selfExecutable()
	if err != nil {
		return nil, 0, fmt.Errorf("%w: locating own executable: %w", ErrLaunch, err)
	}
	relR, relW, err := os.Pipe()
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrLaunch, err)
	}
	defer relW.Close()
	stR, stW, err := os.Pipe()
	if err != nil {
		relR.Close()
		return nil, 0, fmt.Errorf("%w: %w", ErrLaunch, err)
	}
	defer stR.Close()
	pidfd := -1
	cmd := &exec.Cmd{
		Path:        exe,
		Args:        append([]string{gateArg0, path}, c.Args...),
		Dir:         c.Dir,
		Env:         childEnv(c.Env, token, nonce),
		ExtraFiles:  []*os.File{relR, stW}, // releaseFD, statusFD
		SysProcAttr: sysProcAttr(&pidfd, cg),
	}
	if c.Landlock != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, c.Landlock) // rulesetFD
	}
	// Typed nil *os.File must not reach exec.Cmd's io.Reader/Writer fields.
	if c.Stdin != nil {
		cmd.Stdin = c.Stdin
	}
	if c.Stdout != nil {
		cmd.Stdout = c.Stdout
	}
	if c.Stderr != nil {
		cmd.Stderr = c.Stderr
	}
	err = cmd.Start()
	relR.Close()
	stW.Close()
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrLaunch, err)
	}
	r := &Runner{cmd: cmd, pidfd: pidfd, done: make(chan struct{})}
	abort := func(cause error) (*Runner, uint64, error) {
		_ = cmd.Process.Kill() // still our unreaped child, blocked at the gate
		_ = cmd.Wait()
		if pidfd >= 0 {
			closeFD(pidfd)
		}
		return nil, 0, cause
	}
	id, err := procid.Capture(cmd.Process.Pid)
	if err != nil {
		return abort(fmt.Errorf("%w: recording runner identity: %w", ErrLaunch, err))
	}
	if st, err := procid.Stat(id.PID()); err != nil || st.SID != id.PID() || st.PGID != id.PID() {
		return abort(fmt.Errorf("%w: runner is not a session leader", ErrLaunch))
	}
	// The start time survives exec: what we read at the gate is the runner's.
	st, err := src.stat(id.PID())
	if err != nil {
		return abort(fmt.Errorf("%w: reading runner start time: %w", ErrLaunch, err))
	}
	r.id = id
	if _, err := relW.Write(releaseMessage(nonce, c.Landlock != nil)); err != nil {
		return abort(fmt.Errorf("%w: releasing the exec gate: %w", ErrLaunch, err))
	}
	relW.Close()
	var msg [4]byte
	n, err := io.ReadFull(stR, msg[:])
	switch {
	case n == 0 && (err == io.EOF || err == nil):
		// EOF: the status pipe closed on exec, the runner is running.
	case n == 4:
		v := binary.BigEndian.Uint32(msg[:])
		errno := unix.Errno(v &^ restrictFailed)
		_ = cmd.Wait()
		if pidfd >= 0 {
			closeFD(pidfd)
		}
		if v&restrictFailed != 0 {
			return nil, 0, fmt.Errorf("%w: confining the runner (Landlock, capabilities, seccomp): %s", ErrLaunch, errno.Error())
		}
		return nil, 0, fmt.Errorf("%w: exec %s: %s", classifyExec(errno), filepath.Base(path), errno.Error())
	default:
		return abort(fmt.Errorf("%w: exec gate status: %v", ErrLaunch, err))
	}
	go r.wait()
	return r, st.start, nil
}

func closeFD(fd int) { _ = unix.Close(fd) }

// checkDir names a working directory the runner could not enter: the
// chdir fails in the child, and its error would otherwise blame the exec
// gate ("fork/exec /proc/self/exe: no such file or directory").
func checkDir(dir string) error {
	if dir == "" {
		return nil
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: working directory %s does not exist", ErrLaunch, dir)
	case err != nil:
		return fmt.Errorf("%w: working directory %s: %w", ErrLaunch, dir, err)
	case !fi.IsDir():
		return fmt.Errorf("%w: working directory %s is not a directory", ErrLaunch, dir)
	}
	return nil
}

// lookPath resolves name like execvp would (launch.LookPath), with the
// child's PATH, relative to the child's directory.
func lookPath(name string, env []string, dir string) (string, error) {
	path := launch.DefaultPath
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	p, err := launch.LookPath(name, path, dir)
	switch {
	case errors.Is(err, fs.ErrPermission):
		return "", fmt.Errorf("%w: %s", ErrPermission, name)
	case err != nil:
		return "", fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	return p, nil
}

func signalOf(ps *os.ProcessState) (int, bool) {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return 0, false
	}
	return int(ws.Signal()), true
}
