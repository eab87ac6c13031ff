//go:build unix

package session

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/lease"
	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/egress"
	"github.com/loki-sh/loki/internal/session/status"
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
	// EOF is what host stdin's end does (EOFAuto: by the kind of stdin,
	// see eofRule); EOFWait is loki-init's -wait-after-eof.
	EOF EOFRule
	// TTY runs the peer on a pseudo-terminal inside the isolation; Stdin
	// must be the host terminal, which is in raw mode while the session
	// runs and restored when Run returns.
	TTY bool
	// Relay keeps the supervisor's stdin relay and loki-init's forwarders
	// even where the client's descriptors could be passed to the peer.
	Relay bool

	ControlRoot string // parent of the private session dirs; "" = DefaultControlRoot

	// Confine is what the peer may reach; the backend applies it or
	// refuses to start.
	Confine confine.Policy

	Stdin          *os.File // nil: the peer's stdin is at EOF at once
	Stdout, Stderr *os.File

	// Signals delivers SIGTERM/SIGINT/SIGHUP received by the supervisor;
	// nil means none are handled.
	Signals <-chan os.Signal
	// Notes receives short diagnostics (signals forwarded, renewal
	// failures); nil discards them. Never launch data.
	Notes io.Writer
	// Status records the session's status stream (package status): its
	// start, what was refused, its end. nil records nothing.
	Status *status.Recorder
	// Quiet leaves out the summary line of refusals at the end.
	Quiet bool
	// CheckCommand: the peer sees the host's files, so a command found
	// nowhere on them is refused before anything starts (CheckCommand).
	CheckCommand bool
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
	args := []string{
		"-lease-duration", c.LeaseDuration.String(),
		"-poll-interval", c.PollInterval.String(),
		"-grace", c.Grace.String(),
	}
	if c.EOF == EOFWait {
		args = append(args, "-wait-after-eof")
	}
	return args
}

// Run runs the session to its end. It returns nil for exit code 0 and an
// outcome of package exitcode otherwise (silent when the code is the
// session's own).
func Run(cfg Config) error {
	// Go proves once, at a process's first child, that pidfds work, by
	// starting and reaping a child of its own: begun now, that runs beside
	// the session's set-up instead of just before the backend's clone.
	go warmPidfd()
	cfg.defaults()
	o := newOutcome(cfg.Status)
	err := run(cfg, o)
	o.finish(cfg, err)
	return err
}

