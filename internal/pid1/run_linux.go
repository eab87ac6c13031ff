package pid1

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/lease"
	"github.com/loki-sh/loki/internal/pid1/facts"
	"github.com/loki-sh/loki/internal/reap"
	"github.com/loki-sh/loki/internal/session/seccomp"
)

// Run is loki-init. It returns the outcome to exit with (its cause, when
// there is one, is the refusal line to print); the caller must exit at once.
func Run(cfg Config) error {
	cfg = cfg.withDefaults()
	if unix.Getpid() != 1 {
		return refuse(StageInitialization, ErrNotPID1)
	}
	sig := catchSignals()
	// Before anything else exists: the peer has our uid, and a dumpable
	// PID 1 could be ptraced or have /proc/1/environ read. Never exec after
	// this (exec may reset dumpability).
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return refuse(StageInitialization, ErrProtect)
	}
	if cfg.Seccomp {
		if err := seccomp.Install(); err != nil {
			return refuse(StageInitialization, ErrProtect)
		}
	}
	closeInherited()
	if cfg.ControlDir == "" {
		return refuse(StageInitialization, ErrUsage)
	}
	threads := noThreads
	if cfg.PeerCgroupFD <= 0 {
		threads = reserveThreads(spareThreads)
	}
	l := newLoop(cfg, sig)
	l.threads = threads
	warmDecoder()
	defer l.watch.stop()
	return l.told(l.run())
}

// warmDecoder decodes a sample prelude while the init waits for the host's
// first renewal: encoding/json's first decode of a type builds its caches
// and touches code for the first time, which the real prelude would
// otherwise wait for.
func warmDecoder() {
	launch.Parse([]byte(`{"argv":["/"],"cwd":"/","env":{"A":"b"}}`))
}

// procs is the init's GOMAXPROCS: one P for a goroutine blocked in a
// system call (a stdin forwarder, output into a full pipe), one for
// everything else (see launch).
var procs = 2

// tidyAfter is how long after the spawn the init returns the launch's
// memory to the kernel.
const tidyAfter = 100 * time.Millisecond

// tidy hands the launch's garbage back and leaves procs Ps. Going
// through one P first drops the other Ps' caches, which otherwise kept
// 1.5-2 MiB of the launch's pages resident in half of the runs
// (TestLargePreludeMemoryIsReturned).
func tidy() {
	runtime.GOMAXPROCS(1)
	runtime.GOMAXPROCS(procs)
	debug.FreeOSMemory()
}

// closeInherited marks every descriptor above stderr close-on-exec, so a
// descriptor the host leaked into the init never reaches the peer.
func closeInherited() {
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
		}
	}
}

type preludeResult struct {
	body []byte
	err  error
}

// loop is the init's single event loop: every decision is taken here, on
// one goroutine, from events the helpers send (lease notifications, timers,
// signals, the prelude reader, the forwarders). A nil channel is an event
// that cannot happen in the current stage.
type loop struct {
	cfg    Config
	stage  Stage
	sig    signals
	g      *guard
	gone   <-chan struct{}
	watch  watch
	reaper *reap.Reaper
	redo   chan struct{} // a sweep used its whole batch
	exited chan struct{} // the peer ended (its pidfd), before SIGCHLD says so
	// threads is closed once the spare threads exist (threads.go).
	threads <-chan struct{}

	prelude  chan preludeResult
	fwd      chan forwarded
	peer     peer
	open     int       // output forwarders still running
	ended    time.Time // when the peer's exit was collected
	heldC    <-chan time.Time
	eofC     <-chan time.Time
	graceC   <-chan time.Time
	tidyC    <-chan time.Time // time to hand the launch's garbage back
	direct   bool             // the peer has the host's own stdio (Config.StdinFD)
	heldPoll *time.Ticker     // direct output still held after the peer exited
	stopSig  unix.Signal

	facts    int  // the host's facts socket (facts_linux.go), -1: none
	eofEnded bool // the stdin-EOF rule ended an idle peer

	wroteAtEOF int64 // sessionWrites when host stdin reached EOF (direct stdio)
	wroteOK    bool
}

