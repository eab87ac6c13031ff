//go:build linux

package pid1test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/lease"
	"github.com/loki-sh/loki/internal/pid1"
	"github.com/loki-sh/loki/internal/testutil"
)

// DefaultRenewEvery keeps test handshakes short.
const DefaultRenewEvery = 100 * time.Millisecond

// flagDuration is the value of the duration flag name in flags, or def.
func flagDuration(flags []string, name string, def time.Duration) time.Duration {
	for i, f := range flags {
		v, ok := "", false
		switch {
		case f == name && i+1 < len(flags):
			v, ok = flags[i+1], true
		case strings.HasPrefix(f, name+"="):
			v, ok = strings.TrimPrefix(f, name+"="), true
		}
		if d, err := time.ParseDuration(v); ok && err == nil {
			return d
		}
	}
	return def
}

// Config describes one run of loki-init as PID 1.
type Config struct {
	// Binary is the loki-init executable (testutil.Binary(t, "loki-init")).
	Binary string
	// Flags go before the control dir, e.g. {"-lease-duration", "2s"}.
	Flags []string
	// Setup is a shell snippet run as PID 1 (root, in the new mount
	// namespace, /proc already mounted) before the init is exec'd, e.g. to
	// bind-mount the control dir read-only. $CONTROL holds its path.
	Setup string
	// Wrap is put between the setup shell and the binary, e.g. a setpriv
	// command line that drops capabilities; it must exec its arguments.
	Wrap []string
	// ControlDir defaults to a fresh 0700 temporary directory.
	ControlDir string
	// Spec is encoded as the prelude; Prelude, when set, is sent instead
	// (raw bytes, for malformed-input tests).
	Spec    *launch.Spec
	Prelude []byte
	// Stdin is what follows the prelude. Stdin is closed after it unless
	// KeepStdinOpen (then CloseStdin or the cleanup closes it).
	Stdin         io.Reader
	KeepStdinOpen bool
	// Stdout and Stderr receive the init's output; by default it is
	// captured into Result. StdoutFile, when set, is given to the init as
	// its fd 1 directly (e.g. a pipe whose reader a test closes).
	Stdout, Stderr io.Writer
	StdoutFile     *os.File
	// RenewEvery is the host's renewal cadence; NoRenew never renews
	// (the lease file gets one value before the init starts, which must
	// not count).
	RenewEvery time.Duration
	NoRenew    bool
}

// Result is how a session ended.
type Result struct {
	Code     int // exit code, or -1 when killed by a signal / timed out
	Signal   syscall.Signal
	TimedOut bool
	Stdout   []byte
	Stderr   []byte
	Elapsed  time.Duration
}

// Session is one running loki-init.
type Session struct {
	t       testing.TB
	cfg     Config
	cmd     *exec.Cmd
	start   time.Time
	stdinW  *os.File
	stdout  bytes.Buffer
	stderr  bytes.Buffer
	control string
	ns      string

	mu        sync.Mutex
	renewals  []time.Time
	stopRenew chan struct{}
	renewDone chan struct{}
	writer    *lease.Writer
	closeOnce sync.Once

	waitOnce sync.Once
	waitErr  error
	waited   chan struct{}
}

// setupScript makes mounts private, gives the namespace its own /proc,
// runs the caller's setup and execs the init command line ("$@").
const setupScript = `set -e
mount --make-rprivate /
mount -t proc proc /proc
%s
exec "$@"`

// Start runs the init as PID 1 of a new PID and mount namespace. It needs
// root and PID namespaces (skips, or fails under CI, otherwise).
func Start(t testing.TB, cfg Config) *Session {
	t.Helper()
	testutil.RequireRoot(t)
	testutil.RequirePIDNamespace(t)
	s := &Session{t: t, cfg: cfg, control: cfg.ControlDir, stopRenew: make(chan struct{}),
		renewDone: make(chan struct{}), waited: make(chan struct{})}
	if s.control == "" {
		s.control = t.TempDir()
	}
	if err := os.Chmod(s.control, 0o700); err != nil {
		t.Fatalf("control dir: %v", err)
	}
	prelude := s.prelude()
	w, err := lease.NewWriter(s.control)
	if err != nil {
		t.Fatalf("lease writer: %v", err)
	}
	s.cmd = s.command()
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s.stdinW = stdinW
	s.cmd.Stdin = stdinR
	s.start = time.Now()
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start init: %v", err)
	}
	stdinR.Close()
	if ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", s.cmd.Process.Pid)); err == nil {
		s.ns = ns
	}
	s.writer = w
	go s.renew(w)
	go s.feed(prelude)
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.waited)
	}()
	t.Cleanup(s.cleanup)
	return s
}

func (s *Session) prelude() []byte {
	if s.cfg.Prelude != nil {
		return s.cfg.Prelude
	}
	if s.cfg.Spec == nil {
		return nil
	}
	b, err := launch.Encode(*s.cfg.Spec)
	if err != nil {
		s.t.Fatalf("encode prelude: %v", err)
	}
	return b
}

