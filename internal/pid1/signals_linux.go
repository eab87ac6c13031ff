package pid1

import (
	"os"
	"os/signal"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// signals are the channels the event loop listens on.
type signals struct {
	chld chan os.Signal
	stop chan os.Signal
	// guarded is closed once SIGCHLD and the signals that would kill the
	// runtime are caught; the peer (the only child, and the only sender of
	// those) must not start before.
	guarded <-chan struct{}
}

// catchSignals must run before anything is spawned. SIGCHLD drives the
// reaper; SIGTERM/SIGINT/SIGHUP are forwarded.
//
// The rest are the signals whose kill(2) the Go runtime turns into an exit
// or a goroutine dump (the runtime's _SigThrow, _SigPanic and _SigKill
// classes; SIGBUS, SIGFPE and SIGSEGV only when sent, a real fault still
// panics): the peer has our uid and could crash PID 1 with them, which
// kills the session and prints runtime internals. Taking them into a
// channel nobody reads makes them no-ops, while a peer still starts with
// default dispositions (ignoring them would be inherited across exec).
// Signals the runtime already drops when nobody asked for them (SIGUSR1,
// SIGPIPE, real-time signals...) are left alone: each one caught costs a
// round trip to the runtime's signal thread.
//
// Catching a signal the runtime can be asked to notify costs two thread
// handoffs (the runtime updates a signal mask on a thread of its own; see
// docs/loki-init.md). Only SIGTERM/SIGINT/SIGHUP are caught on
// the start-up path, since an uncaught one would end the init with exit
// code 2, a code the host would take for the peer's. The rest run on a
// goroutine of their own, in parallel with the lease handshake: SIGCHLD
// matters only once there is a child.
func catchSignals() signals {
	s := signals{chld: make(chan os.Signal, 1), stop: make(chan os.Signal, 4)}
	guarded := make(chan struct{})
	s.guarded = guarded
	go func() {
		signal.Notify(s.chld, unix.SIGCHLD)
		signal.Notify(make(chan os.Signal, 1), fatalSignals...)
		close(guarded)
	}()
	signal.Notify(s.stop, unix.SIGTERM, unix.SIGINT, unix.SIGHUP)
	return s
}

// fatalSignals are the signals a peer's kill(2) would crash the runtime
// with (see catchSignals).
var fatalSignals = []os.Signal{unix.SIGQUIT, unix.SIGILL, unix.SIGTRAP,
	unix.SIGABRT, unix.SIGBUS, unix.SIGFPE, unix.SIGSEGV, unix.SIGSTKFLT,
	unix.SIGSYS}

// signalSession delivers sig once to every member of the peer's session:
// to the peer's process group in one call and, when /proc is this
// namespace's own, to each member of the session's other groups (a shell
// with job control puts jobs in groups of their own). A member of the
// peer's group is not signalled twice: a second SIGTERM arriving while a
// shell runs its trap runs the trap again.
func signalSession(sid int, sig unix.Signal) {
	unix.Kill(-sid, sig)
	if self, err := os.Readlink("/proc/self"); err != nil || self != "1" {
		return // a foreign /proc: its pids are not ours to signal
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 1 {
			continue
		}
		if pgid, s := groupOf(pid); s == sid && pgid != sid {
			unix.Kill(pid, sig)
		}
	}
}

// groupOf reads the process group and session ids from /proc/PID/stat
// (fields after the last ')': state ppid pgrp session); -1, -1 for a
// zombie or a process that is gone.
func groupOf(pid int) (pgid, sid int) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1, -1
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return -1, -1
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 4 || f[0] == "Z" {
		return -1, -1
	}
	pgid, err1 := strconv.Atoi(f[2])
	sid, err2 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil {
		return -1, -1
	}
	return pgid, sid
}

// killAll ends every process of the namespace but the init itself.
func killAll() { unix.Kill(-1, unix.SIGKILL) }
