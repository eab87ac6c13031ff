package session

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/lease"
)

// Defaults for the supervisor-side timings.
const (
	DefaultPollInterval = 100 * time.Millisecond
	DefaultGrace        = 10 * time.Second
	DefaultStopTimeout  = 15 * time.Second
)

// Config describes one session.
type Config struct {
	Backend Backend
	Peer    launch.Spec

	LeaseDuration time.Duration // loki-init -lease-duration
	RenewInterval time.Duration // how often the supervisor renews
	PollInterval  time.Duration // loki-init -poll-interval
	Grace         time.Duration // loki-init -grace (its own TERM-to-KILL delay)
	StopTimeout   time.Duration // supervisor: forwarded signal to kill

	ControlRoot string // parent of the private session dirs; "" = DefaultControlRoot

	Stdin          *os.File // nil: the peer's stdin is at EOF at once
	Stdout, Stderr *os.File

	// Signals delivers SIGTERM/SIGINT/SIGHUP received by the supervisor;
	// nil means none are handled.
	Signals <-chan os.Signal
	// Notes receives short diagnostics (signals forwarded, renewal
	// failures); nil discards them. Never launch data.
	Notes io.Writer
}

func (c *Config) defaults() {
	if c.LeaseDuration <= 0 {
		c.LeaseDuration = lease.DefaultDuration
	}
	if c.RenewInterval <= 0 {
		c.RenewInterval = lease.DefaultRenew
	}
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.Grace <= 0 {
		c.Grace = DefaultGrace
	}
	if c.StopTimeout <= 0 {
		c.StopTimeout = DefaultStopTimeout
	}
	if c.Notes == nil {
		c.Notes = io.Discard
	}
}

// Validate checks what can be checked before anything is created.
func (c Config) Validate() error {
	if c.Backend == nil {
		return errors.New("no isolation backend")
	}
	if c.Stdout == nil || c.Stderr == nil {
		return errors.New("stdout and stderr are required")
	}
	if c.RenewInterval >= c.LeaseDuration && c.LeaseDuration > 0 {
		return fmt.Errorf("renew interval %v must be shorter than the lease duration %v", c.RenewInterval, c.LeaseDuration)
	}
	if err := c.Peer.Validate(); err != nil {
		return fmt.Errorf("peer command: %w", err)
	}
	return nil
}

// InitArgs returns loki-init's flags for this config (without CONTROL_DIR).
func (c Config) InitArgs() []string {
	return []string{
		"-lease-duration", c.LeaseDuration.String(),
		"-poll-interval", c.PollInterval.String(),
		"-grace", c.Grace.String(),
	}
}

// Run runs the session to its end. It returns nil for exit code 0 and an
// *exitcode.Error otherwise (silent when the code is the session's own).
func Run(cfg Config) error {
	cfg.defaults()
	if err := cfg.Validate(); err != nil {
		return exitcode.New(2, err)
	}
	if !cfg.Backend.NeedsInit() {
		return runDirect(cfg)
	}
	dirs, err := makeSessionDirs(cfg.ControlRoot)
	if err != nil {
		return exitcode.New(exitcode.NotLaunched, err)
	}
	defer dirs.remove()
	writer, err := lease.NewWriter(dirs.control)
	if err != nil {
		return exitcode.New(exitcode.NotLaunched, fmt.Errorf("%w: first lease: %v", ErrControlDir, err))
	}
	prelude, err := launch.Encode(cfg.Peer)
	if err != nil {
		return exitcode.New(2, fmt.Errorf("peer command: %w", err))
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return exitcode.New(exitcode.NotLaunched, err)
	}
	proc, err := cfg.Backend.Start(Request{
		ControlDir: dirs.control,
		InitArgs:   cfg.InitArgs(),
		Peer:       cfg.Peer,
		Stdin:      inR,
		Stdout:     cfg.Stdout,
		Stderr:     cfg.Stderr,
	})
	inR.Close()
	if err != nil {
		inW.Close()
		return exitcode.New(exitcode.NotLaunched, err)
	}
	stopRenewing := renewLoop(writer, cfg)
	go feed(inW, prelude, cfg.Stdin)
	exit, killedBy := waitWithSignals(proc, cfg)
	stopRenewing()
	proc.Close()
	return decide(exit, killedBy)
}

