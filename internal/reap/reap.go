package reap

import "errors"

// DefaultBatch is how many children one sweep collects at most.
const DefaultBatch = 64

// ErrUnsupported is returned where the platform has no wait4 semantics we
// rely on.
var ErrUnsupported = errors.New("reap: unsupported on this platform")

// Status is how a child ended: Exited with Code, or killed by Signal.
type Status struct {
	Exited bool
	Code   int // exit code when Exited
	Signal int // signal number when !Exited
}

// waiter is the one system call the reaper depends on, so the bookkeeping
// can be tested without real children.
type waiter interface {
	// wait collects one child: pid > 0 with its status, pid 0 when children
	// exist but none has exited, or done when there is no child at all.
	wait(pid int) (got int, st Status, done bool, err error)
}

// Reaper collects exited children and remembers the peer's status.
// It is not safe for concurrent use: the init's event loop owns it.
type Reaper struct {
	w     waiter
	batch int
	peer  int
	have  bool
	st    Status
	total int
}

// SetPeer registers the child whose status must be kept.
func (r *Reaper) SetPeer(pid int) { r.peer = pid }

// Peer returns the peer's status once it has been collected.
func (r *Reaper) Peer() (Status, bool) { return r.st, r.have }

// Reaped returns how many children were collected so far.
func (r *Reaper) Reaped() int { return r.total }

func (r *Reaper) record(pid int, st Status) {
	r.total++
	if pid == r.peer && r.peer > 0 && !r.have {
		r.st, r.have = st, true
	}
}

// Sweep collects up to the batch size of exited children without blocking.
// more is true when the batch was used up: the caller should sweep again
// soon (after attending to its other events), because zombies may remain.
func (r *Reaper) Sweep() (n int, more bool) {
	for n < r.batch {
		pid, st, done, err := r.w.wait(-1)
		if err != nil || done || pid <= 0 {
			return n, false
		}
		r.record(pid, st)
		n++
	}
	return n, true
}

// CheckPeer asks about the peer directly, bypassing any backlog of orphans
// a bounded sweep has not reached yet. It reports the peer's status when
// it has ended (collected now or earlier).
func (r *Reaper) CheckPeer() (Status, bool) {
	if r.have || r.peer <= 0 {
		return r.st, r.have
	}
	pid, st, _, err := r.w.wait(r.peer)
	if err == nil && pid == r.peer {
		r.record(pid, st)
	}
	return r.st, r.have
}
