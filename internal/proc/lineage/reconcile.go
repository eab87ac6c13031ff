//go:build unix

package lineage

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/proc/procid"
)

// Reconcile stops every remaining member of the lineage with grace g and
// reports what it found (supervision.md, Reconciliation). It is meant for
// after the runner exited, or to stop a run; the runner itself is signalled
// too while alive but never listed in the outcome's pid lists.
//
// A process that is already dying (in do_exit, or with SIGKILL pending:
// killed together with the runner's group a moment ago) is no survivor: it
// is neither signalled nor counted as detected, and is waited for instead.
// Only one still there when the budget ends is reported.
func (r *Runner) Reconcile(grace time.Duration) Outcome {
	t := r.tr
	t.mu.Lock()
	defer t.mu.Unlock()
	out := EmptyOutcome()
	out.Checked = true
	rc := &reconciler{t: t, out: &out, rec: recorder{leader: t.leader.PID(), out: &out, sent: map[string]bool{}}}
	if err := rc.settle(); err != nil {
		return rc.fail(err)
	}
	deadline := time.Now().Add(budget(grace))
	termEnd := deadline.Add(-killPhase)
	// SIGTERM phase: every member once, while members remain.
	for time.Now().Before(termEnd) {
		alive, err := rc.observe()
		if err != nil {
			return rc.fail(err)
		}
		if len(rc.last) == 0 {
			break
		}
		rc.signal(alive, unix.SIGTERM)
		sleepUntil(pollInterval, termEnd)
	}
	// SIGKILL phase: kill whatever is seen, until quiet for the quiescence
	// period. The quiet timer may finish within the scheduling margin past
	// the deadline, and so may the teardown of members already dying (they
	// cannot run or fork any more), so a loaded host does not turn a stopped
	// lineage into an uncontained one; no live member seen past the deadline
	// is forgiven.
	quietSince := time.Now()
	for {
		alive, err := rc.observe()
		if err != nil {
			return rc.fail(err)
		}
		now := time.Now()
		if len(rc.last) > 0 {
			rc.signal(alive, unix.SIGKILL)
			quietSince = now
		} else if now.Sub(quietSince) >= quiescence {
			out.Quiescent = true
			break
		}
		if now.After(deadline) && (len(alive) > 0 || now.After(deadline.Add(schedulingMargin))) {
			break
		}
		time.Sleep(pollInterval)
	}
	rc.cgroupGuarantee()
	if rc.others(rc.last) {
		out.Detected = true // still there after the budget: a survivor
	}
	if len(rc.last) > 0 {
		out.Quiescent = false
	}
	out.RemainingPIDs = rc.rec.pids(rc.last)
	return out
}

// reconciler is the state of one Reconcile.
type reconciler struct {
	t    *tracker
	out  *Outcome
	rec  recorder
	last []member // the latest refresh, dying members included
}

func (rc *reconciler) fail(err error) Outcome {
	rc.out.Error = err.Error()
	rc.out.RemainingPIDs = rc.rec.pids(rc.last)
	return *rc.out
}

// observe refreshes the lineage, counts the members that are alive and not
// dying as detected, and returns those (the ones worth a signal).
func (rc *reconciler) observe() ([]member, error) {
	alive, err := rc.look()
	if err == nil {
		rc.rec.see(alive)
	}
	return alive, err
}

// look refreshes without counting anything.
func (rc *reconciler) look() ([]member, error) {
	ms, err := rc.t.refresh()
	if err != nil {
		return nil, err
	}
	rc.last = ms
	alive := make([]member, 0, len(ms))
	for _, m := range ms {
		if !rc.t.src.dying(m.id.PID()) {
			alive = append(alive, m)
		}
	}
	return alive, nil
}

// settle lets members that are already dying finish before anything is
// counted, bounded by the scheduling margin. Whenever a member other than
// the runner is present it looks at least twice, a poll apart: between
// dequeuing its fatal signal and entering do_exit a process shows neither
// mark, for a few microseconds.
func (rc *reconciler) settle() error {
	deadline := time.Now().Add(schedulingMargin)
	for first := true; ; first = false {
		alive, err := rc.look()
		if err != nil {
			return err
		}
		if !rc.others(rc.last) || (!first && len(alive) == len(rc.last)) || time.Now().After(deadline) {
			return nil
		}
		time.Sleep(pollInterval)
	}
}

func (rc *reconciler) signal(ms []member, sig unix.Signal) {
	for _, m := range ms {
		rc.rec.signal(m, sig)
	}
}

// others reports a member other than the runner.
func (rc *reconciler) others(ms []member) bool {
	for _, m := range ms {
		if m.id.PID() != rc.rec.leader {
			return true
		}
	}
	return false
}

// cgroupGuarantee empties the runner's cgroup. A cgroup still reported
// populated right after the lineage went quiet usually holds processes the
// kernel is still tearing down, so it is first waited for (bounded); only
// then is it killed whole. Detected is set only for processes actually
// found alive in it, or when the kernel cannot empty it.
func (rc *reconciler) cgroupGuarantee() {
	g := rc.t.group
	if g == nil || !g.populated() || g.waitEmpty(schedulingMargin) {
		return
	}
	alive, err := rc.observe() // adopts the cgroup's live processes
	if err != nil {
		rc.out.Error = err.Error()
	}
	rc.signal(alive, unix.SIGKILL) // by identity, so kill_sent names them
	empty := g.kill(schedulingMargin)
	if _, err := rc.look(); err == nil { // also reaps what we inherited
		empty = empty && len(rc.last) == 0
	}
	if !empty || g.populated() {
		rc.out.Detected = true
		rc.out.Quiescent = false
	}
}

// recorder keeps the outcome's lists: pids other than the runner, each once
// per signal.
type recorder struct {
	leader int
	out    *Outcome
	sent   map[string]bool // identity + signal
}

func (rc *recorder) see(ms []member) {
	for _, m := range ms {
		if m.id.PID() != rc.leader {
			rc.out.Detected = true
		}
	}
}

func (rc *recorder) signal(m member, sig unix.Signal) {
	key := m.id.String() + "/" + sig.String()
	if sig == unix.SIGTERM && rc.sent[key] {
		return // SIGTERM once per member; SIGKILL is repeated until it is gone
	}
	if !signalVerified(m.id, sig) {
		return
	}
	if rc.sent[key] {
		return
	}
	rc.sent[key] = true
	if m.id.PID() == rc.leader {
		return
	}
	if sig == unix.SIGTERM {
		rc.out.TermSent = append(rc.out.TermSent, m.id.PID())
	} else {
		rc.out.KillSent = append(rc.out.KillSent, m.id.PID())
	}
}

func (rc *recorder) pids(ms []member) []int {
	out := []int{}
	for _, m := range ms {
		out = append(out, m.id.PID())
	}
	return out
}

// Signal sends sig to id only if id still names the same live process (on
// Linux through a pidfd opened before the check, so pid reuse cannot
// redirect it). It reports whether the signal was sent.
func Signal(id procid.Identity, sig unix.Signal) bool { return signalVerified(id, sig) }
