//go:build unix

package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/pid1/facts"
	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/status"
)

// outcome is what Run learns of a session's course, for the status
// stream's start and end events and the summary line.
type outcome struct {
	rec                 *status.Recorder
	t0                  time.Time
	ran                 time.Time // the backend started (zero: it never did)
	exitAt              time.Duration
	bytesIn             atomic.Int64
	direct              bool         // the peer read the client's own stdin
	eofAt               atomic.Int64 // since t0, +1 ns; 0: host stdin's EOF not seen
	rule                EOFRule
	waited              bool
	exit                Exit
	killedBy, forwarded syscall.Signal
	cut                 eofCut
	told                initFacts     // what the init said (package facts)
	exited              chan struct{} // closed once the session's process ended
	exitOnce            sync.Once
	startDone           chan struct{} // closed once start was written (nil: not begun)
}

func newOutcome(rec *status.Recorder) *outcome {
	return &outcome{rec: rec, t0: time.Now(), exited: make(chan struct{}), told: initFacts{Told: facts.New()}}
}

func (o *outcome) ended() { o.exitOnce.Do(func() { close(o.exited) }) }

func (o *outcome) stdinEOF() { o.eofAt.CompareAndSwap(0, int64(time.Since(o.t0))+1) }

// watchHangup records the client's hang-up of a stdin the peer reads
// itself (direct stdio), where the relay cannot see its EOF.
func (o *outcome) watchHangup(stdin *os.File) {
	o.direct = true
	// Only for a stream: the poll wakes at every write to stdin.
	if !o.rec.Streams() || o.rule != EOFEnd {
		return
	}
	go func() {
		<-hangup(stdin)
		o.stdinEOF()
	}()
}

// waitedFor records how the started process ended.
func (o *outcome) waitedFor(exit Exit, killedBy, forwarded syscall.Signal) {
	o.waited, o.exit, o.killedBy, o.forwarded = true, exit, killedBy, forwarded
	o.exitAt = time.Since(o.t0)
	o.ended()
}

// startWait bounds how long start waits for the init to name the peer:
// it does so right after the spawn; an init that does not (an older one)
// gets its start event this much later, without the peer's pid.
const startWait = time.Second

// started writes the start event once the backend has started: at once,
// or, with an init that talks (ft non-nil), once it named the peer, so
// the event has the peer's pid as the host sees it.
func (o *outcome) started(cfg Config, caps Capabilities, id string, proc Process, ft *factsListener) {
	o.ran = time.Now()
	if o.rec == nil {
		return
	}
	s := o.startEvent(cfg, caps, id, proc)
	if ft == nil {
		o.rec.Start(s)
		return
	}
	o.startDone = make(chan struct{})
	go func() {
		defer close(o.startDone)
		ft.waitPeer(o.exited, startWait)
		told := ft.snapshot()
		if s.PeerPID == 0 {
			s.PeerPID = told.peerPID
		}
		if s.InitPID == 0 {
			s.InitPID = told.initPID
		}
		o.rec.Start(s)
	}()
}

