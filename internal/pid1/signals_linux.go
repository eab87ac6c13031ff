package pid1

import (
	"os"
	"os/signal"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// signals are the channels the event loop listens on.
type signals struct {
	chld chan os.Signal
	stop chan os.Signal
}

// catchSignals must run before anything is spawned. SIGTERM/SIGINT/SIGHUP
// are forwarded; SIGCHLD, which drives the reaper, is caught after the
// spawn (catchChildren).
//
// The rest are the signals whose kill(2) the Go runtime turns into an exit
// or a goroutine dump (the runtime's _SigThrow, _SigPanic and _SigKill
// classes; SIGBUS, SIGFPE and SIGSEGV only when sent, a real fault still
// panics): the peer has our uid and could crash PID 1 with them, which
// kills the session and prints runtime internals. A peer must still start
// with default dispositions (an ignored signal is inherited across exec).
// Signals the runtime already drops when nobody asked for them (SIGUSR1,
// SIGPIPE, real-time signals...) are left alone.
//
// Catching a signal the runtime can be asked to notify (SIGQUIT, SIGABRT,
// the stop signals, SIGCHLD) costs two thread handoffs: the runtime
// updates a signal mask on a thread of its own (see docs/loki-init.md).
// SIGQUIT and SIGABRT are instead given back their default action, which
// the kernel never takes for a PID namespace's init: it drops them from
// any sender (only SIGKILL and SIGSTOP from an ancestor namespace get
// through), and the peer inherits the default. The other runtime-fatal
// signals cost no handoff and are taken into a channel nobody reads.
// Only the stop signals must be caught before the handshake: uncaught, one
// would end the init with exit code 2, a code the host would take for the
// peer's.
func catchSignals() signals {
	s := signals{chld: make(chan os.Signal, 1), stop: make(chan os.Signal, 4)}
	signal.Notify(s.stop, unix.SIGTERM, unix.SIGINT, unix.SIGHUP)
	signal.Notify(make(chan os.Signal, 1), fatalSignals...)
	if defaultAction(unix.SIGQUIT, unix.SIGABRT) != nil {
		signal.Notify(make(chan os.Signal, 1), unix.SIGQUIT, unix.SIGABRT)
	}
	return s
}

// catchChildren catches SIGCHLD, on a goroutine of its own so that the
// loop is free while the runtime hands the mask change between threads,
// and then asks for a sweep: a child that ended before the catch sent a
// signal nobody heard.
func (s signals) catchChildren(sweep chan<- struct{}) {
	go func() {
		signal.Notify(s.chld, unix.SIGCHLD)
		select {
		case sweep <- struct{}{}:
		default:
		}
	}()
}

// fatalSignals are the signals a peer's kill(2) would crash the runtime
// with and that the runtime catches without a handoff (see catchSignals).
var fatalSignals = []os.Signal{unix.SIGILL, unix.SIGTRAP, unix.SIGBUS,
	unix.SIGFPE, unix.SIGSEGV, unix.SIGSTKFLT, unix.SIGSYS}

// defaultAction sets the disposition of sigs to SIG_DFL with rt_sigaction
// itself, behind the runtime's back: the runtime still counts them as its
// own (it installed its handler at start), so os/signal would not change
// them again, and a child it forks resets them to SIG_DFL as before.
func defaultAction(sigs ...unix.Signal) error {
	// struct sigaction zeroed (larger than any arch's): SIG_DFL, no
	// flags, no restorer, an empty mask.
	var act [8]uint64
	for _, s := range sigs {
		_, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(s), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
		if e != 0 {
			return e
		}
	}
	return nil
}

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