func run(cfg Config, o *outcome) error {
	if cfg.Backend == nil {
		return exitcode.Usage(errors.New("no isolation backend"))
	}
	cfg.EOF = cfg.eofRule()
	o.rule = cfg.EOF
	if !cfg.TTY {
		defer ignoreTTIN(cfg.Stdin)()
	}
	caps := cfg.Backend.Capabilities()
	if err := admit(cfg, caps); err != nil {
		return err
	}
	if err := cfg.Backend.Prepare(&cfg.Peer, &cfg.Confine); err != nil {
		return exitcode.NotLaunched(err)
	}
	if err := cfg.Validate(); err != nil {
		return exitcode.Usage(err)
	}
	if cfg.CheckCommand {
		if err := CheckCommand(cfg.Peer); err != nil {
			return err
		}
	}
	readerGID := initGroup(cfg.Confine, caps)
	if !caps.Init {
		return runDirect(cfg, caps, o)
	}
	var term *terminal
	if cfg.TTY {
		t, err := openTerminal(cfg.Stdin)
		if err != nil {
			return exitcode.Usage(err)
		}
		term = t
	}
	dirs, err := makeSessionDirs(cfg.ControlRoot)
	if err != nil {
		return exitcode.NotLaunched(err)
	}
	defer dirs.remove()
	if term != nil {
		// Resizes are watched before the first size is read, so none is
		// lost between the prelude and the init's first notification.
		defer watchResizes(term, dirs.control)()
		ws := term.size()
		cfg.Peer.TTY = &ws
		if err := term.makeRaw(); err != nil {
			return exitcode.NotLaunched(fmt.Errorf("host terminal: raw mode: %w", err))
		}
		defer term.restore()
		cfg.Notes = crlf{cfg.Notes}
	}
	writer, err := newLeaseWriter(dirs, readerGID)
	if err != nil {
		return exitcode.NotLaunched(fmt.Errorf("%w: first lease: %v", ErrControlDir, err))
	}
	defer writer.Close()
	// The init says how the run went on this socket (package facts).
	facts := listenFacts(dirs.control, readerGID)
	defer facts.close()
	if len(cfg.Confine.Allow) > 0 {
		cfg.Peer.Env = egress.PeerEnv(cfg.Peer.Env)
	}
	prelude, err := launch.Encode(cfg.Peer)
	if err != nil {
		return exitcode.Usage(fmt.Errorf("peer command: %w", err))
	}
	inR, inW, err := newStdinPipe(readerGID)
	if err != nil {
		return exitcode.NotLaunched(err)
	}
	stderr, stderrDone := cfg.Stderr, closedChan
	if term != nil {
		if stderr, stderrDone, err = crlfPipe(cfg.Stderr); err != nil {
			return exitcode.NotLaunched(err)
		}
	}
	// The client's own descriptors go to the peer where the backend can
	// pass them: no relay, no forwarder (loki-init watches them instead).
	initArgs, feedFrom, hostStdin := cfg.InitArgs(), cfg.Stdin, (*os.File)(nil)
	if fd := caps.DirectStdinFD; fd > 0 && term == nil && !cfg.Relay && directStdio(cfg.Stdin, cfg.Stdout) {
		initArgs = append(initArgs, "-stdin-fd", strconv.Itoa(fd))
		if directStdio(cfg.Stderr) {
			initArgs = append(initArgs, "-stderr-direct")
		}
		feedFrom, hostStdin = nil, cfg.Stdin
		o.watchHangup(cfg.Stdin)
		if readerGID >= 0 {
			shareFIFOs(readerGID, cfg.Stdin, cfg.Stdout, cfg.Stderr)
		}
	}
	// Watch for the init's first read of the lease before it can exist.
	reads, stopWatch := lease.WatchReads(dirs.control)
	proc, err := cfg.Backend.Start(Request{
		ControlDir:  dirs.control,
		ControlRoot: dirs.parent,
		Scratch:     dirs.scratch,
		InitArgs:    initArgs,
		HostStdin:   hostStdin,
		Peer:        cfg.Peer,
		Confine:     cfg.Confine,
		Stdin:       inR,
		Stdout:      cfg.Stdout,
		Stderr:      stderr,
		TTY:         cfg.TTY,
		Notes:       cfg.Notes,
		Status:      cfg.Status,
	})
	var hs *handshake
	if err == nil && !caps.CopiesStdin {
		hs = newHandshake(inR)
	}
	inR.Close()
	if stderr != cfg.Stderr {
		stderr.Close() // the started process holds its own copy
	}
	if err != nil {
		stopWatch()
		inW.Close()
		return exitcode.NotLaunched(err)
	}
	facts.serve(func() int { return initPID(proc) }, cfg.Status.Streams())
	stopRenewing := renewLoop(writer, cfg, reads, stopWatch)
	var gap time.Duration
	release := sync.OnceFunc(func() {
		gap = stopRenewing()
		// The listener is closed before its socket goes: the last
		// reference to a removed file frees it, a cost the close would
		// otherwise carry.
		dirs.releaseControl(func() error { facts.close(); return writer.Close() })
	})
	// The init's end line is its last act before it exits: it reads the
	// lease no more, so the renewals stop and the control dir goes while
	// the kernel still tears its namespaces down (its exit, not the line,
	// decides the code).
	go func() {
		select {
		case <-facts.ended():
			release()
		case <-o.exited:
		}
	}()
	fed := make(chan error, 1)
	go feed(inW, prelude, feedFrom, fed, hs, o)
	// After the feed and the renewals are under way: the start event
	// costs the session's start nothing.
	o.started(cfg, caps, sessionID(dirs.root), proc, facts)
	exit, killedBy, forwarded := waitWithSignals(proc, cfg)
	o.waitedFor(exit, killedBy, forwarded)
	o.told = facts.finish()
	release()
	proc.Close()
	drained(stderrDone)
	if hs != nil && !hs.read() && exit.Err == nil && killedBy == 0 && exit.Signal == 0 && !initsOwn(exit.Code) {
		return exitcode.NotLaunched(fmt.Errorf("%w: the init exited with code %d without reading the launch prelude, so the peer never ran (is --init a loki-init?)", ErrBackend, exit.Code))
	}
	if exit.Err == nil && killedBy == 0 && exit.Signal == 0 && exit.Code == exitcode.Code(exitcode.LeaseExpired(nil)) && gap >= cfg.LeaseDuration {
		// The init ended the session for want of a renewal this
		// supervisor did not make (it was stopped or starved): the
		// init's 124 is silent, so say it here.
		fmt.Fprintf(cfg.Notes, "loki-supervise: the lease expired: it was not renewed for %v (lease duration %v; was this supervisor stopped?), so the session was ended\n",
			gap.Round(time.Millisecond), cfg.LeaseDuration)
	}
	if exit.Limit != nil {
		// The limit is the fact: the init's line (the peer killed, its
		// output held) is what followed from it, and is not said too.
		fmt.Fprintf(cfg.Notes, "loki-supervise: %v (exit %d)\n", exit.Limit, exitcode.Code(decide(exit, killedBy, forwarded)))
	} else if o.told.Say != "" {
		// The init left its line to this supervisor (package facts).
		fmt.Fprintln(cfg.Notes, o.told.Say)
	}
	return withRelay(decide(exit, killedBy, forwarded), relayVerdict(fed), cfg.Notes)
}