func (s *Session) command() *exec.Cmd {
	args := []string{"-c", fmt.Sprintf(setupScript, s.cfg.Setup), "loki-init-setup"}
	args = append(args, s.cfg.Wrap...)
	args = append(args, s.cfg.Binary)
	args = append(args, s.cfg.Flags...)
	args = append(args, s.control)
	cmd := exec.Command("/bin/sh", args...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "CONTROL=" + s.control}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS}
	cmd.Stdout, cmd.Stderr = &s.stdout, &s.stderr
	if s.cfg.Stdout != nil {
		cmd.Stdout = s.cfg.Stdout
	}
	if s.cfg.Stderr != nil {
		cmd.Stderr = s.cfg.Stderr
	}
	if s.cfg.StdoutFile != nil {
		cmd.Stdout = s.cfg.StdoutFile
	}
	return cmd
}

func (s *Session) renew(w *lease.Writer) {
	defer close(s.renewDone)
	if s.cfg.NoRenew {
		return
	}
	every := s.cfg.RenewEvery
	if every <= 0 {
		every = DefaultRenewEvery
	}
	// loki-supervise's schedule as it runs when the init's baseline read
	// goes unnoticed (watching, with no notification to come): every poll
	// interval while the init starts, then every RenewEvery. With the
	// defaults that is a renewal every 100 ms throughout, so a test can
	// count renewals to know the init is past its first one.
	sched := lease.NewSchedule(lease.Timing{
		Duration: flagDuration(s.cfg.Flags, "-lease-duration", pid1.DefaultLeaseDuration),
		Renew:    every,
		Poll:     flagDuration(s.cfg.Flags, "-poll-interval", pid1.DefaultPollInterval),
	}, time.Now(), true)
	stop := make(chan struct{})
	go func() {
		select {
		case <-s.stopRenew:
		case <-s.waited:
		}
		close(stop)
	}()
	sched.Run(stop, nil, nil, func() {
		if err := w.Renew(); err == nil {
			s.mu.Lock()
			s.renewals = append(s.renewals, time.Now())
			s.mu.Unlock()
		}
	})
}

func (s *Session) feed(prelude []byte) {
	defer func() {
		if !s.cfg.KeepStdinOpen {
			s.CloseStdin()
		}
	}()
	if len(prelude) > 0 {
		if _, err := s.stdinW.Write(prelude); err != nil {
			return
		}
	}
	if s.cfg.Stdin != nil {
		io.Copy(s.stdinW, s.cfg.Stdin)
	}
}

// CloseStdin closes the host's end of the init's stdin (EOF for the peer).
func (s *Session) CloseStdin() { s.closeOnce.Do(func() { s.stdinW.Close() }) }

// StopRenewing stops the renewer and returns the time of the last renewal
// (zero if there was none).
func (s *Session) StopRenewing() time.Time {
	select {
	case <-s.stopRenew:
	default:
		close(s.stopRenew)
	}
	<-s.renewDone
	return s.LastRenewal()
}

// LastRenewal is the time the last renewal completed.
func (s *Session) LastRenewal() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.renewals) == 0 {
		return time.Time{}
	}
	return s.renewals[len(s.renewals)-1]
}

// Renewals returns how many renewals the host made.
func (s *Session) Renewals() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.renewals)
}

// ControlDir is the directory holding the lease.
func (s *Session) ControlDir() string { return s.control }

// PID is the host pid of the namespace's PID 1.
func (s *Session) PID() int { return s.cmd.Process.Pid }

// Namespace is the PID namespace's identity ("pid:[inode]").
func (s *Session) Namespace() string { return s.ns }

// Started is when the init was started.
func (s *Session) Started() time.Time { return s.start }

// Signal sends sig to the init from outside the namespace.
func (s *Session) Signal(sig syscall.Signal) error {
	select {
	case <-s.waited:
		return errors.New("init already exited")
	default:
	}
	return syscall.Kill(s.cmd.Process.Pid, sig)
}

// Done is closed once the init has exited and been waited for.
func (s *Session) Done() <-chan struct{} { return s.waited }

// Wait waits up to timeout for the init to exit. On timeout it fails the
// test and kills the namespace.
func (s *Session) Wait(timeout time.Duration) Result {
	s.t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var r Result
	select {
	case <-s.waited:
	case <-timer.C:
		r.TimedOut = true
		s.t.Errorf("loki-init did not exit within %v", timeout)
		s.kill()
		<-s.waited
	}
	r.Elapsed = time.Since(s.start)
	r.Stdout, r.Stderr = s.stdout.Bytes(), s.stderr.Bytes()
	r.Code = -1
	if st, ok := s.cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		if st.Signaled() {
			r.Signal = st.Signal()
		} else {
			r.Code = st.ExitStatus()
		}
	}
	return r
}

func (s *Session) kill() {
	select {
	case <-s.waited:
	default:
		// The PID 1 this test started: its death ends the namespace.
		syscall.Kill(s.cmd.Process.Pid, syscall.SIGKILL)
	}
}

func (s *Session) cleanup() {
	s.CloseStdin()
	s.kill()
	select {
	case <-s.waited:
	case <-time.After(30 * time.Second):
		s.t.Errorf("loki-init (pid %d) could not be reaped", s.cmd.Process.Pid)
	}
	select {
	case <-s.stopRenew:
	default:
		close(s.stopRenew)
	}
	// The renewer writes temp files into the control dir, which may be a
	// t.TempDir: it must be done before the test's RemoveAll runs.
	select {
	case <-s.renewDone:
	case <-time.After(30 * time.Second):
		s.t.Errorf("lease renewer did not stop")
	}
	s.writer.Close()
}
