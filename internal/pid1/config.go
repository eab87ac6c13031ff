package pid1

import (
	"errors"
	"strconv"
	"time"

	"github.com/loki-sh/loki/internal/lease"
	"github.com/loki-sh/loki/internal/pid1/facts"
)

// Defaults equal those of the reference init.
const (
	DefaultLeaseDuration = lease.DefaultDuration
	DefaultPollInterval  = 100 * time.Millisecond
	DefaultGrace         = 10 * time.Second
	// CompletionWindow is how long output may stay held open after the
	// peer exited, and how long a peer may outlive host stdin EOF.
	CompletionWindow = time.Second
)

// Config is what loki-init is started with.
type Config struct {
	ControlDir    string
	LeaseDuration time.Duration
	// PollInterval is used only when inotify cannot report renewals.
	PollInterval time.Duration
	// Grace is how long the peer's session has to exit after a forwarded
	// SIGTERM/SIGINT/SIGHUP before everything is killed.
	Grace time.Duration
	// WaitAfterEOF turns off the reference's single-shot rule (host stdin
	// EOF with the peer still running 1 s later ends the session with 0):
	// the peer then runs until it exits, bounded only by the lease. For a
	// host that pipes one request in and wants the whole answer.
	WaitAfterEOF bool
	// StdinFD > 0: the host passed its client's own stdin as this
	// descriptor, and fd 1 is its client's own stdout (pipes or sockets);
	// the peer gets them as its stdio, with no forwarder (see
	// direct_linux.go). fd 0 then carries only the prelude.
	StdinFD int
	// StderrDirect (with StdinFD): fd 2 is handed to the peer as well;
	// otherwise the peer's stderr is forwarded to it as usual.
	StderrDirect bool
	// ScopeAbstractUnix keeps the peer to its own abstract unix sockets
	// (Landlock, where the kernel has the scope): the thread that forks
	// the peer takes the domain and ends with the spawn, so the init's
	// own threads stay outside it and can still read the peer's /proc.
	// Set by the namespace stage, or by -scope-abstract-unix where a
	// runtime started the init (oci, docker).
	ScopeAbstractUnix bool
	// Seccomp installs the session's syscall policy (package seccomp) on
	// every thread before anything else: the oci and docker backends ask
	// for it on top of the runtime's copy, whose library may not know
	// every syscall of the policy. The namespace stage installs it itself.
	Seccomp bool
	// PeerCgroupFD > 0: the host passed the tasks file of the peer's pids
	// cgroup (v1), opened by the host. The thread that forks the peer
	// moves itself there first, so the peer is born under the pids limit
	// and the init stays outside it, needing no spare threads. 0: the
	// init shares the peer's limit (a runtime placed it: oci, docker)
	// and starts spare threads (threads.go).
	PeerCgroupFD int
	// Armed is the watch and baseline lease Arm took ahead of Run (the
	// namespace stage's, before it confines), or nil: Run takes them.
	Armed *Armed
}

// Stage names the step the init is in; it appears in refusal lines.
type Stage string

// The stages, in order.
const (
	StageInitialization Stage = "initialization"
	StageFirstLease     Stage = "first-lease"
	StageInitialRenewal Stage = "initial-renewal"
	StageLaunchInput    Stage = "launch-input"
	StagePeerSpawn      Stage = "peer-spawn"
	StageSupervision    Stage = "supervision"
)

// Sentinel errors. Their text is the class printed in a refusal line, so it
// must stay a fixed word that never carries launch data.
var (
	ErrUnsupported = errors.New("unsupported-platform")
	ErrNotPID1     = errors.New("not-pid-1")
	ErrUsage       = errors.New("usage")
	ErrProtect     = errors.New("cannot-protect")
	ErrCwd         = errors.New("launch-cwd")
	ErrSpawn       = errors.New("spawn-failed")
	ErrOutputLost  = errors.New(facts.OutputLost)
	ErrOutputHeld  = errors.New(facts.OutputHeld)
	ErrEOFCut      = errors.New(facts.EOFCut)
	ErrPeerSignal  = errors.New(facts.PeerSignaled)
	ErrInternal    = errors.New("internal")
)

// Refusal is a failure at a stage. Its text is the protocol's refusal line
// (without the newline).
type Refusal struct {
	Stage Stage
	Err   error
	// Signal > 0 names the signal that killed the peer (peer-signaled),
	// after the class: the class stays the line's first word after the
	// stage, and the fact added is a number and its fixed name.
	Signal int
}

func (r *Refusal) Error() string {
	line := "ACP supervisor refused at " + string(r.Stage) + ": " + className(r.Err)
	if r.Signal > 0 {
		line += " by signal " + strconv.Itoa(r.Signal) + " (" + signalName(r.Signal) + ")"
	}
	return line
}

func (r *Refusal) Unwrap() error { return r.Err }

// className keeps only the sentinel's fixed text: wrapped context could
// carry launch data and must never be printed.
func className(err error) string {
	for _, s := range classes {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return ErrInternal.Error()
}

func (c Config) withDefaults() Config {
	if c.LeaseDuration <= 0 {
		c.LeaseDuration = DefaultLeaseDuration
	}
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.Grace < 0 {
		c.Grace = 0
	}
	return c
}