// startEvent is the start event's content.
func (o *outcome) startEvent(cfg Config, caps Capabilities, id string, proc Process) status.Start {
	p := cfg.Confine
	s := status.Start{
		Session: id,
		Backend: cfg.Backend.Name(),
		UserNS:  "host",
		UID:     os.Geteuid(),
		GID:     os.Getegid(),
		Policy: status.Policy{
			FS:       string(p.FS),
			Hidden:   p.Hide,
			Network:  string(p.Net()),
			Allow:    p.Allow,
			Syscalls: caps.Syscalls,
			Limits: status.Limits{
				PidsMax:   max(p.Resources.Pids(), 0),
				MemoryMax: p.Resources.MemoryMax,
			},
		},
		Cannot: map[status.Kind]string{},
	}
	if !caps.Init {
		s.Policy.Limits.PidsMax = 0 // no cgroup: none asks for no limit
	}
	if c := p.Resources.CPU; c != nil && c.Period > 0 {
		s.Policy.Limits.CPUMax = float64(c.Quota) / float64(c.Period)
	}
	if s.Policy.FS == "" { // the backend's default
		s.Policy.FS = string(confine.FSHost)
		if caps.Init {
			s.Policy.FS = string(confine.FSConfined)
		}
	}
	if s.Policy.FS == string(confine.FSConfined) {
		s.Policy.Writable = append([]string{cfg.Peer.Cwd}, p.Write...)
		s.Policy.ReadOnly = append([]string{"/"}, p.Protect...)
	} else {
		s.Policy.Writable = []string{"/"}
	}
	if caps.PrivateUserNS && p.PrivateUserNS() && os.Geteuid() == 0 {
		r := confine.PrivateRange()
		s.UserNS, s.UID, s.GID = "private", int(r.UID), int(r.GID)
	} else if u := p.User; u != nil {
		s.UID, s.GID = int(u.UID), int(u.GID)
	}
	if pp, ok := proc.(interface{ InitPID() int }); ok {
		s.InitPID = pp.InitPID()
	}
	if pp, ok := proc.(interface{ PeerPID() int }); ok {
		s.PeerPID = pp.PeerPID()
	}
	observes := map[status.Kind]bool{}
	for _, k := range caps.Observes {
		observes[k] = true
	}
	var unobserved map[status.Kind]string
	if pp, ok := proc.(interface{ Unobserved() map[status.Kind]string }); ok {
		unobserved = pp.Unobserved()
	}
	for _, k := range status.Kinds {
		switch {
		case observes[k] && k == status.Egress && len(p.Allow) == 0:
			s.Cannot[k] = "no --allow-host: there is no egress proxy to refuse"
		case observes[k] && unobserved[k] != "":
			s.Cannot[k] = unobserved[k]
		case observes[k]:
			s.Observes = append(s.Observes, k)
		default:
			s.Cannot[k] = cannotObserve(k, cfg.Backend.Name())
		}
	}
	return s
}

// cannotObserve says why a kind is not reported by backend.
func cannotObserve(k status.Kind, backend string) string {
	switch k {
	case status.Write, status.Read, status.Exec:
		return "the kernel refuses these with EACCES/EROFS and reports them nowhere the supervisor reads yet (Landlock audit records are not read)"
	case status.Connect:
		return "refused connections are not logged by the kernel here"
	case status.Syscall:
		switch backend {
		case "oci":
			// The runtime could pass a listener (linux.seccomp.listenerPath),
			// but loki-init's own copy of the policy answers first.
			return "loki-init's own copy of the syscall filter answers with the errno, which outranks the runtime's listener (SECCOMP_RET_ERRNO before USER_NOTIF)"
		case "docker":
			return "the engine installs the syscall filter and hands its listener to nobody"
		case "none":
			return "the peer runs under no syscall policy of loki's"
		}
		return "the seccomp filter returns errors without logging them"
	}
	return "the " + backend + " backend does not report it"
}

// limits records the cgroup limits the session ran into.
func (o *outcome) limits(limit error) {
	var l *confine.LimitError
	for _, e := range unwrapAll(limit) {
		if errors.As(e, &l) {
			kind := status.Pids
			if errors.Is(l, confine.ErrMemoryLimit) {
				kind = status.Memory
			}
			o.rec.Refused(status.Refusal{What: kind, Count: l.Count})
			continue
		}
		switch {
		case errors.Is(e, confine.ErrMemoryLimit):
			o.rec.Refused(status.Refusal{What: status.Memory})
		case errors.Is(e, confine.ErrPidsLimit):
			o.rec.Refused(status.Refusal{What: status.Pids})
		}
	}
}