// initPID is loki-init's pid as the host sees it, where the backend
// knows it (0: not known).
func initPID(proc Process) int {
	if p, ok := proc.(interface{ InitPID() int }); ok {
		return p.InitPID()
	}
	return 0
}

// initsOwn reports the codes a real loki-init exits with before it reads
// the prelude (124: no first renewal; 125: a refusal, with its line).
func initsOwn(code int) bool {
	return code == exitcode.Code(exitcode.LeaseExpired(nil)) || code == exitcode.Code(exitcode.Refused(nil))
}

// withRelay turns a clean session whose input relay failed into a failed
// one (125): the peer may have acted on truncated input.
func withRelay(decided, relayErr error, notes io.Writer) error {
	if relayErr == nil {
		return decided
	}
	fmt.Fprintf(notes, "loki-supervise: the session's stdin was cut short: %v\n", relayErr)
	if decided != nil {
		return decided
	}
	return exitcode.Refused(fmt.Errorf("stdin relay failed: %w", relayErr))
}

// runDirect is the lease-free path: the backend runs the peer itself, with
// the caller's stdio passed straight through.
func runDirect(cfg Config, caps Capabilities, o *outcome) error {
	stdin := cfg.Stdin
	if stdin == nil {
		null, err := os.Open(os.DevNull)
		if err != nil {
			return exitcode.NotLaunched(err)
		}
		defer null.Close()
		stdin = null
	}
	proc, err := cfg.Backend.Start(Request{Peer: cfg.Peer, Confine: cfg.Confine, Stdin: stdin, Stdout: cfg.Stdout, Stderr: cfg.Stderr, Status: cfg.Status})
	if err != nil {
		return exitcode.NotLaunched(err)
	}
	o.direct = true
	o.started(cfg, caps, sessionID(""), proc, nil)
	cut := &o.cut
	finished, cutDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(cutDone)
		if cfg.EOF == EOFEnd && cfg.Stdin != nil {
			cut.watch(proc, hangup(cfg.Stdin), finished)
		}
	}()
	exit, killedBy, forwarded := waitWithSignals(proc, cfg)
	close(finished)
	<-cutDone
	o.waitedFor(exit, killedBy, forwarded)
	proc.Close()
	if cut.ended && killedBy == 0 && exit.Signal == int(syscall.SIGKILL) && exit.Escaped == nil {
		// The single-shot rule ended the peer, as loki-init would have.
		if cut.writing {
			return exitcode.Refused(errEOFCut)
		}
		return nil
	}
	return decide(exit, killedBy, forwarded)
}

// errEOFCut is the line of a peer ended by the single-shot rule while it
// was still writing: loki-init's own refusal line, word for word.
var errEOFCut = errors.New("ACP supervisor refused at supervision: eof-cut-output")

// decide is the one place a session's outcome becomes an exit code.
// forwarded is the signal passed on to the session (0: none).
func decide(exit Exit, killedBy, forwarded syscall.Signal) error {
	switch {
	case exit.Err != nil:
		return exitcode.NotLaunched(fmt.Errorf("%w: %v", ErrBackend, exit.Err))
	case killedBy != 0:
		return exitcode.Signalled(int(killedBy),
			fmt.Errorf("session killed after %v did not end it in time", killedBy))
	case exit.Limit != nil:
		return limitOutcome(exit)
	case exit.Escaped != nil:
		return exitcode.Refused(exit.Escaped)
	case exit.Signal != 0 && forwarded != 0:
		// The direct peer died of a signal after one was passed on to
		// it: the shell's 128+N, as after a Ctrl-C anywhere else.
		return exitcode.Signalled(exit.Signal, fmt.Errorf("the peer was ended by %s after %s was forwarded to it",
			unix.SignalName(syscall.Signal(exit.Signal)), unix.SignalName(forwarded)))
	case exit.Signal == 0 && forwarded != 0 && exit.Code == exitcode.Code(exitcode.Refused(nil)):
		// loki-init's 125 after the signal this supervisor forwarded: its
		// own line says the peer was stopped by it (Contract 3 keeps the
		// init's code). The session's code is the shell's 128+N, what a
		// Ctrl-C gives everywhere else (130).
		return exitcode.Signalled(int(forwarded), nil)
	case exit.Signal != 0:
		// The init (or direct peer) died of a signal nobody here chose:
		// whatever it printed cannot be trusted as a complete run.
		return exitcode.Refused(fmt.Errorf("session ended by signal %d (%s)", exit.Signal, unix.SignalName(syscall.Signal(exit.Signal))))
	case exit.Code == 0:
		return nil
	default:
		return exitcode.Exited(exit.Code)
	}
}