// Armed is the first lease taken ahead of Run (Arm): the watch on the
// control dir and the baseline read after it.
type Armed struct {
	dir      string
	duration time.Duration
	watch    watch
	w        *lease.Watcher
}

// Arm does what Run does first with the lease, now: it arms the watch,
// then reads the value present as a baseline only. The namespace stage
// calls it before it confines the process, which is already the init
// (PID 1, the same process, no exec): a host that renews on that read
// (lease.WatchReads) does so as soon as it renews at all, not a round
// trip after Run's read. The baseline is older, so the lease's window
// counts from earlier: never longer.
func Arm(cfg Config) *Armed {
	cfg = cfg.withDefaults()
	a := &Armed{dir: cfg.ControlDir, duration: cfg.LeaseDuration, watch: watchDir(cfg.ControlDir)}
	a.w = lease.NewWatcher(filepath.Join(cfg.ControlDir, lease.FileName), cfg.LeaseDuration, time.Now())
	return a
}

// first is the watch and the baseline: cfg.Armed's when it was taken for
// this control dir and lease duration, else taken now.
func first(cfg Config) (watch, *lease.Watcher) {
	if a := cfg.Armed; a != nil {
		if a.dir == cfg.ControlDir && a.duration == cfg.LeaseDuration {
			return a.watch, a.w
		}
		if a.watch.f != nil {
			a.watch.f.Close()
		}
	}
	// The watch comes first: a host renews as soon as it sees the baseline
	// read, and a renewal landing between that read and the watch would
	// otherwise go unnoticed until the half-window check.
	w := watchDir(cfg.ControlDir)
	// The value present now is only a baseline: a stale lease left by a
	// dead owner must never launch a payload.
	return w, lease.NewWatcher(filepath.Join(cfg.ControlDir, lease.FileName), cfg.LeaseDuration, time.Now())
}

func newLoop(cfg Config, sig signals) *loop {
	l := &loop{cfg: cfg, sig: sig, reaper: reap.New(), redo: make(chan struct{}, 1), facts: -1}
	l.stage = StageFirstLease
	var w *lease.Watcher
	l.watch, w = first(cfg)
	now := time.Now()
	l.g = newGuard(w, cfg.LeaseDuration, cfg.PollInterval, l.watch.ok(), now)
	l.watch.start(func() { l.g.notified(time.Now()) })
	l.gone = l.watch.gone
	l.stage = StageInitialRenewal
	return l
}

func (l *loop) run() error {
	for {
		var err error
		select {
		case <-l.g.events:
			err = l.leased(l.g.onEvent(time.Now()))
		case <-l.g.timer.C():
			err = l.leased(l.g.onTimer(time.Now()))
		case <-l.g.pollC:
			err = l.leased(l.g.observe(time.Now()))
			l.resize() // no notifications: a resize is polled too
		case <-l.watch.resize:
			l.resize()
		case <-l.gone:
			l.gone = nil
			l.g.lost()
		case s := <-l.sig.stop:
			err = l.stop(s.(unix.Signal))
		case <-l.sig.chld:
			l.sweep()
		case <-l.redo:
			l.sweep()
		case <-l.exited:
			l.exited = nil
			l.reaper.CheckPeer()
		case r := <-l.prelude:
			err = l.launch(r)
		case f := <-l.fwd:
			err = l.forwarded(f)
		case <-l.heldC:
			// Something the peer left behind still holds its output: the
			// run cannot be called complete, and exiting kills the holder.
			err = refuse(StageSupervision, ErrOutputHeld)
		case <-l.eofC:
			err = l.inputDone()
		case <-l.graceC:
			killAll()
			err = shutdownCode(int(l.stopSig))
		case <-l.heldTick():
			// settle re-checks below
		case <-l.tidyC:
			l.tidyC = nil
			tidy()
		}
		if err == nil && l.stage == StageSupervision {
			err = l.settle()
		}
		if err != nil {
			return err
		}
	}
}

