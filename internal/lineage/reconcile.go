package lineage

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/procid"
)

// Reconcile stops every remaining member of the lineage with grace g and
// reports what it found (supervision.md, Reconciliation). It is meant for
// after the runner exited, or to stop a run; the runner itself is signalled
// too while alive but never listed in the outcome's pid lists.
func (r *Runner) Reconcile(grace time.Duration) Outcome {
	t := r.tr
	t.mu.Lock()
	defer t.mu.Unlock()
	out := EmptyOutcome()
	out.Checked = true
	start := time.Now()
	deadline := start.Add(budget(grace))
	termEnd := deadline.Add(-killPhase)
	rec := recorder{leader: t.leader.PID(), out: &out, sent: map[string]bool{}}

	var last []member
	fail := func(err error) Outcome {
		out.Error = err.Error()
		out.RemainingPIDs = rec.pids(last)
		return out
	}
	// SIGTERM phase: every member once, while members remain.
	for time.Now().Before(termEnd) {
		ms, err := t.refresh()
		if err != nil {
			return fail(err)
		}
		last = ms
		rec.see(ms)
		if len(ms) == 0 {
			break
		}
		for _, m := range ms {
			rec.signal(m, unix.SIGTERM)
		}
		sleepUntil(pollInterval, termEnd)
	}
	// SIGKILL phase: kill whatever is seen, until quiet for the quiescence
	// period. The quiet timer may finish within the scheduling margin past
	// the deadline, so a loaded host does not turn a stopped lineage into an
	// uncontained one; no member seen past the deadline is forgiven.
	quietSince := time.Now()
	for {
		ms, err := t.refresh()
		if err != nil {
			return fail(err)
		}
		last = ms
		rec.see(ms)
		now := time.Now()
		if len(ms) > 0 {
			for _, m := range ms {
				rec.signal(m, unix.SIGKILL)
			}
			quietSince = now
		} else if now.Sub(quietSince) >= quiescence {
			out.Quiescent = true
			break
		}
		if now.After(deadline) && (len(ms) > 0 || now.After(deadline.Add(schedulingMargin))) {
			break
		}
		time.Sleep(pollInterval)
	}
	if t.group != nil && t.group.populated() {
		// Something is in the runner's cgroup that no rule showed: the final
		// guarantee is the kernel killing the whole cgroup tree.
		out.Detected = true
		empty := t.group.kill(schedulingMargin)
		if ms, err := t.refresh(); err == nil { // also reaps what we inherited
			last = ms
		}
		out.Quiescent = empty && !t.group.populated()
	}
	if len(last) > 0 {
		out.Quiescent = false
	}
	out.RemainingPIDs = rec.pids(last)
	return out
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