// unwrapAll splits an errors.Join of limits.
func unwrapAll(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// statusWait bounds the wait for a slow status reader at the end.
const statusWait = time.Second

// finish writes the end event and the summary line.
func (o *outcome) finish(cfg Config, err error) {
	o.ended()
	if o.startDone != nil {
		<-o.startDone
	}
	if o.waited {
		o.limits(o.exit.Limit)
	}
	o.rec.End(o.end(err), statusWait)
	if s := o.rec.Summary(); s != "" && !cfg.Quiet {
		fmt.Fprintf(cfg.Notes, "loki-supervise: %s\n", s)
	}
}

// end is the end event: the code, and the one reason it has.
func (o *outcome) end(err error) status.End {
	code := exitcode.Code(err)
	t := o.told
	e := status.End{Code: code, Duration: time.Since(o.t0).Seconds(), BytesIn: o.bytesIn.Load(), BytesOut: -1}
	if t.Ended {
		e.BytesOut = t.End.Out
	}
	if o.direct {
		e.BytesIn = -1
	}
	if !o.ran.IsZero() {
		e.Ran = time.Since(o.ran).Seconds()
	}
	x := o.exit
	eof := o.eofAt.Load()
	cutByEOF := o.rule == EOFEnd && eof > 0 && o.exitAt-time.Duration(eof-1) >= eofWindow-20*time.Millisecond
	switch {
	case !o.waited || x.Err != nil || errors.Is(err, exitcode.ErrNotLaunched):
		e.Reason = status.RefusedStart
	case o.killedBy != 0 || o.forwarded != 0:
		e.Reason, e.Signal = status.SupervisorSignal, int(max(o.killedBy, o.forwarded))
	case errors.Is(x.Limit, confine.ErrMemoryLimit):
		e.Reason = status.LimitMemory
	case errors.Is(x.Limit, confine.ErrPidsLimit):
		e.Reason = status.LimitPids
	case o.cut.ended && x.Signal == int(syscall.SIGKILL) && o.cut.writing:
		e.Reason = status.EOFCutOutput
	case o.cut.ended && x.Signal == int(syscall.SIGKILL):
		e.Reason = status.EOFEnded
	case x.Escaped != nil:
		e.Reason = status.Refused
	case x.Signal != 0:
		e.Reason, e.Signal = status.PeerSignal, x.Signal
	case x.Code == exitcode.Code(exitcode.LeaseExpired(nil)):
		e.Reason = status.LeaseExpired
	case code != x.Code:
		e.Reason = status.InputLost // a clean run whose stdin relay failed
	case t.Ended && factReason(t.End) != "":
		e.Reason = factReason(t.End)
		if e.Reason == status.PeerSignal {
			e.Signal = t.End.Signal
		}
	case cutByEOF && code == 0:
		e.Reason = status.EOFEnded
	case cutByEOF && code == exitcode.Code(exitcode.Refused(nil)):
		e.Reason = status.EOFCutOutput
	case code == exitcode.Code(exitcode.Refused(nil)):
		e.Reason = status.Refused
	default:
		e.Reason = status.PeerExit
	}
	return e
}

// factReason is the reason the init's end fact gives ("": none it can
// give alone, such as a forwarded signal's end, which the supervisor
// knows itself).
func factReason(e facts.End) status.Reason {
	switch e.Class {
	case facts.PeerSignaled:
		if e.Signal > 0 {
			return status.PeerSignal
		}
	case facts.OutputLost:
		return status.OutputLost
	case facts.OutputHeld:
		return status.OutputHeld
	case facts.EOFCut:
		return status.EOFCutOutput
	case facts.EOFEnded:
		return status.EOFEnded
	case facts.Exit:
		return status.PeerExit
	}
	return ""
}

// sessionID names a session in its stream: its dir's name, or for a
// backend without one the supervisor's pid.
func sessionID(dir string) string {
	if dir == "" {
		return fmt.Sprintf("direct-%d", os.Getpid())
	}
	return filepath.Base(dir)
}