// leased applies a lease observation: expiry ends the run at any stage; the
// first renewal opens launch input.
func (l *loop) leased(renewed bool, err error) error {
	if err != nil {
		return expired()
	}
	if renewed && l.stage == StageInitialRenewal {
		l.stage = StageLaunchInput
		// A host writes the prelude as it starts the init, so it is
		// usually all there by now: read it on the loop, with no handoff
		// to a reading goroutine. Whatever is still to come is read on
		// one, so the lease is watched while a slow host trickles it in.
		p := new(preludeRead)
		if r, done := p.advance(false); done {
			return l.launch(r)
		}
		l.prelude = make(chan preludeResult, 1)
		go func() {
			r, _ := p.advance(true)
			l.prelude <- r
		}()
	}
	return nil
}

// preludeRead is the launch prelude read from fd 0 so far: the header,
// then the body. Reads are sized to what is still missing, so no byte
// meant for the peer is consumed.
type preludeRead struct {
	hdr  [launch.HeaderSize]byte
	body []byte // nil until the header is complete
	n    int    // bytes of the current part read
}

// advance reads the prelude on: until it is complete or fails (done), or,
// with wait false, until fd 0 has nothing ready (a zero-timeout poll
// before every read, so the loop never blocks).
func (p *preludeRead) advance(wait bool) (r preludeResult, done bool) {
	for {
		part := p.hdr[:]
		if p.body != nil {
			part = p.body
		}
		if p.n == len(part) {
			if p.body != nil {
				return preludeResult{body: p.body}, true
			}
			n, err := launch.ParseLength(p.hdr)
			if err != nil {
				return preludeResult{err: err}, true
			}
			p.body, p.n = make([]byte, n), 0
			continue
		}
		if !wait && !pollNow(0, unix.POLLIN) {
			return preludeResult{}, false
		}
		k, err := readSome(0, part[p.n:])
		if err != nil || k == 0 {
			return preludeResult{err: launch.ErrTruncated}, true
		}
		p.n += k
	}
}