// limitOutcome is the code of a session that ran into a cgroup limit
// (the note saying which is printed by Run): 137 after an OOM kill (128 +
// SIGKILL, as Docker reports it); after refused forks the session's own
// failure code, or 125 when it would have ended cleanly: a run that could
// not fork what it wanted is never a success.
func limitOutcome(exit Exit) error {
	switch {
	case errors.Is(exit.Limit, confine.ErrMemoryLimit):
		return exitcode.Signalled(int(syscall.SIGKILL), nil)
	case exit.Signal == 0 && exit.Code != 0:
		return exitcode.Exited(exit.Code)
	}
	return exitcode.Refused(nil)
}

// forwardNote is how long a forwarded signal may take to end the session
// before the supervisor says it is waiting.
const forwardNote = time.Second

// waitWithSignals waits for proc, forwarding the first termination signal
// and killing the session after StopTimeout or on a second signal. It
// returns the signal the kill was for and the one forwarded (0: none).
func waitWithSignals(proc Process, cfg Config) (Exit, syscall.Signal, syscall.Signal) {
	done := make(chan Exit, 1)
	go func() { done <- proc.Wait() }()
	var (
		forwarded syscall.Signal
		killedBy  syscall.Signal
		deadline  <-chan time.Time
		note      <-chan time.Time
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
			return exit, killedBy, forwarded
		case s := <-cfg.Signals:
			sig, _ := s.(syscall.Signal)
			if forwarded != 0 {
				fmt.Fprintf(cfg.Notes, "loki-supervise: second %v: killing the session\n", sig)
				kill(sig)
				continue
			}
			forwarded = sig
			if err := proc.Signal(s); err != nil {
				kill(sig)
				continue
			}
			deadline = time.After(cfg.StopTimeout)
			// Said only when the session did not end at once: a Ctrl-C
			// that ends it leaves the init's one line alone.
			note = time.After(forwardNote)
		case <-note:
			note = nil
			fmt.Fprintf(cfg.Notes, "loki-supervise: %v forwarded; the session is killed if it has not ended in %v\n", forwarded, cfg.StopTimeout-forwardNote)
		case <-deadline:
			kill(forwarded)
		}
	}
}

// renewLoop renews the lease until stop is called. reads (may be nil) fires
// when the init read the lease; only the first one is acted on, so renewal
// and observation never ping-pong. stopReads releases that watch. stop
// returns the longest time between two renewals (or the last one and the
// stop): at least the lease duration means the init may have expired for
// want of one.
func renewLoop(w *lease.Writer, cfg Config, reads <-chan struct{}, stopReads func()) (stop func() time.Duration) {
	quit := make(chan struct{})
	finished := make(chan struct{})
	r := renewer{w: w, notes: cfg.Notes, last: time.Now()}
	go func() {
		defer close(finished)
		defer stopReads()
		sched := lease.NewSchedule(lease.Timing{Duration: cfg.LeaseDuration, Renew: cfg.RenewInterval, Poll: cfg.PollInterval}, time.Now(), reads != nil)
		sched.Run(quit, reads, stopReads, r.renew)
	}()
	return func() time.Duration {
		close(quit)
		<-finished
		return max(r.maxGap, time.Since(r.last))
	}
}

// renewer renews and reports a failing renewal once per failure streak.
// It keeps the longest wait between renewals it made (a stopped or
// starved supervisor's).
type renewer struct {
	w       *lease.Writer
	notes   io.Writer
	failing bool
	last    time.Time
	maxGap  time.Duration
}

func (r *renewer) renew() {
	now := time.Now()
	r.maxGap = max(r.maxGap, now.Sub(r.last))
	err := r.w.Renew()
	if err == nil {
		r.last = now
	}
	if err != nil && !r.failing {
		fmt.Fprintf(r.notes, "loki-supervise: lease renewal failing: %v\n", err)
	}
	r.failing = err != nil
}

// warmPidfd makes the runtime run its one-time pidfd check now (a
// lookup of this process asks for a pidfd, which runs it).
func warmPidfd() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Release()
	}
}