// runDirect is the lease-free path: the backend runs the peer itself, with
// the caller's stdio passed straight through.
func runDirect(cfg Config) error {
	stdin := cfg.Stdin
	if stdin == nil {
		null, err := os.Open(os.DevNull)
		if err != nil {
			return exitcode.New(exitcode.NotLaunched, err)
		}
		defer null.Close()
		stdin = null
	}
	proc, err := cfg.Backend.Start(Request{Peer: cfg.Peer, Stdin: stdin, Stdout: cfg.Stdout, Stderr: cfg.Stderr})
	if err != nil {
		return exitcode.New(exitcode.NotLaunched, err)
	}
	exit, killedBy := waitWithSignals(proc, cfg)
	proc.Close()
	return decide(exit, killedBy)
}

// decide is the one place a session's outcome becomes an exit code.
func decide(exit Exit, killedBy syscall.Signal) error {
	switch {
	case exit.Err != nil:
		return exitcode.New(exitcode.NotLaunched, fmt.Errorf("%w: %v", ErrBackend, exit.Err))
	case killedBy != 0:
		return exitcode.New(exitcode.SignalBase+int(killedBy),
			fmt.Errorf("session killed after %v did not end it in time", killedBy))
	case exit.Signal != 0:
		// The init (or direct peer) died of a signal nobody here chose:
		// whatever it printed cannot be trusted as a complete run.
		return exitcode.New(exitcode.Refused, fmt.Errorf("session ended by signal %d", exit.Signal))
	case exit.Code == 0:
		return nil
	default:
		return exitcode.Silent(exitcode.FromWait(exit.Code, 0))
	}
}

// feed writes the prelude and then relays stdin byte for byte; EOF on stdin
// closes the init's stdin.
func feed(w *os.File, prelude []byte, stdin *os.File) {
	defer w.Close()
	if _, err := w.Write(prelude); err != nil {
		return
	}
	if stdin == nil {
		return
	}
	io.Copy(w, stdin)
}

// waitWithSignals waits for proc, forwarding the first termination signal
// and killing the session after StopTimeout or on a second signal.
func waitWithSignals(proc Process, cfg Config) (Exit, syscall.Signal) {
	done := make(chan Exit, 1)
	go func() { done <- proc.Wait() }()
	var (
		forwarded syscall.Signal
		killedBy  syscall.Signal
		deadline  <-chan time.Time
	)
	kill := func(s syscall.Signal) {
		if killedBy == 0 {
			killedBy = s
			proc.Kill()
		}
	}
	for {
		select {
		case exit := <-done:
			return exit, killedBy
		case s := <-cfg.Signals:
			sig, _ := s.(syscall.Signal)
			if forwarded != 0 {
				fmt.Fprintf(cfg.Notes, "loki-supervise: second %v: killing the session\n", sig)
				kill(sig)
				continue
			}
			forwarded = sig
			fmt.Fprintf(cfg.Notes, "loki-supervise: %v forwarded; the session is killed if it has not ended in %v\n", sig, cfg.StopTimeout)
			if err := proc.Signal(s); err != nil {
				kill(sig)
				continue
			}
			deadline = time.After(cfg.StopTimeout)
		case <-deadline:
			kill(forwarded)
		}
	}
}

// renewLoop renews the lease until stop is called. The first renewals come
// fast (the init needs one it observed after it started before it reads the
// prelude, and waiting a whole renew interval would add that to every
// session's start-up); after that the normal interval applies.
func renewLoop(w *lease.Writer, cfg Config) (stop func()) {
	fast := cfg.PollInterval / 2
	if fast < 5*time.Millisecond {
		fast = 5 * time.Millisecond
	}
	if fast > cfg.RenewInterval {
		fast = cfg.RenewInterval
	}
	fastFor := min(2*time.Second, cfg.LeaseDuration/2)
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		start := time.Now()
		t := time.NewTimer(fast)
		defer t.Stop()
		failing := false
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			if err := w.Renew(); err != nil && !failing {
				failing = true
				fmt.Fprintf(cfg.Notes, "loki-supervise: lease renewal failing: %v\n", err)
			} else if err == nil {
				failing = false
			}
			next := cfg.RenewInterval
			if time.Since(start) < fastFor {
				next = fast
			}
			t.Reset(next)
		}
	}()
	return func() {
		close(quit)
		<-finished
	}
}