// launch validates the prelude and spawns the peer. As in the reference, a
// body that is not JSON fails at launch-input and a JSON value that cannot
// be launched fails at peer-spawn.
func (l *loop) launch(r preludeResult) error {
	l.prelude = nil
	if r.err != nil {
		return refuse(StageLaunchInput, r.err)
	}
	spec, err := launch.Parse(r.body)
	if errors.Is(err, launch.ErrSyntax) {
		return refuse(StageLaunchInput, err)
	}
	l.stage = StagePeerSpawn
	if err != nil {
		return refuse(StagePeerSpawn, err)
	}
	<-l.threads
	p, err := spawnScoped(l.cfg.ScopeAbstractUnix, l.cfg.PeerCgroupFD, func() (peer, error) {
		return spawn(spec, l.cfg.StdinFD, l.cfg.StderrDirect)
	})
	if err != nil {
		return refuse(StagePeerSpawn, err)
	}
	l.peer = p
	l.reaper.SetPeer(p.pid)
	l.exited = make(chan struct{}, 1)
	watchExit(p.pidfd, l.exited)
	l.sig.catchChildren(l.redo)
	l.stage = StageSupervision
	l.fwd = make(chan forwarded, 3)
	if l.cfg.StdinFD > 0 {
		l.direct = true
		watchDirect(l.cfg.StdinFD, outputs(l.cfg.StderrDirect), l.fwd)
	} else if p.stdin < 0 && p.tty < 0 {
		// The peer reads the init's fd 0 itself (inheritStdin): its
		// writer's hang-up is host stdin's EOF.
		watchDirect(0, nil, l.fwd)
	} else {
		go func() {
			forward(streamIn, p.stdin, 0, l.fwd)
		}()
	}
	if l.direct {
		// The peer writes to the host itself; a stderr that is not
		// handed over is forwarded as usual.
		l.open = 0
		if p.stderr >= 0 {
			l.open = 1
			go forward(streamErr, 2, p.stderr, l.fwd)
		}
	} else if p.tty >= 0 {
		// One stream: the terminal's output, stdout and stderr mixed as
		// the peer wrote them. A resize the host made while the peer
		// started is applied now; later ones arrive by notification.
		l.open = 1
		l.resize()
		go forwardTTY(1, p.tty, l.fwd)
	} else {
		l.open = 2
		go forward(streamOut, 1, p.stdout, l.fwd)
		go forward(streamErr, 2, p.stderr, l.fwd)
	}
	// The prelude (up to 1 MiB, with the env's secrets) is garbage now:
	// its memory goes back once the peer is under way (a collection and a
	// scavenge now would delay a short peer's exit), so an idle init stays
	// small.
	r.body, spec = nil, launch.Spec{}
	l.tidyC = time.After(tidyAfter)
	// At least two Ps, at once: a host-stdin forwarder sits in a
	// blocking poll or splice (the hang-up watch waits in the poller,
	// direct_linux.go, unless epoll refused stdin), and a goroutine in a
	// system call keeps its P until sysmon retakes it (20 µs to 10 ms later, by
	// sysmon's backoff); with one P, the output forwarder and the loop,
	// woken by the poller, waited for that retake, and an ACP round trip
	// cost 200-500 µs instead of 30. More than two are trimmed with the
	// launch's memory (tidy): a change stops the world, twice when it
	// goes through one P, which here ran while a short peer ran and
	// exited, and delayed its reap.
	if runtime.GOMAXPROCS(0) < procs {
		runtime.GOMAXPROCS(procs)
	}
	// Once the peer runs and its output is under way: the host learns
	// the peer's pid, and this connection carries the end.
	if l.facts = dialFacts(l.cfg.ControlDir); l.facts >= 0 && !sendFact(l.facts, facts.PeerLine(p.pid)+"\n") {
		unix.Close(l.facts)
		l.facts = -1
	}
	return nil
}

func (l *loop) forwarded(f forwarded) error {
	if f.s == streamIn {
		// Close the peer's stdin so it sees EOF too. A write error means
		// the peer closed its stdin, which is normal after a single-shot
		// answer, and is not an input EOF.
		if l.peer.stdin >= 0 {
			unix.Close(l.peer.stdin)
		}
		if f.eof && l.ended.IsZero() && !l.cfg.WaitAfterEOF {
			l.eofC = time.After(CompletionWindow)
			outMeter.markEOF()
			errMeter.markEOF()
			if l.direct {
				l.wroteAtEOF, l.wroteOK = sessionWrites(l.cfg.StderrDirect)
			}
		}
		return nil
	}
	if f.err != nil {
		// Output that cannot be delivered must never look like success.
		return refuse(StageSupervision, ErrOutputLost)
	}
	l.open--
	return nil
}

// settle applies the completion rule after every event of the supervision
// stage: once the peer's exit is known and both outputs are drained, exit
// with the peer's outcome; start the held-output clock at the peer's exit.
func (l *loop) settle() error {
	st, ok := l.reaper.Peer()
	if !ok {
		return nil
	}
	if l.ended.IsZero() {
		l.ended = time.Now()
		l.heldC = time.After(CompletionWindow)
		l.eofC = nil
	}
	if l.open > 0 {
		return nil
	}
	if l.direct {
		// Output went straight to the host: lost when its reader is
		// gone, complete once nothing left in the namespace holds it.
		if outputGone(l.cfg.StderrDirect) {
			return refuse(StageSupervision, ErrOutputLost)
		}
		if outputHeld(l.cfg.StderrDirect) {
			if l.heldPoll == nil {
				l.heldPoll = time.NewTicker(heldPollEvery)
			}
			return nil
		}
	} else if hostBacklog() && time.Since(l.ended) < drainWindow {
		// The forwarders are done, but the host has not taken all of it
		// from fd 1 and 2 yet. A runtime may drop what its pipes still
		// hold once PID 1 exits (containerd 1.6 does: docs/cluster.md),
		// so wait for the reader, as long as it keeps up.
		if l.heldPoll == nil {
			l.heldPoll = time.NewTicker(heldPollEvery)
		}
		return nil
	}
	return peerOutcome(st, l.stopSig)
}

// drainWindow bounds the wait for the host to read what the forwarders
// left in fd 1 and 2 (pipes only); it ends before CompletionWindow, whose
// expiry means held output.
const drainWindow = CompletionWindow / 2

// hostBacklog reports whether fd 1 or 2 is a pipe still holding bytes its
// reader has not taken. Only a pipe: FIONREAD on a file is its size left.
func hostBacklog() bool {
	for _, fd := range []int{1, 2} {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO && pending(fd) {
			return true
		}
	}
	return false
}

// heldPollEvery is how often held direct output is re-checked after the
// peer exited (within the completion window).
const heldPollEvery = 20 * time.Millisecond

// inputDone runs a completion window after host stdin reached EOF with the
// peer still running: the host's end of input ends a single-shot session.
// The peer is asked directly first, because a backlog of orphans may hide
// an exit (and a nonzero code) the bounded sweeps have not reached yet.
// A peer that sat idle through the window (an agent that ignores EOF) ends
// with 0, as in the reference. One that was still writing has its output
// cut by the end: that must not look like success, so it is 125 with the
// eof-cut-output line.
func (l *loop) inputDone() error {
	l.eofC = nil
	if _, ok := l.reaper.CheckPeer(); ok {
		return nil // settle takes it from here
	}
	if l.direct {
		// The peer writes to the host itself: whether it was still
		// writing is told by the namespace's write counters.
		if w, ok := sessionWrites(l.cfg.StderrDirect); !ok || !l.wroteOK || w != l.wroteAtEOF {
			return refuse(StageSupervision, ErrEOFCut)
		}
	}
	if outMeter.movedSinceEOF() || errMeter.movedSinceEOF() || pending(l.peer.stdout) || pending(l.peer.stderr) {
		return refuse(StageSupervision, ErrEOFCut)
	}
	l.eofEnded = true
	return exitcode.Exited(0)
}

func (l *loop) heldTick() <-chan time.Time {
	if l.heldPoll == nil {
		return nil
	}
	return l.heldPoll.C
}

// resize applies the host's latest window size to the peer's terminal (a
// no-op without one); the kernel signals SIGWINCH when it changed.
func (l *loop) resize() {
	if l.peer.tty <= 0 {
		return
	}
	if ws, ok := readWinsize(l.cfg.ControlDir); ok {
		setWinsize(l.peer.tty, ws)
	}
}

// pending reports bytes the peer wrote that no forwarder has moved yet.
func pending(fd int) bool {
	if fd < 0 {
		return false
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCINQ) // FIONREAD
	return err == nil && n > 0
}

func (l *loop) sweep() {
	if _, more := l.reaper.Sweep(); more {
		select {
		case l.redo <- struct{}{}:
		default:
		}
	}
}

// stop forwards SIGTERM/SIGINT/SIGHUP to the peer's session and starts the
// grace period; before a peer exists there is nothing to wait for.
func (l *loop) stop(s unix.Signal) error {
	if l.stopSig == 0 {
		l.stopSig = s
	}
	if l.stage != StageSupervision {
		return shutdownCode(int(s))
	}
	signalSession(l.peer.pid, s)
	if l.graceC == nil {
		l.graceC = time.After(l.cfg.Grace)
	}
	return nil
}
